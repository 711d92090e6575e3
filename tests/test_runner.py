"""The run engine end to end, on tiny models trained in the test."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from copyaudit.engine.runner import RunRequest, execute_run
from copyaudit.errors import UserError
from copyaudit.judges.options import JudgeOptions
from db import Store
from db.case_file import run_record
from tests.conftest import write_jsonl
from tests.tinymodels import build_tiny_causal_lm, build_tokenizer, train_to_memorize

pytestmark = pytest.mark.slow  # make test-slow: trains tiny models and kills runs mid-way

MEMORIZED = (
    "The lighthouse keeper counted the ships every evening and wrote their names in a "
    "green ledger. When the fog rolled in from the north, he lit the great lamp and sang "
    "to the gulls until the harbour bells answered him across the dark water, and the "
    "fishermen of the town followed his light safely home to their waiting families."
)
OTHERS = [
    "A baker in the valley rose before dawn to knead bread for the whole village, and the "
    "smell of warm loaves drifted over the river while the miller's children still slept "
    "under their patched quilts, dreaming of the summer fair and its painted wooden horses.",
    "The old clockmaker repaired a silver watch for the mayor, who had dropped it on the "
    "cathedral steps during the winter parade, and in return the mayor promised him a seat "
    "at the spring banquet beside the famous violinist from the capital city.",
]


def _split(text: str, prefix_words: int = 22) -> tuple[str, str]:
    words = text.split()
    return " ".join(words[:prefix_words]), " ".join(words[prefix_words:])


@pytest.fixture(scope="module")
def memorizing_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("memorizer")
    tokenizer = build_tokenizer([MEMORIZED, *OTHERS], directory)
    build_tiny_causal_lm(directory, tokenizer)
    # The passage is memorized in the context it will be prompted in (the literal
    # template's instruction before it), as a web-trained model sees text in any context.
    from copyaudit.prompts import build_prompt

    instruction = build_prompt("literal", {"input": "x", "reference": "y"}, shots=0).text[:-1]
    train_to_memorize(directory, [instruction + MEMORIZED], steps=600, max_seconds=180)
    return directory


def _literal_suite(tmp_path: Path, cli) -> None:
    records = []
    for i, text in enumerate([MEMORIZED, *OTHERS]):
        prefix, reference = _split(text)
        records.append(
            {"id": f"p{i}", "title": "Harbour Tales", "input": prefix, "reference": reference}
        )
    assert (
        cli(
            "import", "literal", str(write_jsonl(tmp_path / "lit.jsonl", records)), "--suite", "lit"
        ).code
        == 0
    )


def _scores(db_path: Path, run: str, metric: str) -> dict[str, float]:
    with Store(db_path) as store:
        rows = store.query(
            "SELECT c.case_id, j.value FROM judgments j JOIN generations g ON g.id = "
            "j.generation_id JOIN cases c ON c.id = g.case_pk JOIN runs r ON r.id = g.run_id "
            "WHERE r.name = ? AND j.metric = ?",
            (run, metric),
        )
    return {r[0]: r[1] for r in rows}


@pytest.mark.slow
def test_memorized_passage_is_flagged_and_memfree_prevents_it(
    memorizing_model: Path, tmp_path: Path, cli, db_path: Path
) -> None:
    _literal_suite(tmp_path, cli)
    base = RunRequest(
        suite="lit",
        name="plain",
        model=str(memorizing_model),
        device="cpu",
        shots=0,
        judging=JudgeOptions("literal"),
        batch_size=4,
        chat=False,
    )
    events = []
    outcome = execute_run(db_path, base, on_progress=events.append)
    assert outcome.status == "done" and outcome.generated == 3 and outcome.failed == 0
    plain = _scores(db_path, "plain", "rougeL")
    assert plain["p0"] >= 0.8, plain
    assert plain["p1"] < 0.8 and plain["p2"] < 0.8, plain
    generate_events = [e for e in events if e.phase == "generate"]
    assert generate_events[-1].done == generate_events[-1].total == 3

    memfree = RunRequest(**{**base.__dict__, "name": "memfree", "mitigation": "memfree"})
    assert execute_run(db_path, memfree).status == "done"
    guarded = _scores(db_path, "memfree", "rougeL")
    assert guarded["p0"] < 0.8, guarded

    report = json.loads(cli("report", "plain", "--format", "json").out)
    assert report["n"] == 3 and report["literal_rate"] == pytest.approx(1 / 3)
    assert report["event_rate"] is None and report["qa_f1"] is None
    assert sum(report["histograms"]["rougeL"]["counts"]) == 3


def test_sigkill_midway_then_rerun_completes_once(tmp_path: Path, cli, db_path: Path) -> None:
    directory = tmp_path / "random-model"
    texts = [f"Case number {i} about a garden, a gate and a lantern." for i in range(12)]
    build_tiny_causal_lm(directory, build_tokenizer(texts, directory))
    records = [
        {"id": f"c{i}", "title": "Garden", "input": t, "reference": t} for i, t in enumerate(texts)
    ]
    assert (
        cli(
            "import", "literal", str(write_jsonl(tmp_path / "c.jsonl", records)), "--suite", "s"
        ).code
        == 0
    )
    command = [
        sys.executable,
        "-m",
        "copyaudit",
        "--db",
        str(db_path),
        "run",
        "s",
        "--name",
        "killed",
        "--model",
        str(directory),
        "--device",
        "cpu",
        "--batch-size",
        "1",
        "--templates",
        "1,2",
        "--judges",
        "literal",
        "--shots",
        "0",
        "--max-new-tokens",
        "12",
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)

    def generated() -> int:
        conn = sqlite3.connect(db_path, timeout=30)
        try:
            return conn.execute("SELECT COUNT(*) FROM generations").fetchone()[0]
        except sqlite3.OperationalError:
            return 0
        finally:
            conn.close()

    deadline = time.monotonic() + 120
    while generated() < 4 and time.monotonic() < deadline and first.poll() is None:
        time.sleep(0.05)
    assert first.poll() is None, "the run finished before it could be killed"
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=30)
    partial = generated()
    assert 4 <= partial < 24

    second = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert second.returncode == 0, second.stderr
    with Store(db_path) as store:
        keys = store.query(
            "SELECT case_pk, template, COUNT(*) FROM generations GROUP BY case_pk, template"
        )
        status = store.scalar("SELECT status FROM runs WHERE name = 'killed'")
        judged = store.scalar("SELECT COUNT(*) FROM judgments WHERE metric = 'rougeL'")
    assert len(keys) == 24 and all(row[2] == 1 for row in keys)
    assert status == "done" and judged == 24


def test_cancel_stops_between_batches(tmp_path: Path, cli, db_path: Path) -> None:
    import threading

    directory = tmp_path / "m"
    texts = [f"Short case {i} of the cancel test." for i in range(6)]
    build_tiny_causal_lm(directory, build_tokenizer(texts, directory))
    records = [
        {"id": f"c{i}", "title": "T", "input": t, "reference": t} for i, t in enumerate(texts)
    ]
    assert (
        cli(
            "import", "literal", str(write_jsonl(tmp_path / "c.jsonl", records)), "--suite", "s"
        ).code
        == 0
    )
    cancel = threading.Event()

    def stop_after_first(event) -> None:
        if event.phase == "generate" and event.done >= 2:
            cancel.set()

    request = RunRequest(
        suite="s",
        name="c",
        model=str(directory),
        device="cpu",
        shots=0,
        batch_size=2,
        judging=JudgeOptions("literal"),
        max_new_tokens=8,
    )
    outcome = execute_run(db_path, request, on_progress=stop_after_first, cancel=cancel)
    assert outcome.status == "cancelled" and outcome.generated == 2
    resumed = execute_run(db_path, request)
    assert resumed.status == "done" and resumed.generated == 4
    runs = json.loads(cli("runs", "--format", "json").out)
    assert runs[0]["generations"] == 6 and runs[0]["status"] == "done"
    # the token budget is part of the run's configuration: another one is another run
    with Store(db_path) as store:
        assert run_record(store, "c")["config"]["max_new_tokens"] == 8
    with pytest.raises(UserError, match="--max-new-tokens: 8 there, 16 here"):
        execute_run(db_path, replace(request, max_new_tokens=16))


def test_a_model_that_fails_to_load_is_stored_as_the_run_error(
    tmp_path: Path, cli, db_path: Path
) -> None:
    """Resuming a run whose model is gone: the unfinished run is marked failed with the
    reason (the app shows the same error as a notification), a later good resume clears
    it, and a finished run is left as it was."""
    import shutil
    import threading

    directory = tmp_path / "m"
    texts = [f"Case {i} of the load test." for i in range(2)]
    build_tiny_causal_lm(directory, build_tokenizer(texts, directory))
    records = [
        {"id": f"c{i}", "title": "T", "input": t, "reference": t} for i, t in enumerate(texts)
    ]
    path = write_jsonl(tmp_path / "c.jsonl", records)
    assert cli("import", "literal", str(path), "--suite", "s").code == 0
    request = RunRequest(
        suite="s", name="r", model=str(directory), device="cpu", shots=0,
        judging=JudgeOptions("literal"), max_new_tokens=4, batch_size=1,
    )  # fmt: skip
    cancel = threading.Event()

    def stop_after_one(event) -> None:
        if event.phase == "generate" and event.done >= 1:
            cancel.set()

    assert execute_run(db_path, request, on_progress=stop_after_one, cancel=cancel).status == (
        "cancelled"
    )
    moved = tmp_path / "moved"
    shutil.move(directory, moved)
    with pytest.raises(Exception) as raised:
        execute_run(db_path, request)
    runs = json.loads(cli("runs", "--format", "json").out)
    assert runs[0]["status"] == "failed"
    with Store(db_path) as store:
        error = store.scalar("SELECT error FROM runs WHERE name = 'r'")
    assert type(raised.value).__name__ in error and str(directory) in error
    shutil.move(moved, directory)
    assert execute_run(db_path, request).status == "done"
    with Store(db_path) as store:
        row = store.query("SELECT status, error FROM runs WHERE name = 'r'")[0]
    assert (row[0], row[1]) == ("done", None)
    # A finished run keeps its status when a later attempt under its name cannot load.
    shutil.move(directory, moved)
    with pytest.raises(type(raised.value)):
        execute_run(db_path, request)
    with Store(db_path) as store:
        assert store.scalar("SELECT status FROM runs WHERE name = 'r'") == "done"


def test_paper_judges_offline_on_imported_generations(tmp_path: Path, cli) -> None:
    from tests.factories import nonliteral_record, qa_record

    assert (
        cli(
            "import",
            "nonliteral",
            str(write_jsonl(tmp_path / "nl.jsonl", [nonliteral_record(1)])),
            "--suite",
            "nl",
        ).code
        == 0
    )
    assert (
        cli(
            "import", "qa", str(write_jsonl(tmp_path / "qa.jsonl", [qa_record(1)])), "--suite", "qa"
        ).code
        == 0
    )
    story = "Mira Vell planted a glass seed. Later Zoë laughed. Mira watched the orchard."
    cli(
        "import-generations",
        str(write_jsonl(tmp_path / "g1.jsonl", [{"case_id": "nl-1", "output": story}])),
        "--run",
        "stories",
        "--suite",
        "nl",
    )
    cli(
        "import-generations",
        str(
            write_jsonl(
                tmp_path / "g2.jsonl",
                [{"case_id": "qa-1", "output": "[Output_Start] Mira Vell [Output_End]"}],
            )
        ),
        "--run",
        "answers",
        "--suite",
        "qa",
    )
    result = cli("judge", "stories", "--judges", "paper")
    assert result.code == 0, result.err
    assert "skipped judge events" in result.err and "skipped judge fluency" in result.err
    report = json.loads(cli("report", "stories", "--format", "json").out)
    # Zoë is counted; Mira is named in the prompt and excluded: 1 character < 3.
    assert report["character_rate"] == 0.0 and report["event_rate"] is None
    assert cli("judge", "answers", "--judges", "paper").code == 0
    report = json.loads(cli("report", "answers", "--format", "json").out)
    assert report["qa_f1"] == 1.0 and report["n"] == 1
    for key in ("n", "literal_rate", "event_rate", "character_rate", "qa_f1", "fluency"):
        assert key in report


def test_notice_placement_and_mitigation_shape_the_prompts(
    tmp_path: Path, cli, db_path: Path
) -> None:
    """The notice study's variants from `copyaudit run`: the notice at the start and the
    keyword plus the repeated warning; the run's name and configuration say so, and the
    options are refused for other kinds of suite."""
    from copyaudit.engine.demo import samples_dir
    from copyaudit.prompts import COPYRIGHT_WARNING, WARNING_REPEATS

    samples = samples_dir() / "notice.jsonl"
    first = json.loads(samples.read_text(encoding="utf-8").splitlines()[0])
    directory = tmp_path / "m"
    build_tiny_causal_lm(directory, build_tokenizer([first["snippet"]], directory))
    assert cli("import", "notice", str(samples), "--suite", "notice").code == 0
    common = ["--model", str(directory), "--device", "cpu", "--limit", "1", "--plain"]
    common += ["--max-new-tokens", "4", "--judges", "refusal"]
    result = cli(
        "run", "notice", *common, "--notice-position", "start",
        "--notice-mitigation", "keyword+repeat_warning",
    )  # fmt: skip
    assert result.code == 0, result.err
    name = "notice-m-none-notice-start-keyword+repeat_warning"
    with Store(db_path) as store:
        prompt = store.scalar("SELECT prompt FROM generations")
        config = json.loads(store.scalar("SELECT config FROM runs WHERE name = ?", (name,)))
    assert prompt.startswith(first["notice"])  # the notice first, then the snippet
    assert prompt.index(first["snippet"]) > len(first["notice"])
    assert prompt.count(COPYRIGHT_WARNING) == WARNING_REPEATS
    assert "copyrighted" in prompt.split(first["snippet"])[1]  # the keyword, in the query
    assert config["notice_position"] == "start"
    assert config["notice_mitigation"] == "keyword+repeat_warning"

    plain = cli("run", "notice", *common, "--name", "plain")
    assert plain.code == 0, plain.err
    with Store(db_path) as store:
        prompt = store.scalar(
            "SELECT g.prompt FROM generations g JOIN runs r ON r.id = g.run_id "
            "WHERE r.name = 'plain'"
        )
        config = json.loads(store.scalar("SELECT config FROM runs WHERE name = 'plain'"))
    # The study's layout: snippet, notice, query; nothing about the options in the config.
    assert (
        prompt.index(first["snippet"])
        < prompt.index(first["notice"])
        < prompt.index(first["query"])
    )
    assert COPYRIGHT_WARNING not in prompt and "notice_position" not in config

    records = [{"id": "c0", "title": "T", "input": "a b c", "reference": "d e f"}]
    path = write_jsonl(tmp_path / "lit.jsonl", records)
    assert cli("import", "literal", str(path), "--suite", "lit").code == 0
    refused = cli("run", "lit", *common, "--notice-mitigation", "keyword")
    assert refused.code == 2 and "apply to notice suites" in refused.err


def test_dtype_option_reaches_the_model_and_its_provenance(
    tmp_path: Path, cli, db_path: Path
) -> None:
    """`--dtype` loads the local model in that precision (the run's stored provenance
    says which); `auto` is float32 on the CPU; an unknown precision is refused."""
    records = [{"id": "c0", "title": "T", "input": "a b c d", "reference": "e f g"}]
    path = write_jsonl(tmp_path / "lit.jsonl", records)
    directory = tmp_path / "m"
    build_tiny_causal_lm(directory, build_tokenizer(["a b c d e f g"], directory))
    assert cli("import", "literal", str(path), "--suite", "lit").code == 0
    common = ["--model", str(directory), "--device", "cpu", "--plain", "--judges", "literal"]
    common += ["--max-new-tokens", "2"]
    for name, extra, expected in (("half", ["--dtype", "bfloat16"], "bfloat16"),
                                  ("auto", [], "float32")):  # fmt: skip
        result = cli("run", "lit", *common, "--name", name, *extra)
        assert result.code == 0, result.err
        with Store(db_path) as store:
            config = json.loads(store.scalar("SELECT config FROM runs WHERE name = ?", (name,)))
        assert config["model"]["dtype"] == expected
    refused = cli("run", "lit", *common, "--dtype", "float8")
    assert refused.code == 2 and "float8" in refused.err

"""copyaudit as an inspect_ai scorer: a tiny finished eval (our own text) written as a
real .eval log by inspect's own writer, scored with
`copyaudit_scorer`; the values equal `copyaudit judge` on the same log imported with
`import-generations --from inspect` (which this also checks against inspect's own
writer). Skipped only when inspect_ai (the `inspect` extra) is not installed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

inspect_ai = pytest.importorskip("inspect_ai", reason="the inspect extra is not installed")

from inspect_ai import score  # noqa: E402
from inspect_ai.log import (  # noqa: E402
    EvalConfig,
    EvalDataset,
    EvalLog,
    EvalSample,
    EvalSpec,
    read_eval_log,
    write_eval_log,
)
from inspect_ai.model import ModelOutput  # noqa: E402

from copyaudit.integrations.inspect_scorer import copyaudit_scorer  # noqa: E402
from tests.conftest import write_jsonl  # noqa: E402
from tests.factories import literal_record  # noqa: E402

SAMPLES = [
    (
        "The lamp in the lighthouse burned low, and the keeper",
        " waited for the boat that never came to the island.",
    ),
    (
        "On the third night the ferry did not come, so the children",
        " walked the long road home by the shore.",
    ),
    (
        "Mrs. Penhallow counted the gulls that followed the boat past",
        " the breakwater and out to the open sea.",
    ),
]
ANSWERS = [
    " waited for the boat that never came to the island.",
    " went home across the fields.",
    "the breakwater and out to sea, where the gulls turned back.",
]


def _eval_log(log_dir: Path) -> Path:
    """A finished eval's log, written by inspect's own writer (no model is called: an
    eval would fetch a tokenizer from the network to count tokens)."""
    spec = EvalSpec(
        created="2026-11-28T06:00:00+00:00",
        task="book_continue",
        dataset=EvalDataset(name="ours", samples=len(SAMPLES)),
        model="mockllm/model",
        config=EvalConfig(),
    )
    samples = [
        EvalSample(
            id=f"s{i}",
            epoch=1,
            input=prompt,
            target=target,
            output=ModelOutput.from_content("mockllm/model", answer),
        )
        for i, ((prompt, target), answer) in enumerate(zip(SAMPLES, ANSWERS, strict=True))
    ]
    log_dir.mkdir(parents=True)
    path = log_dir / "2026-11-28T06-00-00+00-00_book-continue_x.eval"
    write_eval_log(EvalLog(eval=spec, status="success", samples=samples), str(path))
    return path


def test_the_scorer_equals_copyaudit_judge_on_the_same_log(cli, tmp_path: Path) -> None:
    path = _eval_log(tmp_path / "logs")
    scored = score(read_eval_log(str(path)), scorers=[copyaudit_scorer()])
    by_sample = {s.id: s.scores["copyaudit_scorer"].value for s in scored.samples}
    assert cli("import-generations", "--from", "inspect", str(path), "--suite", "i").code == 0
    run = next(r["name"] for r in json.loads(cli("runs", "--format", "json").out))
    judged = cli("judge", run, "--judges", "extraction,literal,verbatim")
    assert judged.code == 0, judged.err
    rows = [json.loads(x) for x in cli("export", "judgments", "--run", run).out.splitlines()]
    compared = 0
    for row in rows:
        sample = row["generation"].split("/")[1]
        if row["value"] is not None and row["metric"] in by_sample[sample]:
            assert by_sample[sample][row["metric"]] == pytest.approx(row["value"], abs=1e-12)
            compared += 1
    # the literal judge is CopyBench's: `copyaudit judge` applies it to literal cases
    cases = [
        literal_record(i, id=f"s{i}", input=p, reference=t) for i, (p, t) in enumerate(SAMPLES)
    ]
    gens = [{"case_id": f"s{i}", "output": a} for i, a in enumerate(ANSWERS)]
    assert cli("import", "literal", str(write_jsonl(tmp_path / "lit.jsonl", cases))).code == 0
    args = ("--run", "lit", "--suite", "lit")
    assert cli("import-generations", str(write_jsonl(tmp_path / "g.jsonl", gens)), *args).code == 0
    assert cli("judge", "lit", "--judges", "literal").code == 0
    for line in cli("export", "judgments", "--run", "lit").out.splitlines():
        row = json.loads(line)
        sample = row["generation"].split("/")[1]
        assert by_sample[sample][row["metric"]] == pytest.approx(row["value"], abs=1e-12)
        compared += 1
    names = {m for values in by_sample.values() for m in values}
    assert {"lcp_tokens", "edit_similarity", "rougeL", "longest_verbatim_chars"} <= names
    assert compared == sum(len(v) for v in by_sample.values())  # every scorer value compared
    metrics = {m.name for s in scored.results.scores for m in s.metrics.values()}
    assert {"mean", "stderr"} <= metrics


def test_an_unknown_judge_is_refused_when_the_scorer_is_made() -> None:
    with pytest.raises(ValueError, match="unknown copyaudit judge"):
        copyaudit_scorer(judges=["events"])

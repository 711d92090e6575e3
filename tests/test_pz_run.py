"""`import extraction WORK.txt --stride` and `copyaudit pz`: windows cut in the model's
tokenizer, scored, stored, resumed after a cancel, refused with another tokenizer."""

from __future__ import annotations

import json
import math
import threading
from pathlib import Path
from typing import Any

import pytest

from copyaudit.engine.pz_run import PzRequest, execute_pz
from copyaudit.models.hf_loading import load_causal_lm
from copyaudit.models.pz import DecodingScheme
from copyaudit.models.pz_scoring import PzScorer, TokenWindow
from db import Store
from tests.process_cache import scratch_folder
from tests.tinymodels import (
    PASSAGE_LIGHTHOUSE,
    PASSAGE_ORCHARD,
    build_tiny_causal_lm,
    build_tokenizer,
)

pytestmark = pytest.mark.slow  # make test-slow: trains a tiny memorising model

SCHEMES = "greedy,topk,sampling"


def _tiny(texts: list[str], vocab: int) -> Path:
    folder = scratch_folder("pz-run")
    build_tiny_causal_lm(folder, build_tokenizer(texts, folder, vocab_size=vocab))
    return folder


@pytest.fixture(scope="module")
def model_dir() -> Path:
    return _tiny([PASSAGE_LIGHTHOUSE, PASSAGE_ORCHARD], 600)


@pytest.fixture
def imported(cli: Any, db_path: Path, tmp_path: Path, model_dir: Path) -> int:
    folder = tmp_path / "works"
    folder.mkdir()
    (folder / "lighthouse.txt").write_text(PASSAGE_LIGHTHOUSE, encoding="utf-8")
    (folder / "orchard.txt").write_text(PASSAGE_ORCHARD, encoding="utf-8")
    result = cli(
        "import", "extraction", str(folder), "--suite", "works", "--prefix-tokens", "20",
        "--continuation-tokens", "10", "--stride", "6", "--tokenizer", str(model_dir),
    )  # fmt: skip
    assert result.code == 0, result.err
    with Store(db_path) as store:
        return int(store.conn.execute("SELECT COUNT(*) FROM cases").fetchone()[0])


def _judgments(db_path: Path, run: str) -> dict[tuple[str, str, str], Any]:
    with Store(db_path) as store:
        rows = store.conn.execute(
            "SELECT c.case_id, j.judge, j.metric, j.value, j.evidence, c.payload "
            "FROM judgments j JOIN generations g ON g.id = j.generation_id "
            "JOIN cases c ON c.id = g.case_pk JOIN runs r ON r.id = g.run_id WHERE r.name = ?",
            (run,),
        ).fetchall()
    return {(r[0], r[1], r[2]): (r[3], json.loads(r[4]), json.loads(r[5])) for r in rows}


def test_windows_are_scored_and_stored(
    cli: Any, db_path: Path, model_dir: Path, imported: int
) -> None:
    result = cli(
        "pz", "works", "--model", str(model_dir), "--device", "cpu", "--schemes", SCHEMES,
        "--name", "r", "--format", "json",
    )  # fmt: skip
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert set(report["pz"]) == {"pz_greedy", "pz_top40_t1", "pz_sampling_t1"}
    assert report["pz"]["pz_top40_t1"]["windows"] == imported
    stored = _judgments(db_path, "r")
    # three judgments per scheme, and the finding "sampling extracts, greedy does not"
    assert len(stored) == imported * 3 * 3 + imported
    loaded = load_causal_lm(str(model_dir), device="cpu", dtype="float32")
    sampling = DecodingScheme("sampling")
    for (case_id, judge, metric), (value, evidence, payload) in stored.items():
        if (judge, metric) != ("pz_sampling_t1", "log_pz"):
            continue
        window = payload["window"]
        alone = PzScorer(loaded).score(
            [TokenWindow(tuple(window["prefix_ids"]), tuple(window["suffix_ids"]))], [sampling]
        )[0]
        assert value == pytest.approx(alone.log_pz[sampling.label], abs=1e-4), case_id
        assert len(evidence["extra"]["token_log_probs"]) == 10
        pz = stored[(case_id, judge, "pz")][0]
        assert pz == pytest.approx(math.exp(value))
    # a random model rarely gives every token greedily: p_z = 0 is stored as NULL + inf
    zeros = [k for k, v in stored.items() if k[1:] == ("pz_greedy", "pz") and v[0] == 0.0]
    assert zeros
    case_id = zeros[0][0]
    assert stored[(case_id, "pz_greedy", "log_pz")][0] is None
    assert stored[(case_id, "pz_greedy", "n_for_p")][1]["extra"]["infinite"] == "inf"
    _figures_match(report["pz"]["pz_sampling_t1"], stored, "pz_sampling_t1")
    _map_matches(report["map"]["pz_sampling_t1"], stored, "pz_sampling_t1")
    for command in (("report", "r", "--format", "json"), ("compare", "r", "--format", "json")):
        shown = cli(*command)
        assert shown.code == 0, shown.err
        figures = json.loads(shown.out)["pz"]
        assert (figures if command[0] == "report" else figures[0]["pz"]) == report["pz"]


def _map_matches(works: dict[str, Any], stored: dict[Any, Any], judge: str) -> None:
    """Each strip cell holds the highest p_z of the windows starting in it."""
    from copyaudit.reports.pz import MAP_WIDTH, map_strip

    expected: dict[str, list[Any]] = {}
    for (_, name, metric), (value, _, payload) in stored.items():
        if (name, metric) != (judge, "pz"):
            continue
        window = payload["window"]
        title = _title_of(payload)
        cells = expected.setdefault(title, [None] * MAP_WIDTH)
        cell = window["chars"][0] * MAP_WIDTH // window["work_chars"]
        cells[cell] = value if cells[cell] is None else max(cells[cell], value)
    assert works == expected
    assert set(works) == {"lighthouse", "orchard"}
    strip = map_strip(works["lighthouse"])
    assert len(strip) == MAP_WIDTH and strip[0] != " "


def _title_of(payload: dict[str, Any]) -> str:
    """The work of a window: its text is in one of the two passages."""
    return "lighthouse" if payload["prefix"] in PASSAGE_LIGHTHOUSE else "orchard"


def _figures_match(figures: dict[str, Any], stored: dict[Any, Any], judge: str) -> None:
    """The report's figures, recomputed here from the stored judgments."""
    pz = [v[0] for k, v in stored.items() if k[1:] == (judge, "pz")]
    logs = [v[0] for k, v in stored.items() if k[1:] == (judge, "log_pz") and v[0] is not None]
    for threshold in ("0.5", "0.1", "0.01"):
        share = sum(v >= float(threshold) for v in pz) / len(pz)
        assert figures["share_at_least"][threshold] == pytest.approx(share)
    assert figures["mean_log_pz"] == pytest.approx(sum(logs) / len(logs))
    greedy = [v[0] for k, v in stored.items() if k[1:] == ("pz_greedy", "pz")]
    assert figures["greedy_rate"] == pytest.approx(sum(v == 1.0 for v in greedy) / len(greedy))
    tries = [v[0] for k, v in stored.items() if k[1:] == (judge, "n_for_p")]
    disc = sum(n is not None and n <= 10 for n in tries) / len(tries)
    assert figures["discoverable"]["10"] == pytest.approx(disc)


def test_a_cancelled_run_resumes_without_duplicates(
    db_path: Path, model_dir: Path, imported: int
) -> None:
    cancel = threading.Event()
    request = PzRequest(suite="works", name="c", model=str(model_dir), device="cpu", batch_size=2)

    def stop_after_first_batch(progress: Any) -> None:
        if progress.done > 0:
            cancel.set()

    first = execute_pz(db_path, request, on_progress=stop_after_first_batch, cancel=cancel)
    assert first.status == "cancelled" and 0 < first.scored < imported
    second = execute_pz(db_path, request)
    assert second.status == "done"
    assert second.already_scored == first.scored
    assert first.scored + second.scored == imported
    assert len(_judgments(db_path, "c")) == imported * 2 * 3 + imported  # + the finding


def test_windows_cut_with_another_tokenizer_are_refused(
    cli: Any, model_dir: Path, imported: int
) -> None:
    other = _tiny([PASSAGE_ORCHARD], 400)
    result = cli("pz", "works", "--model", str(other), "--device", "cpu", "--name", "o")
    assert result.code != 0
    assert "cut with the tokenizer of" in result.err


def test_stride_needs_a_prefix_and_a_work_long_enough(
    cli: Any, db_path: Path, tmp_path: Path, model_dir: Path
) -> None:
    work = tmp_path / "short.txt"
    work.write_text("The keeper wrote.", encoding="utf-8")
    result = cli("import", "extraction", str(work), "--stride", "2")
    assert result.code != 0 and "--stride needs --prefix-tokens" in result.err
    result = cli(
        "import", "extraction", str(work), "--prefix-tokens", "20", "--stride", "2",
        "--tokenizer", str(model_dir),
    )  # fmt: skip
    assert result.code != 0 and "short.txt: shorter than one window of 70 tokens" in result.err
    with Store(db_path) as store:
        assert store.conn.execute("SELECT COUNT(*) FROM cases").fetchone()[0] == 0


def test_hand_cut_cases_are_scored_from_their_strings(
    cli: Any, db_path: Path, model_dir: Path
) -> None:
    samples = Path(__file__).resolve().parent.parent / "samples" / "extraction.jsonl"
    assert cli("import", "extraction", str(samples), "--suite", "cut").code == 0
    outcome = execute_pz(
        db_path,
        PzRequest(suite="cut", name="h", model=str(model_dir), device="cpu", limit=3),
    )
    assert outcome.status == "done" and outcome.scored == 3
    stored = _judgments(db_path, "h")
    loaded = load_causal_lm(str(model_dir), device="cpu", dtype="float32")
    topk = DecodingScheme("topk", top_k=40)
    for (case_id, judge, metric), (value, _, payload) in stored.items():
        if (judge, metric) != ("pz_top40_t1", "pz"):
            continue
        encode = loaded.tokenizer.encode
        window = TokenWindow(
            tuple(encode(payload["prefix"], add_special_tokens=False)),
            tuple(encode(payload["reference"], add_special_tokens=False)),
        )
        alone = PzScorer(loaded).score([window], [topk])[0].log_pz[topk.label]
        assert value == pytest.approx(math.exp(alone) if alone > -math.inf else 0.0), case_id

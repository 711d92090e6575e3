"""The embedded default model end to end: a run over the bundled notice samples with
SmolLM2-135M (the model `make demo` uses), judged offline, produces the notice report.

The only test that loads SmolLM2: it converts the packaged GGUF into a fresh cache (as
on a new machine), generates short answers for one snippet's four tasks and checks the
report's shape and figures, not the model's quality (a 135M model barely follows the
instructions; the full 60-case run is in the README's figures)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copyaudit.engine.demo import samples_dir

TASKS = ("repeat", "extract", "paraphrase", "translate")


@pytest.mark.slow
def test_notice_samples_with_the_embedded_model_give_the_report(
    cli, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COPYAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    samples = samples_dir() / "notice.jsonl"
    assert cli("import", "notice", str(samples), "--suite", "notice").code == 0
    result = cli(
        "run", "notice", "--model", "default", "--device", "cpu", "--limit", "4",
        "--max-new-tokens", "24", "--name", "embedded",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert "Copyright-notice compliance" in result.out  # the report, printed at the end
    assert (tmp_path / "cache").exists()  # the GGUF was converted and cached

    report = json.loads(cli("report", "embedded", "--format", "json").out)
    assert report["model"] == "default" and report["n"] == 4 and report["failed"] == 0
    notice = report["notice"]
    assert set(notice["table"]) == set(TASKS)
    for task in TASKS:
        row = notice["table"][task]["all"]
        assert row["n"] == 1 and row["refusal_n"] == 1 and row["refusal_rate"] in (0.0, 1.0)
    for task, metrics in (
        ("repeat", ("notice_rouge1", "notice_rouge2", "notice_rougeL", "notice_lcs_ratio")),
        ("extract", ("notice_rouge1", "notice_lcs_ratio")),
        ("paraphrase", ("notice_bertscore",)),
    ):
        figures = notice["table"][task]["all"]["metrics"]
        for metric in metrics:
            assert 0.0 <= figures[metric]["mean"] <= 1.0, (task, metric, figures)
    # No multilingual model is installed: the translate similarity says so, no number.
    assert notice["not_computed"]["notice_xling_cosine"]["count"] == 1
    assert "multilingual" in notice["not_computed"]["notice_xling_cosine"]["reasons"][0]
    runs = json.loads(cli("runs", "--format", "json").out)
    assert [r["status"] for r in runs if r["name"] == "embedded"] == ["done"]

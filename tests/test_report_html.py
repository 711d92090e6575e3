"""`copyaudit report RUN --format html`: build_report's tables and one embedded
histogram image per metric with its threshold line; self-contained and escaped."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

from copyaudit.reports.run_report_html import histogram_png
from db import Store
from tests.conftest import write_jsonl
from tests.label_fixtures import LITERAL_JUDGE, judge, literal_score, make_run

KEYS = [f"r/lit-{i}/1" for i in range(1, 5)]
IMAGE = re.compile(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)" alt="([^"]*)"')


@pytest.fixture
def literal_run(tmp_path: Path, cli, db_path: Path) -> Path:
    make_run(cli, tmp_path, "literal", [f"lit-{i}" for i in range(1, 5)])
    with Store(db_path) as store:
        scores = map(literal_score, [0.95, 0.85, 0.55, 0.35])
        judge(store, LITERAL_JUDGE, dict(zip(KEYS, scores, strict=True)))
    return db_path


def _red_pixels(png: bytes) -> int:
    """Pixels of the threshold line's colour (#c0392b)."""
    rgb = imread(io.BytesIO(png))[..., :3]
    target = np.array([0xC0, 0x39, 0x2B]) / 255
    return int((np.abs(rgb - target).max(axis=-1) < 0.08).sum())


def test_html_report_embeds_a_histogram_per_metric(literal_run: Path, tmp_path: Path, cli) -> None:
    report = json.loads(cli("report", "r", "--format", "json").out)
    out = tmp_path / "report.html"
    result = cli("report", "r", "--format", "html", "-o", str(out))
    assert result.code == 0, result.err
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert "<td>50.0%</td>" in html  # build_report's literal rate: 2 of 4 flagged
    images = IMAGE.findall(html)
    assert sorted(alt.split(":")[0] for _, alt in images) == sorted(report["histograms"])
    for data, _ in images:
        assert base64.b64decode(data).startswith(b"\x89PNG\r\n\x1a\n")
    assert "rougeL: 4 judged; threshold 0.8" in html
    # The bins shown are the report's: one generation in each of four bins.
    hist = report["histograms"]["rougeL"]
    assert hist["counts"] == [0, 0, 0, 1, 0, 1, 0, 0, 1, 1]
    assert "[0.9, 1): 1" in html and "[0.3, 0.4): 1" in html
    # Self-contained: no external resource, no script.
    assert not re.search(r'(src|href)="(?!data:)', html) and "<script" not in html


def test_threshold_line_is_drawn() -> None:
    edges, counts = [i / 10 for i in range(11)], [0, 0, 0, 1, 0, 1, 0, 0, 1, 1]
    assert _red_pixels(histogram_png("rougeL", edges, counts, [0.8])) > 50
    assert _red_pixels(histogram_png("rougeL", edges, counts, [])) == 0


def test_html_report_to_stdout_and_escaped(tmp_path: Path, cli, db_path: Path) -> None:
    make_run(cli, tmp_path, "literal", ["lit-1"])
    gens = write_jsonl(tmp_path / "g.jsonl", [{"case_id": "lit-1", "output": "x"}])
    imported = cli(
        "import-generations",
        str(gens),
        "--run",
        "m",
        "--suite",
        "literal-suite",
        "--model",
        "<b>evil</b>",
    )
    assert imported.code == 0, imported.err
    assert cli("judge", "m", "--judges", "literal").code == 0
    result = cli("report", "m", "--format", "html")
    assert result.code == 0 and result.out.startswith("<!DOCTYPE html>")
    assert "<b>evil</b>" not in result.out and "&lt;b&gt;evil&lt;/b&gt;" in result.out
    assert len(IMAGE.findall(result.out)) == 3  # rougeL, rouge1, lcs_tokens


def test_unknown_run_is_a_clear_error(literal_run: Path, cli) -> None:
    result = cli("report", "nope", "--format", "html")
    assert result.code == 2 and "no run named 'nope'" in result.err


def test_a_metric_without_values_says_not_computed_instead_of_an_empty_histogram() -> None:
    from copyaudit.reports.run_report import report_markdown, summarize_scores
    from copyaudit.reports.run_report_html import _histograms
    from copyaudit.reports.scores import scores_from_rows

    rows = [
        {"metric": "notice_xling_cosine", "value": None, "flagged": None, "template": 1},
        {"metric": "notice_xling_cosine", "value": None, "flagged": None, "template": 1},
        {"metric": "rougeL", "value": 0.9, "flagged": 1, "template": 1},
        {"metric": "rougeL", "value": None, "flagged": None, "template": 1},
    ]
    summary = summarize_scores(scores_from_rows(rows))
    assert summary["no_value"] == {"notice_xling_cosine": 2, "rougeL": 1}
    report = {"run": "r", "suite": "s", "kind": "notice", "model": "m", "status": "done"}
    report |= {"n": 2, "failed": 0, **summary}
    markdown = report_markdown(report)
    assert "### notice_xling_cosine (2 judged, none with a value (not computed))" in markdown
    assert "### rougeL (2 judged, 1 without a value)" in markdown
    section = markdown.split("### notice_xling_cosine")[1].split("###")[0]
    assert "```" not in section  # no histogram of zeros
    html = _histograms(report, {})
    assert html.count("<img") == 1 and "notice_xling_cosine: 2 judged, none with" in html


def test_html_report_states_provenance_and_integrity(
    literal_run: Path, tmp_path: Path, cli
) -> None:
    """Where every number came from: the run's model and configuration, each judge
    configuration with its hash, and the database hash and chain heads at export."""
    from copyaudit.hashing import file_sha256
    from db.events import append_review, chain_heads

    with Store(literal_run) as store:
        generation_id = int(store.scalar("SELECT MIN(id) FROM generations"))
        append_review(store, generation_id=generation_id, reviewer="rev", status="escalated")
        judge_hash = store.scalar("SELECT DISTINCT judge_hash FROM judgments")
        heads = chain_heads(store)
    out = tmp_path / "report.html"
    assert cli("report", "r", "--format", "html", "--file-hash", "-o", str(out)).code == 0
    html = out.read_text(encoding="utf-8")
    provenance = html.split("<h2>Provenance</h2>")[1].split("<h2>Integrity</h2>")[0]
    for field in ("backend", "model revision", "decoding", "run config hash", "status"):
        assert f"<th>{field}</th>" in provenance
    assert "<td>imported</td>" in provenance  # the backend of imported generations
    judges = provenance.split("<h3>Judges</h3>")[1]
    assert f"<code>{judge_hash}</code></td><td>rougeL</td><td>4</td>" in judges
    assert "&quot;threshold&quot;: 0.8" in judges  # the judge's configuration
    integrity = html.split("<h2>Integrity</h2>")[1]
    assert file_sha256(literal_run) in integrity  # nothing was written after the export
    assert len(heads) == 1 and all(h in integrity for h in heads.values())
    assert "all chains intact" in integrity


def test_the_database_file_is_hashed_only_when_asked(
    literal_run: Path, tmp_path: Path, cli
) -> None:
    """Hashing reads the whole file (1.3 s at 2 GB): the run report's Integrity section
    says it was not computed unless --file-hash, and keeps the chain heads and anchor."""
    from copyaudit.hashing import file_sha256
    from db.events import append_review, chain_heads

    with Store(literal_run) as store:
        generation_id = int(store.scalar("SELECT MIN(id) FROM generations"))
        append_review(store, generation_id=generation_id, reviewer="rev", status="escalated")
        heads = chain_heads(store)
    out = tmp_path / "report.html"
    assert cli("report", "r", "--format", "html", "-o", str(out)).code == 0
    integrity = out.read_text(encoding="utf-8").split("<h2>Integrity</h2>")[1]
    assert file_sha256(literal_run) not in integrity
    assert "not computed (<code>--file-hash</code> adds it)" in integrity
    assert heads and all(h in integrity for h in heads.values())
    refused = cli("report", "r", "--format", "md", "--file-hash")
    assert refused.code == 2 and "--file-hash is for --format html" in refused.err


def test_study_sections_render_as_html_and_keep_names_as_text() -> None:
    """The Markdown a report writes becomes HTML (a table, not '|---|' inside <pre>);
    markup in a name stays text."""
    from copyaudit.render.html import markdown_html

    source = "## Longest verbatim run <b>x</b>\n\n| run | rate |\n|---|---|\n| a<script> | 1 |\n"
    html = markdown_html(source)
    assert "<table>" in html and "<td>1</td>" in html and "|---|" not in html
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html

"""`copyaudit compare`: every cell is the figure of its run's own `report --format json`
(with the n of the same population), an empty cell says why, and the four formats."""

from __future__ import annotations

import csv
import io
import json
import re
from html import escape
from pathlib import Path

import pytest

from copyaudit.intervals import mean_interval, wilson
from copyaudit.reports.compare.build import _path, dig
from copyaudit.reports.compare.declared import comparisons
from copyaudit.studies.notice.metrics import NO_MULTILINGUAL_MODEL
from tests.compare_fixtures import MISSING_WEIGHTS, MODEL, SECOND, THIRD, build_two_model_db

TABLES = {t.study: t for t in comparisons()}


@pytest.fixture(scope="module")
def two_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_two_model_db(tmp_path_factory.mktemp("compare") / "two.db")


def _json(cli, db: Path, *args: str) -> dict:
    result = cli(*args, db=db)
    assert result.code == 0, result.err
    return json.loads(result.out)


def _rows(comparison: dict, study: str) -> dict:
    block = next(b for b in comparison["tables"] if b["study"] == study)
    return {tuple(r["group"].values()): r["cells"] for r in block["rows"]}


@pytest.mark.parametrize("by", ["model", "notice-level"])
def test_every_cell_is_its_run_report_figure(two_models: Path, cli, by: str) -> None:
    comparison = _json(cli, two_models, "compare", "--by", by, "--format", "json")
    reports: dict[str, dict] = {}
    checked = flagged = 0
    for block in comparison["tables"]:
        table = TABLES[block["study"]]
        columns = {c.key: c for c in table.columns}
        for row in block["rows"]:
            part = row["group"].get(table.part_name) if table.part_name else None
            segments = table.parts[part] if part else ("all",) if table.parts else ()
            for key, cell in row["cells"].items():
                if cell["run"] is None:
                    continue
                if cell["run"] not in reports:
                    reports[cell["run"]] = _json(
                        cli, two_models, "report", cell["run"], "--format", "json"
                    )
                report = reports[cell["run"]]
                column = columns[key]
                assert cell["value"] == dig(report, _path(column.figure, segments))
                if cell["value"] is None:
                    continue
                checked += 1
                if block["study"] == "notice":  # n: the report cell's own count
                    where = _path(("notice", "table", column.where["task"], "{part}"), segments)
                    report_cell = dig(report, where)
                    expected_n = (
                        report_cell["refusal_n"]
                        if column.metric == "refusal"
                        else report_cell["metrics"][column.metric]["n"]
                    )
                    assert cell["n"] == expected_n
                elif block["study"] in ("copybench", "extraction"):
                    assert cell["n"] == report["judged"][column.metric]
                    low, high = cell["interval"]
                    assert low <= cell["value"] <= high
                else:  # DE-COP: works evaluated, the report's bootstrap interval
                    assert block["study"] == "decop"
                    assert cell["n"] == len(report["decop"]["per_work"])
                    if column.key == "decop_auc":
                        assert cell["interval"] == report["decop"]["auc_ci"]
                    if column.key == "blind_auc":
                        assert cell["interval"] == report["decop"]["blind_baseline"]["ci"]
                    # a flagged AUC carries the report's own reason (the blind baseline)
                    assert cell.get("flag") == (dig(report, column.flag) if column.flag else None)
                    flagged += bool(cell.get("flag"))
    assert checked >= (15 if by == "model" else 30)
    assert flagged  # the demo suite's classics and new works differ by their words alone
    assert {r for r in reports} >= {"second-literal", "demo-notice", "decop-demo"}


def test_two_models_differ_and_empty_cells_say_why(two_models: Path, cli) -> None:
    rows = _rows(_json(cli, two_models, "compare", "--format", "json"), "copybench")
    assert set(rows) == {(MODEL,), (SECOND,), (THIRD,)}  # "tiny" has DE-COP runs only
    first, second = rows[(MODEL,)], rows[(SECOND,)]
    assert first["literal"]["run"] == "demo-literal"
    assert second["literal"]["run"] == "second-literal"
    assert second["literal"]["value"] < first["literal"]["value"]  # half its outputs cut
    # a judge that was not run, a model whose weights are missing, no run of the kind
    assert first["fluency_literal"]["reason"].startswith("judge skipped: the fluency grader")
    assert rows[(THIRD,)]["literal"]["reason"] == f"run failed: {MISSING_WEIGHTS}"
    assert rows[(THIRD,)]["qa_f1"]["reason"] == "no qa run"
    assert rows[(THIRD,)]["events"] == {"value": None, "reason": "no nonliteral run", "run": None}
    decop = _rows(_json(cli, two_models, "compare", "--format", "json"), "decop")
    assert decop[("tiny",)]["decop_auc"]["value"] is not None
    assert decop[("tiny",)]["perplexity_auc"]["reason"] == "no baseline scores stored"
    notice = _rows(_json(cli, two_models, "compare", "--format", "json"), "notice")
    assert set(notice) == {(MODEL,)}  # a table's rows: the models with a run of its kinds
    # every empty cell has a reason
    comparison = _json(cli, two_models, "compare", "--format", "json")
    for block in comparison["tables"]:
        for row in block["rows"]:
            for cell in row["cells"].values():
                assert cell["value"] is not None or cell["reason"]


def test_not_computed_cell_gives_the_stored_reason(two_models: Path, cli) -> None:
    """The notice judge without a multilingual model stores no translate similarity and
    the reason; the cell repeats that reason."""
    rows = _rows(_json(cli, two_models, "compare", "demo-notice", "--format", "json"), "notice")
    cell = rows[(MODEL,)]["translate_notice_xling_cosine"]
    assert cell["value"] is None and cell["run"] == "demo-notice"
    assert cell["reason"] == f"not computed: {NO_MULTILINGUAL_MODEL}"


def test_selection_by_run_and_model(two_models: Path, cli) -> None:
    only = _json(cli, two_models, "compare", "second-literal", "second-qa", "--format", "json")
    assert only["runs"] == ["second-literal", "second-qa"]
    assert [b["study"] for b in only["tables"]] == ["copybench"]
    assert any("DE-COP" in s for s in only["not_shown"])
    rows = _rows(only, "copybench")
    assert rows[(SECOND,)]["events"]["reason"] == "no nonliteral run"
    by_model = _json(cli, two_models, "compare", "--model", "tiny", "--format", "json")
    assert [b["study"] for b in by_model["tables"]] == ["decop"]
    unknown = cli("compare", "no-such-run", db=two_models)
    assert unknown.code == 2 and "unknown run(s): no-such-run" in unknown.err
    absent = cli("compare", "--model", "nobody", db=two_models)
    assert absent.code == 2 and "no run of model(s): nobody" in absent.err


def test_by_mitigation_keys_rows_by_model_and_mitigation(two_models: Path, cli) -> None:
    comparison = _json(cli, two_models, "compare", "--by", "mitigation", "--format", "json")
    rows = _rows(comparison, "copybench")
    assert (SECOND, "none") in rows and rows[(SECOND, "none")]["literal"]["run"] == "second-literal"


def test_markdown_and_csv(two_models: Path, cli) -> None:
    md = cli("compare", db=two_models)
    assert md.code == 0, md.err
    assert "## CopyBench (CopyBench Table 2)" in md.out
    assert "## DE-COP (DE-COP Tables 1-2)" in md.out
    line = next(x for x in md.out.splitlines() if x.startswith(f"| {SECOND} |"))
    assert re.search(r"\| \d+\.\d% \[\d+\.\d–\d+\.\d\] n=\d+ \|", line)
    assert "second-literal, second-nonliteral, second-qa |" in line
    assert "— |" not in md.out  # never a bare dash
    text = cli("compare", "--format", "csv", db=two_models)
    records = list(csv.DictReader(io.StringIO(text.out)))
    comparison = _json(cli, two_models, "compare", "--format", "json")
    cells = sum(len(b["rows"]) * len(b["columns"]) for b in comparison["tables"])
    assert len(records) == cells
    literal = next(r for r in records if r["group"] == SECOND and r["column"] == "literal")
    expected = _rows(comparison, "copybench")[(SECOND,)]["literal"]
    assert float(literal["value"]) == expected["value"] and literal["run"] == "second-literal"
    failed = next(r for r in records if r["group"] == THIRD and r["column"] == "literal")
    assert failed["value"] == "" and failed["reason"] == f"run failed: {MISSING_WEIGHTS}"
    decop = next(r for r in records if r["group"] == "tiny" and r["column"] == "decop_auc")
    assert decop["flag"] == _rows(comparison, "decop")[("tiny",)]["decop_auc"]["flag"]
    assert "⚑ tiny · DE-COP AUC: the passages alone separate" in md.out


def test_the_refusal_rate_of_each_run_is_a_column_in_every_format(
    two_models: Path, cli, tmp_path: Path
) -> None:
    """A headline of every kind (the refusal rate): one column per generation kind of a
    table, its cell the run report's refusal_rate, in JSON, Markdown, CSV and HTML."""
    comparison = _json(cli, two_models, "compare", "--format", "json")
    keys = {b["study"]: [c["key"] for c in b["columns"]] for b in comparison["tables"]}
    assert keys["copybench"][-3:] == [f"refusal_rate_{k}" for k in ("literal", "nonliteral", "qa")]
    assert not any(k.startswith("refusal_rate") for k in keys["decop"] + keys["notice"])
    cell = _rows(comparison, "copybench")[(SECOND,)]["refusal_rate_literal"]
    report = _json(cli, two_models, "report", "second-literal", "--format", "json")
    assert cell["value"] is not None and cell["value"] == report["refusal_rate"]
    assert cell["run"] == "second-literal"
    assert cell["n"] == report["judged"]["refusal"]
    md = cli("compare", db=two_models).out
    section = md.split("## CopyBench (CopyBench Table 2)")[1].split("\n## ")[0]
    assert "| refusal % (literal) | refusal % (nonliteral) | refusal % (qa) | runs |" in section
    records = csv.DictReader(io.StringIO(cli("compare", "--format", "csv", db=two_models).out))
    row = next(r for r in records if r["group"] == SECOND and r["column"] == "refusal_rate_qa")
    assert row["label"] == "refusal % (qa)" and row["run"] == "second-qa"
    out = tmp_path / "compare.html"
    assert cli("compare", "--format", "html", "-o", str(out), db=two_models).code == 0
    assert "refusal % (nonliteral)" in out.read_text(encoding="utf-8")


def test_each_distinct_empty_cell_reason_is_written_once_as_a_footnote(
    two_models: Path, cli, tmp_path: Path
) -> None:
    """A table's empty cells say n/a with a footnote number; the reasons are listed
    once each below the table, in the Markdown and the HTML."""
    from copyaudit.reports.compare.render import SUPERSCRIPT

    comparison = _json(cli, two_models, "compare", "--format", "json")
    block = next(b for b in comparison["tables"] if b["study"] == "copybench")
    reasons = [
        c["reason"] for r in block["rows"] for c in r["cells"].values() if c["value"] is None
    ]
    distinct = list(dict.fromkeys(reasons))
    assert len(reasons) > len(distinct) >= 3  # some reasons repeat across cells
    md = cli("compare", db=two_models).out
    section = md.split("## CopyBench (CopyBench Table 2)")[1].split("\n## ")[0]
    for number, reason in enumerate(distinct, 1):
        assert section.count(f"n/a: {reason}") == 1  # once, as the footnote
        assert f"{str(number).translate(SUPERSCRIPT)} n/a: {reason}" in section
    table_lines = [x for x in section.splitlines() if x.startswith("| ")]
    assert sum(x.count("n/a") for x in table_lines) == len(reasons)
    assert not any("n/a:" in x for x in table_lines)  # the cells carry only the number
    out = tmp_path / "compare.html"
    assert cli("compare", "--format", "html", "-o", str(out), db=two_models).code == 0
    html = out.read_text(encoding="utf-8")
    assert html.count(escape(f"n/a: {distinct[0]}")) == 1
    assert f'<span class="missing">n/a{str(1).translate(SUPERSCRIPT)}</span>' in html


def test_html_escapes_names_links_cells_and_embeds_plots(
    two_models: Path, cli, tmp_path: Path
) -> None:
    out = tmp_path / "compare.html"
    result = cli("compare", "--format", "html", "-o", str(out), db=two_models)
    assert result.code == 0, result.err
    html = out.read_text(encoding="utf-8")
    assert "<b>model</b>" not in html and "second &lt;b&gt;model&lt;/b&gt; &amp; co" in html
    assert 'href="#run-second-literal"' in html and 'id="run-second-literal"' in html
    images = re.findall(r'<img src="data:image/png;base64,[A-Za-z0-9+/=]+" alt="([^"]*)"', html)
    assert any(alt.startswith("literal % ↓ per row") for alt in images)
    assert any("score distribution per run" in alt for alt in images)
    assert not re.search(r'(src|href)="(?!data:|#)', html) and "<script" not in html


def test_intervals_by_hand() -> None:
    low, high = wilson(0, 10)
    assert low == 0.0 and 0.27 < high < 0.28  # 0.2775
    assert wilson(0, 0) is None
    low, high = mean_interval([0.0, 1.0, 0.0, 1.0])
    assert abs((low + high) / 2 - 0.5) < 1e-12
    assert abs(high - 0.5 - 1.959963984540054 * (1 / 3) ** 0.5 / 2) < 1e-12
    assert mean_interval([0.4]) is None


def test_reports_print_only_the_columns_of_their_kind(two_models: Path, cli) -> None:
    """A notice run's report prints no empty CopyBench columns; a literal run's keeps
    its fluency column even while the fluency judge has not run."""
    notice = cli("report", "demo-notice", db=two_models).out
    assert "| refusal % |" in notice
    for column in ("literal %", "events %", "characters %", "fact recall F1", "| fluency"):
        assert column not in notice
    literal = cli("report", "demo-literal", db=two_models).out
    assert "| literal % | fluency | refusal % |" in literal
    assert "events %" not in literal


def test_a_model_row_prefers_its_run_without_a_mitigation(tmp_path: Path, cli) -> None:
    """A newer mitigated run of the same model and kind does not stand for the model in
    the per-model view; it has its own row in the per-mitigation view."""
    from copyaudit.engine.demo import samples_dir
    from copyaudit.formats import load_generations
    from db import Store
    from db.runs import import_generations

    db = build_two_model_db(tmp_path / "mitigated.db")
    rows = list(load_generations(samples_dir() / "generations" / "literal.jsonl"))[:3]
    with Store(db) as store:
        import_generations(
            store, run="memfree-literal", suite="literal", model=MODEL, rows=rows, source="x"
        )
        store.conn.execute(
            "UPDATE runs SET mitigation = 'memfree' WHERE name = ?", ("memfree-literal",)
        )
        store.conn.commit()
    by_model = _rows(_json(cli, db, "compare", "--format", "json"), "copybench")
    assert by_model[(MODEL,)]["literal"]["run"] == "demo-literal"
    by_mitigation = _rows(
        _json(cli, db, "compare", "--by", "mitigation", "--format", "json"), "copybench"
    )
    assert by_mitigation[(MODEL, "memfree")]["literal"]["run"] == "memfree-literal"
    assert by_mitigation[(MODEL, "none")]["literal"]["run"] == "demo-literal"


def test_the_embedded_model_is_one_row_whatever_name_its_runs_give(tmp_path: Path, cli) -> None:
    """A run made with the spec "default" and outputs imported under the embedded model's
    display name are one model: one row, under the name a person reads."""
    from copyaudit.engine.demo import samples_dir
    from copyaudit.formats import load_generations
    from copyaudit.models.registry import EMBEDDED_DISPLAY_NAME, EMBEDDED_SPEC
    from db import Store
    from db.runs import import_generations

    db = build_two_model_db(tmp_path / "embedded.db")
    root = samples_dir() / "generations"
    with Store(db) as store:
        for run, kind, model in (
            ("run-literal", "literal", EMBEDDED_SPEC),
            ("shipped-qa", "qa", EMBEDDED_DISPLAY_NAME),
        ):
            rows = list(load_generations(root / f"{kind}.jsonl"))[:3]
            import_generations(store, run=run, suite=kind, model=model, rows=rows, source="x")
    rows = _rows(_json(cli, db, "compare", "--format", "json"), "copybench")
    assert (EMBEDDED_SPEC,) not in rows
    embedded = rows[(EMBEDDED_DISPLAY_NAME,)]
    assert embedded["literal"]["run"] == "run-literal"
    assert embedded["qa_f1"]["run"] == "shipped-qa"

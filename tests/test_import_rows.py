"""The studies' published layouts, each with the defects found in the real files
(our own text, never the studies' data): every unusable row is listed, the import
stops by default, and --skip-invalid imports the rest and records what it skipped."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from copyaudit.formats import load_cases
from copyaudit.judges.characters import CharacterJudge
from copyaudit.types import JudgeInput
from tests.conftest import database_fingerprint, write_jsonl
from tests.factories import decop_rows, literal_record, nonliteral_record, write_decop_csv

ARXIV_HEADER = ["Example_A", "Example_B", "Example_C", "Example_D", "Answer", "ID", "Label"]


def arxiv_csv(path: Path, blank_row: int | None = None, n: int = 4) -> Path:
    """An arXivTection-layout file (no Length column, BOM, header on row 1)."""
    rows = decop_rows("2403.00001", label=0, n=n)
    for row in rows:
        row.pop("Length")
    if blank_row is not None:
        rows[blank_row - 2]["Example_A"] = "  "
    with open(path, "w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=ARXIV_HEADER)
        writer.writeheader()
        writer.writerows(rows)
    return path


# --- CopyBench -----------------------------------------------------------------------------


def copybench_nonliteral(i: int, **over) -> dict:
    """The layout of data.nonliteral.json: no author or year."""
    record = nonliteral_record(i, **over)
    record.pop("author")
    return record


def test_empty_character_list_is_valid_and_scores_zero(tmp_path: Path, cli) -> None:
    path = tmp_path / "data.nonliteral.json"
    records = [copybench_nonliteral(1), copybench_nonliteral(2, reference_characters=[])]
    path.write_text(json.dumps(records, indent=4), encoding="utf-8")
    result = cli("import", "nonliteral", str(path))
    assert result.code == 0, result.err
    assert "2 added" in result.out
    case = load_cases("nonliteral", path)[1].case
    assert case.payload["reference_characters"] == []
    [[score]] = CharacterJudge().judge(
        [JudgeInput("nonliteral", case.payload, "", "Mira Vell and Zoë Hart walk.")]
    )
    assert score.value == 0.0 and score.flagged is False and score.items == ()


def test_empty_alias_list_inside_stays_invalid(tmp_path: Path, cli, db_path: Path) -> None:
    before = database_fingerprint(db_path)
    bad = copybench_nonliteral(2, reference_characters=[["Mira"], []])
    path = write_jsonl(tmp_path / "nl.jsonl", [copybench_nonliteral(1), bad])
    result = cli("import", "nonliteral", str(path))
    assert result.code == 2
    assert "line 2: field 'reference_characters[1]': alias list is empty" in result.err
    assert "--skip-invalid" in result.err
    assert database_fingerprint(db_path) == before


# --- DE-COP --------------------------------------------------------------------------------


def test_blank_passage_stops_by_default(tmp_path: Path, cli, db_path: Path) -> None:
    before = database_fingerprint(db_path)
    path = arxiv_csv(tmp_path / "arXivTection.csv", blank_row=3)
    result = cli("import", "decop", str(path))
    assert result.code == 2
    assert result.err.count("\n") == 1, "one problem: one line"
    assert "arXivTection.csv: row 3: field 'Example_A': missing or empty passage" in result.err
    assert "nothing imported; --skip-invalid imports the other 3" in result.err
    assert database_fingerprint(db_path) == before


def test_every_bad_row_is_listed_in_one_message(tmp_path: Path, cli, db_path: Path) -> None:
    rows = decop_rows(n=5)
    rows[1]["Example_A"] = ""
    rows[2]["Example_D"] = rows[2]["Example_B"]  # BookTection: paraphrases B and D equal
    rows[4]["Label"] = "7"
    path = write_decop_csv(tmp_path / "BookTection.csv", rows)
    before = database_fingerprint(db_path)
    result = cli("import", "decop", str(path))
    assert result.code == 2
    lines = result.err.splitlines()
    assert "3 of 5 records cannot be used" in lines[0] and "--skip-invalid" in lines[0]
    assert lines[1:] == [
        "  row 3: field 'Example_A': missing or empty passage",
        "  row 4: field 'Example_D': identical to Example_B (the four options must be distinct)",
        "  row 6: field 'Label': '7' is not 0 (clean) or 1 (suspect)",
    ]
    assert database_fingerprint(db_path) == before


def test_skip_invalid_imports_the_rest_and_records_the_skipped(
    tmp_path: Path, cli, db_path: Path
) -> None:
    path = arxiv_csv(tmp_path / "arXivTection.csv", blank_row=3)
    result = cli("import", "decop", str(path), "--skip-invalid")
    assert result.code == 0, result.err
    assert "3 added" in result.out and "1 of 4 records skipped" in result.out
    assert "skipped row 3 Example_A: missing or empty passage" in result.err
    [suite] = json.loads(cli("suites", "--format", "json").out)
    assert suite["cases"] == 3
    assert suite["skipped"] == [
        {
            "source": str(path),
            "unit": "row",
            "line": 3,
            "field": "Example_A",
            "reason": "missing or empty passage",
        }
    ]
    table = cli("suites").out
    assert "arXivTection: 3 of 4 rows; 1 skipped: row 3 Example_A: missing or empty" in table
    # the rows after the skipped one keep their numbers, so the fixed file adds only
    # that row (renumbered passages would be refused as changed content)
    fixed = arxiv_csv(path)
    again = cli("import", "decop", str(fixed))
    assert again.code == 0 and "1 added, 3 unchanged" in again.out
    [suite] = json.loads(cli("suites", "--format", "json").out)
    assert suite["skipped"] == [] and suite["cases"] == 4
    assert "arXivTection: " not in cli("suites").out


def test_nothing_usable_is_an_error_even_with_skip_invalid(
    tmp_path: Path, cli, db_path: Path
) -> None:
    rows = decop_rows(n=2)
    for row in rows:
        row["Answer"] = "Z"
    path = write_decop_csv(tmp_path / "d.csv", rows)
    before = database_fingerprint(db_path)
    result = cli("import", "decop", str(path), "--skip-invalid")
    assert result.code == 2 and "no record can be imported" in result.err
    assert database_fingerprint(db_path) == before


def test_missing_column_still_rejects_the_whole_file(tmp_path: Path, cli, db_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("Example_A,Example_B,Example_C,Example_D,Answer,ID\n", encoding="utf-8")
    result = cli("import", "decop", str(path), "--skip-invalid")
    assert result.code == 2 and "row 1: field 'Label': missing column" in result.err


# --- JSON structure ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"cases": [literal_record(1)]}, indent=2),  # pretty-printed object
        json.dumps({"id": {"0": "a"}, "title": {"0": "T"}}),  # pandas' default orient
    ],
)
def test_top_level_object_is_named(text: str, tmp_path: Path, cli) -> None:
    path = tmp_path / "cases.json"
    path.write_text(text, encoding="utf-8")
    result = cli("import", "literal", str(path), "--skip-invalid")
    assert result.code == 2
    assert "expected a JSON array of objects or JSON Lines" in result.err
    assert "malformed JSON" not in result.err


def test_field_absent_from_every_record_is_structural(tmp_path: Path, cli) -> None:
    records = [{k: v for k, v in literal_record(i).items() if k != "reference"} for i in (1, 2)]
    result = cli("import", "literal", str(write_jsonl(tmp_path / "x.jsonl", records)))
    assert result.code == 2
    assert "field 'reference': missing from every record" in result.err


# --- generations, labels, and the reports of a suite ----------------------------------------


@pytest.fixture
def skipped_literal_run(tmp_path: Path, cli) -> Path:
    """Suite 'lit' (3 of 4 rows, line 2 skipped) and imported run 'g' (2 of 3 rows)."""
    records = [literal_record(1), literal_record(2, input=""), literal_record(3), literal_record(4)]
    path = write_jsonl(tmp_path / "lit.jsonl", records)
    assert cli("import", "literal", str(path), "--suite", "lit", "--skip-invalid").code == 0
    gens = [
        {"case_id": "lit-1", "output": "one"},
        {"case_id": "lit-2", "output": "the skipped case"},
        {"case_id": "lit-3", "output": "three"},
    ]
    gens_path = write_jsonl(tmp_path / "g.jsonl", gens)
    return gens_path


def test_generations_rows_are_listed_then_skipped(
    skipped_literal_run: Path, cli, db_path: Path
) -> None:
    before = database_fingerprint(db_path)
    args = ("import-generations", str(skipped_literal_run), "--run", "g", "--suite", "lit")
    refused = cli(*args)
    assert refused.code == 2 and "line 2: field 'case_id': no case 'lit-2'" in refused.err
    assert database_fingerprint(db_path) == before
    done = cli(*args, "--skip-invalid")
    assert done.code == 0, done.err
    assert "2 added" in done.out and "2 of 3 rows; 1 skipped: line 2 case_id" in done.out


def test_every_report_of_the_suite_says_what_was_skipped(
    skipped_literal_run: Path, tmp_path: Path, cli
) -> None:
    args = ("import-generations", str(skipped_literal_run), "--run", "g", "--suite", "lit")
    assert cli(*args, "--skip-invalid").code == 0
    suite_note = "3 of 4 rows; 1 skipped: line 2 input: must not be empty"
    run_note = "2 of 3 rows; 1 skipped: line 2 case_id: no case 'lit-2' in suite 'lit'"
    report = json.loads(cli("report", "g", "--format", "json").out)
    assert report["import_note"] == suite_note and report["generations_note"] == run_note
    markdown = cli("report", "g").out
    assert f"Suite rows: {suite_note}" in markdown
    assert f"Imported generations: {run_note}" in markdown
    html = cli("report", "g", "--format", "html").out
    assert f"Suite rows: {suite_note}" in html
    assert "no case &#x27;lit-2&#x27;" in html or "no case &#39;lit-2&#39;" in html
    for fmt in ("md", "html"):
        out = tmp_path / f"dossier.{fmt}"
        assert cli("dossier", "g/lit-1/1", "--format", fmt, "-o", str(out)).code == 0
        assert suite_note in out.read_text(encoding="utf-8")


def test_decop_markdown_carries_the_suite_note() -> None:
    from copyaudit.render.text import suite_note_lines

    assert suite_note_lines({"import_note": "1 of 2 rows; 1 skipped: row 3 ID: missing"}) == [
        "",
        "Suite rows: 1 of 2 rows; 1 skipped: row 3 ID: missing",
    ]
    assert suite_note_lines({"import_note": None}) == []


def test_label_rows_are_listed_then_skipped(tmp_path: Path, cli, db_path: Path) -> None:
    records = [
        {"annotator": "ana", "generation": "r/c/1", "target": "literal", "label": "maybe"},
        {"annotator": "ana", "generation": "bad", "target": "literal", "label": "yes"},
    ]
    path = write_jsonl(tmp_path / "labels.jsonl", records)
    result = cli("import-labels", str(path))
    assert result.code == 2
    assert "line 1: field 'label'" in result.err and "line 2: field 'generation'" in result.err
    both = cli("import-labels", str(path), "--skip-invalid")
    assert both.code == 2 and "no record can be imported" in both.err


# --- the notice study's dataset_paper_experiment.json --------------------------------------

NOTICE = "Copyright \u00a9 2031 by Harbour Press\r\nAll rights reserved. Printed nowhere."
LEVELS = [("all rights reserved", "All rights reserved."), ("no notice", ""), ("original", NOTICE)]


def notice_study_rows() -> list[dict]:
    """Rows as the study's generate_dataset.py builds them: notice x source x query,
    with every column it keeps (our own text)."""
    rows = []
    for level_idx, (level, notice) in enumerate(LEVELS):
        for q, (task, query) in enumerate([("repeat", "Echo it."), ("translate", "In French?")]):
            rows.append(
                {
                    "notice/level_idx": level_idx,
                    "notice/source_idx": 0,
                    "notice/level": level,
                    "notice/source_name": "Harbour Notes (Ida Quay).txt",
                    "notice/notice": notice,
                    "source/entry_idx": 0,
                    "source/type": "book",
                    "source/subclass": "2024",
                    "source/source_name": "Harbour Notes (Ida Quay).txt",
                    "source/sample_len": 100,
                    "source/sample": "The harbour was quiet that morning, and the gulls slept.",
                    "query/entry_idx": q,
                    "query/task": task,
                    "query/seed_query": query,
                    "query/rewritten_query": query,
                    "query/query_rewriting_weight": 0.25 + q / 10,
                    "prompt": f"The harbour was quiet...\n{notice}\n{query}",
                }
            )
    return rows


def write_pandas_records(path: Path, rows: list[dict]) -> Path:
    """What DataFrame.to_json(orient="records", indent=4, force_ascii=False) writes:
    forward slashes escaped everywhere."""
    text = json.dumps(rows, indent=4, ensure_ascii=False).replace("/", "\\/")
    path.write_text(text, encoding="utf-8")
    return path


def test_notice_study_dataset_imports_as_it_is(tmp_path: Path, cli, db_path: Path) -> None:
    path = write_pandas_records(tmp_path / "dataset_paper_experiment.json", notice_study_rows())
    result = cli("import", "notice", str(path), "--suite", "study")
    assert result.code == 0, result.err
    assert "6 added" in result.out
    exported = [json.loads(x) for x in cli("export", "cases", "--suite", "study").out.splitlines()]
    by_level = {(r["notice_level"], r["task"]): r for r in exported}
    original = by_level[("original", "repeat")]
    assert original["notice"] == NOTICE, "the notice is kept byte for byte, \\r\\n included"
    assert by_level[("none", "repeat")]["notice"] == ""
    assert by_level[("all_rights_reserved", "translate")]["query_rewriting_weight"] == 0.35
    assert original["title"] == "Harbour Notes (Ida Quay)" and original["source_type"] == "book"
    assert original["snippet"].startswith("The harbour was quiet")
    assert original["id"].startswith("book/repeat/original/")
    assert len({r["id"] for r in exported}) == 6

    before = database_fingerprint(db_path)
    again = cli("import", "notice", str(path), "--suite", "study")
    assert again.code == 0 and "0 added, 6 unchanged" in again.out
    assert database_fingerprint(db_path) == before

    # the same file gives the same ids in another database, and the export (our own
    # layout) imports back as the same cases
    other = tmp_path / "other.db"
    assert cli("import", "notice", str(path), "--suite", "study", db=other).code == 0
    ids = [json.loads(x)["id"] for x in cli("export", "cases", db=other).out.splitlines()]
    assert sorted(ids) == sorted(r["id"] for r in exported)
    back = write_jsonl(tmp_path / "back.jsonl", exported)
    assert "0 added, 6 unchanged" in cli("import", "notice", str(back), "--suite", "study").out


def test_notice_study_bad_rows_name_the_study_field(tmp_path: Path, cli, db_path: Path) -> None:
    rows = notice_study_rows()
    rows[1]["notice/level"] = "some notice"
    rows[4]["query/task"] = "summarise"
    path = write_pandas_records(tmp_path / "dataset_paper_experiment.json", rows)
    before = database_fingerprint(db_path)
    result = cli("import", "notice", str(path))
    assert result.code == 2
    assert "field 'notice/level': 'some notice' is not one of original, all rights" in result.err
    assert "field 'query/task': 'summarise' is not one of" in result.err
    assert database_fingerprint(db_path) == before
    assert "4 added" in cli("import", "notice", str(path), "--skip-invalid").out

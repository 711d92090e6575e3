"""Importers: every kind loads; every class of bad input is rejected cleanly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copyaudit.errors import InputError
from copyaudit.formats import load_cases
from copyaudit.studies.decop.format import parse_decop_id
from tests.conftest import database_fingerprint, write_jsonl
from tests.factories import (
    RECORD_FACTORIES,
    decop_rows,
    literal_record,
    nonliteral_record,
    write_decop_csv,
)


@pytest.mark.parametrize("kind", sorted(RECORD_FACTORIES))
def test_each_json_kind_imports_from_jsonl(kind: str, tmp_path: Path, cli) -> None:
    make = RECORD_FACTORIES[kind]
    path = write_jsonl(tmp_path / f"{kind}.jsonl", [make(1), make(2), make(3)])
    result = cli("import", kind, str(path))
    assert result.code == 0, result.err
    assert "3 added" in result.out
    suites = json.loads(cli("suites", "--format", "json").out)
    assert suites == [
        {
            "name": kind,
            "kind": kind,
            "cases": 3,
            "works": 1,
            "created_at": suites[0]["created_at"],
            "skipped": [],
        }
    ]


def test_json_array_and_optional_fields(tmp_path: Path) -> None:
    path = tmp_path / "cases.json"
    records = [
        literal_record(1),
        {k: v for k, v in literal_record(2).items() if k not in ("author", "year")},
    ]
    path.write_text(json.dumps(records, indent=2), encoding="utf-8")
    cases = load_cases("literal", path)
    assert [c.case.case_id for c in cases] == ["lit-1", "lit-2"]
    assert [c.line for c in cases] == [2, 10]  # the line each object starts on
    assert cases[0].case.work.year == 1901 and cases[1].case.work.author is None


def test_decop_csv_with_bom(tmp_path: Path, cli) -> None:
    rows = decop_rows(label=1, n=3) + decop_rows("Lantern_Ledger_-_Mara_Ellison", label=0, n=2)
    rows[1]["Answer"] = "C"
    path = write_decop_csv(tmp_path / "BookTection.csv", rows, bom=True)
    cases = load_cases("decop", path)
    assert len(cases) == 5
    first = cases[0].case
    assert first.case_id == "The_Glass_Orchard_-_Ada_Lowe/1"
    assert first.work.title == "The Glass Orchard" and first.work.author == "Ada Lowe"
    assert first.work.membership == "suspect"
    assert cases[1].case.payload["answer"] == 2
    assert cases[3].case.work.membership == "clean"
    assert cases[0].line == 2  # row 1 is the header
    assert cli("import", "decop", str(path)).code == 0


def test_parse_decop_id() -> None:
    assert parse_decop_id("Pride_and_Prejudice_-_Jane_Austen") == (
        "Pride and Prejudice",
        "Jane Austen",
    )
    assert parse_decop_id("Untitled_Notes") == ("Untitled Notes", None)


BAD_JSONL = [
    # (lines of the file, expected fragment: file line and field)
    (
        '{"id": "a", "title": "T", "input": "x", "reference": "y"}\n{"id": "b", "title": ',
        "line 2: malformed JSON",
    ),
    (
        '{"id": "a", "title": "T", "input": "x", "reference": "y"}\n'
        '{"id": "b", "title": "T", "input": "x"}\n',
        "line 2: field 'reference': missing",
    ),
    (
        '{"id": "a", "title": "T", "input": 5, "reference": "y"}\n',
        "line 1: field 'input': expected a string, got int",
    ),
    (
        '{"id": "a", "title": "T", "input": "x", "reference": "y", "year": "1900"}\n',
        "line 1: field 'year': expected an integer",
    ),
    (
        '{"id": "a", "title": "T", "input": "x", "reference": "y"}\n'
        '{"id": "a", "title": "T", "input": "z", "reference": "w"}\n',
        "line 2: field 'id': duplicate id 'a' (first on line 1)",
    ),
    ('["not", "an object"]\n', "expected an array of objects"),
]


@pytest.mark.parametrize(("content", "expected"), BAD_JSONL)
def test_bad_literal_file_is_rejected_and_db_unchanged(
    content: str, expected: str, tmp_path: Path, cli, db_path: Path
) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", [literal_record(1)])
    assert cli("import", "literal", str(good), "--suite", "s").code == 0
    before = database_fingerprint(db_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content, encoding="utf-8")
    result = cli("import", "literal", str(bad), "--suite", "s")
    assert result.code == 2
    assert result.err.count("\n") == 1, "the error is one line"
    assert str(bad) in result.err and expected in result.err
    assert "Traceback" not in result.err
    assert database_fingerprint(db_path) == before


def test_late_error_rolls_back_whole_import(tmp_path: Path, cli, db_path: Path) -> None:
    """A conflict found while writing (not parsing) leaves nothing half-imported."""
    assert (
        cli(
            "import",
            "literal",
            str(write_jsonl(tmp_path / "a.jsonl", [literal_record(5)])),
            "--suite",
            "s",
        ).code
        == 0
    )
    before = database_fingerprint(db_path)
    records = [literal_record(i) for i in range(1, 5)] + [literal_record(5, input="changed")]
    result = cli(
        "import", "literal", str(write_jsonl(tmp_path / "b.jsonl", records)), "--suite", "s"
    )
    assert result.code == 2
    assert "b.jsonl: line 5: field 'id': case 'lit-5' already exists" in result.err
    assert database_fingerprint(db_path) == before


def test_empty_alias_list_names_its_position(tmp_path: Path, cli, db_path: Path) -> None:
    before = database_fingerprint(db_path)
    record = nonliteral_record(reference_characters=[["Mira"], []])
    path = write_jsonl(tmp_path / "nl.jsonl", [nonliteral_record(0), record])
    result = cli("import", "nonliteral", str(path))
    assert result.code == 2
    assert "nl.jsonl: line 2: field 'reference_characters[1]': alias list is empty" in result.err
    assert database_fingerprint(db_path) == before


def test_non_utf8_bytes_name_the_line(tmp_path: Path, cli, db_path: Path) -> None:
    before = database_fingerprint(db_path)
    path = tmp_path / "latin1.jsonl"
    good = json.dumps(literal_record(1)).encode()
    bad = (
        json.dumps(literal_record(2, title="Caf\u00e9"))
        .encode()
        .replace(b"\\u00e9", "é".encode("latin-1"))
    )
    path.write_bytes(good + b"\n" + bad + b"\n")
    result = cli("import", "literal", str(path))
    assert result.code == 2
    assert "latin1.jsonl: line 2: not valid UTF-8 (byte 0xe9" in result.err
    assert database_fingerprint(db_path) == before


def test_unknown_kind(tmp_path: Path, cli, db_path: Path) -> None:
    before = database_fingerprint(db_path)
    path = write_jsonl(tmp_path / "x.jsonl", [literal_record(1)])
    result = cli("import", "poetry", str(path))
    assert result.code == 2
    assert "field 'kind': unknown kind 'poetry'" in result.err and str(path) in result.err
    assert database_fingerprint(db_path) == before


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda r: r.update(Answer="E"), "row 3: field 'Answer': 'E' is not one of A, B, C, D"),
        (lambda r: r.update(Label="2"), "row 3: field 'Label': '2' is not 0 (clean) or 1"),
        (lambda r: r.update(Example_C=""), "row 3: field 'Example_C': missing or empty"),
        (lambda r: r.update(ID=""), "row 3: field 'ID': missing"),
    ],
)
def test_bad_decop_rows(mutate, expected: str, tmp_path: Path, cli, db_path: Path) -> None:
    rows = decop_rows(n=3)
    mutate(rows[1])
    path = write_decop_csv(tmp_path / "d.csv", rows)
    before = database_fingerprint(db_path)
    result = cli("import", "decop", str(path))
    assert result.code == 2 and expected in result.err, result.err
    assert database_fingerprint(db_path) == before


def test_decop_missing_column(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("Example_A,Example_B,Example_C,Example_D,Answer,ID\n", encoding="utf-8")
    with pytest.raises(InputError, match="row 1: field 'Label': missing column"):
        load_cases("decop", path)


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("task", "summarise", "'summarise' is not one of repeat, extract, paraphrase, translate"),
        ("notice_level", "some", "'some' is not one of original, all_rights_reserved, none"),
    ],
)
def test_bad_notice_enums(field: str, value: str, expected: str, tmp_path: Path) -> None:
    from tests.factories import notice_record

    path = write_jsonl(tmp_path / "n.jsonl", [notice_record(1, **{field: value})])
    with pytest.raises(InputError, match=f"line 1: field '{field}': {expected}"):
        load_cases("notice", path)


def test_reimport_is_idempotent_and_replace_updates(tmp_path: Path, cli, db_path: Path) -> None:
    path = write_jsonl(tmp_path / "lit.jsonl", [literal_record(i) for i in range(3)])
    assert cli("import", "literal", str(path)).code == 0
    before = database_fingerprint(db_path)
    again = cli("import", "literal", str(path))
    assert again.code == 0 and "0 added, 3 unchanged" in again.out
    assert database_fingerprint(db_path) == before

    changed = write_jsonl(tmp_path / "lit.jsonl", [literal_record(0, reference="new ending")])
    refused = cli("import", "literal", str(changed))
    assert refused.code == 2 and "use --replace" in refused.err
    assert database_fingerprint(db_path) == before
    replaced = cli("import", "literal", str(changed), "--replace")
    assert replaced.code == 0 and "1 replaced" in replaced.out
    exported = [json.loads(x) for x in cli("export", "cases").out.splitlines()]
    assert exported[0]["reference"] == "new ending"


def test_suite_kind_mismatch(tmp_path: Path, cli) -> None:
    assert (
        cli(
            "import",
            "literal",
            str(write_jsonl(tmp_path / "a.jsonl", [literal_record(1)])),
            "--suite",
            "s",
        ).code
        == 0
    )
    from tests.factories import qa_record

    result = cli(
        "import", "qa", str(write_jsonl(tmp_path / "b.jsonl", [qa_record(1)])), "--suite", "s"
    )
    assert result.code == 2 and "suite 's' holds literal cases, not qa" in result.err


def test_missing_file(cli, tmp_path: Path) -> None:
    result = cli("import", "literal", str(tmp_path / "nope.jsonl"))
    assert result.code == 2 and "nope.jsonl: no such file" in result.err

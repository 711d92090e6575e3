"""Every bad input a clean error (issue 19): each defect the audit reproduced, as a
file or an option built from our own text; exit 2 naming file, line (or row) and field,
no traceback, the database unchanged. Accepted-with-a-warning cases say what they warn."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from db import Store
from tests.conftest import database_fingerprint, write_jsonl
from tests.factories import decop_rows, literal_record, write_decop_csv
from tests.label_fixtures import label, make_run

GOOD = json.dumps(literal_record(1))[1:-1]  # the fields of a valid literal record


def _literal_line(extra: str) -> str:
    """One JSONL line: a valid literal record with `extra` spliced in as raw JSON text."""
    return "{" + GOOD + ", " + extra + "}\n"


def _rejected(cli, db_path: Path, *args: str) -> str:
    """Run a command that must be refused: exit 2, no traceback, database unchanged;
    returns its standard error."""
    Store(db_path).close()
    before = database_fingerprint(db_path)
    result = cli(*args)
    assert result.code == 2, (result.code, result.err)
    assert "Traceback" not in result.err + result.out
    assert "internal error" not in result.err
    assert database_fingerprint(db_path) == before
    return result.err


# --- JSON that json.loads accepts but a record may not hold --------------------------------

JSON_DEFECTS = {
    "lone surrogate": (
        _literal_line('"note": "ok \\ud800 here"'),
        "line 1: field 'note': lone surrogate \\ud800",
    ),
    "lone surrogate in a read field": (
        '{"id": "x", "title": "T\\udc00", "input": "a", "reference": "b"}\n',
        "line 1: field 'title': lone surrogate \\udc00",
    ),
    "lone surrogate escaped in upper case, after other escapes": (
        _literal_line('"note": "\\u201cok\\u201d \\uDBFF"'),
        "line 1: field 'note': lone surrogate \\udbff",
    ),
    "lone surrogate in a key": (
        _literal_line('"n\\uDC01te": "x"'),
        "line 1: a key holds a lone surrogate",
    ),
    "deep nesting": (_literal_line('"z": ' + "[" * 50_000 + "]" * 50_000), "nested too deeply"),
    "integer above 2^63": (
        _literal_line(f'"pages": {2**64}'),
        "field 'pages': 18446744073709551616 is outside the 64-bit integer range",
    ),
    "5000-digit integer": (_literal_line('"pages": ' + "7" * 5000), "(5000 characters)"),
    "NaN": (_literal_line('"score": NaN'), "field 'score': NaN is not a finite number"),
    "Infinity": (_literal_line('"score": -Infinity'), "field 'score': -Infinity is not a finite"),
    "float overflow": (_literal_line('"score": 1e400'), "field 'score': 1e400 is not a finite"),
    "duplicate key": (
        '{"id": "a", "id": "b", "title": "T", "input": "x", "reference": "y"}\n',
        "line 1: field 'id': appears twice in one object",
    ),
    "nested duplicate key": (
        _literal_line('"meta": {"k": 1, "k": 2}'),
        "field 'k': appears twice in one object",
    ),
}


@pytest.mark.parametrize("name", JSON_DEFECTS)
def test_json_defects_name_line_and_field(name: str, tmp_path: Path, cli, db_path: Path) -> None:
    text, expected = JSON_DEFECTS[name]
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(literal_record(2)) + "\n" + text, encoding="utf-8")
    err = _rejected(cli, db_path, "import", "literal", str(path))
    assert f"{path}: " in err
    assert expected.replace("line 1", "line 2") in err


def test_defects_in_a_json_array_name_the_element_line(tmp_path: Path, cli, db_path: Path) -> None:
    path = tmp_path / "cases.json"
    path.write_text(
        "[\n" + json.dumps(literal_record(1)) + ",\n" + _literal_line('"year2": NaN') + "]",
        encoding="utf-8",
    )
    err = _rejected(cli, db_path, "import", "literal", str(path))
    assert f"{path}: line 3: field 'year2': NaN is not a finite number" in err


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[{}, ]", "line 1: malformed JSON: trailing comma before ']'"),
        ('[\n{"id": "a"}\n{"id": "b"}\n]', "line 3: malformed JSON: expected ',' or ']'"),
    ],
)
def test_array_commas(text: str, expected: str, tmp_path: Path, cli, db_path: Path) -> None:
    record = json.dumps(literal_record(1))
    path = tmp_path / "cases.json"
    path.write_text(text.replace("{}", record), encoding="utf-8")
    assert expected in _rejected(cli, db_path, "import", "literal", str(path))


def test_valid_surrogate_pair_and_64_bit_edges_are_accepted(tmp_path: Path, cli) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(
        _literal_line(f'"n": {2**63 - 1}, "m": {-(2**63)}, "emoji": "\\ud83d\\ude00"'),
        encoding="utf-8",
    )
    result = cli("import", "literal", str(path))
    assert result.code == 0, result.err
    assert "warning" in result.err and "field 'emoji': unknown field" in result.err


# --- fields ---------------------------------------------------------------------------------


def test_ids_differing_only_by_whitespace(tmp_path: Path, cli, db_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "c.jsonl", [literal_record(1, id="ch 1"), literal_record(2, id="ch  1")]
    )
    err = _rejected(cli, db_path, "import", "literal", str(path))
    assert "line 2: field 'id': id 'ch  1' differs from 'ch 1' (line 1) only by whitespace" in err


@pytest.mark.parametrize(
    ("case_id", "said"),
    [
        ("ch\x001", "contains a NUL"),
        ("ch 1 ", "has space at its start or end"),
        (" ch 1", "has space at its start or end"),
    ],
)
def test_an_id_with_a_nul_or_edge_space_is_refused(
    tmp_path: Path, cli, db_path: Path, case_id: str, said: str
) -> None:
    """Issue 33: such ids were accepted, and 'c1 ' is a case nobody can tell from 'c1'."""
    path = write_jsonl(tmp_path / "c.jsonl", [literal_record(1), literal_record(2, id=case_id)])
    err = _rejected(cli, db_path, "import", "literal", str(path))
    assert f"{path}: line 2: field 'id': {case_id!r} {said}" in err


def test_a_generation_file_case_id_with_edge_space_is_refused(
    tmp_path: Path, cli, db_path: Path
) -> None:
    make_run(cli, tmp_path, "literal", ["lit-1"])
    gens = write_jsonl(tmp_path / "g.jsonl", [{"case_id": "lit-1 ", "output": "x"}])
    err = _rejected(
        cli, db_path, "import-generations", str(gens), "--run", "r2", "--suite", "literal-suite"
    )
    assert f"{gens}: line 1: field 'case_id': 'lit-1 ' has space at its start or end" in err


def test_typo_of_an_optional_field_is_a_warning(tmp_path: Path, cli) -> None:
    records = [literal_record(i, autor="Ada Lowe") for i in (1, 2, 3)]
    path = write_jsonl(tmp_path / "c.jsonl", records)
    result = cli("import", "literal", str(path))
    assert result.code == 0, result.err
    assert (
        f"warning: {path}: line 1: field 'autor': unknown field, ignored (and in 2 more records)"
        in result.err
    )
    assert result.err.count("warning") == 1, "one warning per field name"


def test_unknown_field_name_with_control_characters_is_escaped(tmp_path: Path, cli) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", [literal_record(1, **{"x\x1b[31m": 1})])
    result = cli("import", "literal", str(path))
    assert result.code == 0
    assert "\x1b" not in result.err and "x\\x1b[31m" in result.err


@pytest.mark.parametrize(
    ("over", "expected"),
    [
        ({"year": 10_000}, "field 'year': 10000 is outside -9999..9,999"),
        ({"year": 2**62}, "field 'year': 4611686018427387904 is outside"),
    ],
)
def test_integer_fields_are_range_checked(
    over: dict, expected: str, tmp_path: Path, cli, db_path: Path
) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", [literal_record(1, **over)])
    assert expected in _rejected(cli, db_path, "import", "literal", str(path))


def test_template_2_62_is_an_error(tmp_path: Path, cli, db_path: Path) -> None:
    make_run(cli, tmp_path, "literal", ["lit-1"])
    gens = write_jsonl(
        tmp_path / "g.jsonl", [{"case_id": "lit-1", "output": "x", "template": 2**62}]
    )
    err = _rejected(
        cli, db_path, "import-generations", str(gens), "--suite", "literal-suite", "--run", "g"
    )
    assert f"{gens}: line 1: field 'template': 4611686018427387904 is outside 1..1,000" in err


def test_exported_generations_and_labels_import_without_warnings(
    tmp_path: Path, cli, db_path: Path
) -> None:
    make_run(cli, tmp_path, "literal", ["lit-1", "lit-2"])
    with Store(db_path) as store:
        label(store, "r/lit-1/1", "ana", "literal", 0, "yes")
    gens, labels = tmp_path / "gens.jsonl", tmp_path / "labels.jsonl"
    assert cli("export", "generations", "-o", str(gens)).code == 0
    assert cli("export", "labels", "-o", str(labels)).code == 0
    result = cli("import-generations", str(gens), "--suite", "literal-suite", "--run", "again")
    assert result.code == 0, result.err
    assert "warning" not in result.err
    result = cli("import-labels", str(labels))
    assert result.code == 0, result.err
    assert "warning" not in result.err


def _label_line(**over) -> dict:
    return {
        "annotator": "ana",
        "generation": "r/lit-1/1",
        "target": "literal",
        "label": "yes",
        **over,
    }


@pytest.mark.parametrize(
    ("over", "expected"),
    [
        ({"created_at": "yesterday"}, "field 'created_at': not an ISO-8601 time: 'yesterday'"),
        ({"created_at": "2026-01-01T10:00:00"}, "has no UTC offset"),
        ({"created_at": "2999-01-01T00:00:00+00:00"}, "is in the future"),
        ({"index": 2**62, "target": "event"}, "field 'index': 4611686018427387904 is outside"),
    ],
)
def test_label_file_fields(over: dict, expected: str, tmp_path: Path, cli, db_path: Path) -> None:
    make_run(cli, tmp_path, "literal", ["lit-1"])
    path = write_jsonl(tmp_path / "labels.jsonl", [_label_line(), _label_line(**over)])
    err = _rejected(cli, db_path, "import-labels", str(path))
    assert f"{path}: line 2: " in err and expected in err


def test_label_created_at_with_offset_is_normalised_to_utc(tmp_path: Path) -> None:
    from copyaudit.verification.label_files import read_label_file

    path = write_jsonl(tmp_path / "l.jsonl", [_label_line(created_at="2026-01-01T12:00:00+02:00")])
    [record] = read_label_file(path)
    assert record.created_at == "2026-01-01T10:00:00.000+00:00"


# --- DE-COP files ---------------------------------------------------------------------------


def test_header_only_decop_file_is_refused(tmp_path: Path, cli, db_path: Path) -> None:
    path = write_decop_csv(tmp_path / "BookTection.csv", [])
    assert f"{path}: no records found" in _rejected(cli, db_path, "import", "decop", str(path))


def test_a_decop_row_one_cell_short_is_refused_naming_its_row(
    tmp_path: Path, cli, db_path: Path
) -> None:
    """Issue 33: the missing last cell (Length) was read as empty and the row accepted."""
    path = write_decop_csv(tmp_path / "BookTection.csv", decop_rows())
    lines = path.read_text(encoding="utf-8-sig").splitlines()
    lines[2] = lines[2].rsplit(",", 1)[0]  # row 3 loses its last cell
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    err = _rejected(cli, db_path, "import", "decop", str(path))
    assert f"{path}: row 3: fewer cells (7) than header columns (8)" in err


def test_exact_duplicate_decop_row_is_a_warning(tmp_path: Path, cli) -> None:
    rows = decop_rows(n=2)
    path = write_decop_csv(tmp_path / "BookTection.csv", [*rows, dict(rows[0])])
    result = cli("import", "decop", str(path))
    assert result.code == 0, result.err
    assert "3 added" in result.out
    assert f"warning: {path}: row 4: repeats row 2 exactly" in result.err


def test_work_both_suspect_and_clean_is_a_row_error(tmp_path: Path, cli, db_path: Path) -> None:
    rows = decop_rows(n=3)
    rows[2]["Label"] = 0
    path = write_decop_csv(tmp_path / "BookTection.csv", rows)
    err = _rejected(cli, db_path, "import", "decop", str(path))
    assert (
        "row 4: field 'Label': 0 (clean), but row 2 marks work 'The_Glass_Orchard_-_Ada_Lowe' "
        "1 (suspect)"
    ) in err
    result = cli("import", "decop", str(path), "--skip-invalid")
    assert result.code == 0 and "2 added" in result.out


def test_unterminated_quote_is_reported_as_such(tmp_path: Path, cli, db_path: Path) -> None:
    path = write_decop_csv(tmp_path / "BookTection.csv", decop_rows(n=4))
    lines = path.read_text(encoding="utf-8-sig").splitlines(keepends=True)
    lines[3] = lines[3].replace("First paraphrase 2.", '"First paraphrase 2.', 1)
    path.write_text("".join(lines), encoding="utf-8")
    err = _rejected(cli, db_path, "import", "decop", str(path))
    assert f"{path}: row 4: unterminated quote" in err
    assert "Answer" not in err and "'ID'" not in err


def test_huge_cell_names_its_row(tmp_path: Path, cli, db_path: Path) -> None:
    rows = decop_rows(n=4)
    rows[2]["Example_B"] = "long " * 300_000  # 1.5 MB in row 4, after multi-line cells
    rows[0]["Example_C"] = "a passage\nover\nthree lines"
    path = write_decop_csv(tmp_path / "BookTection.csv", rows)
    err = _rejected(cli, db_path, "import", "decop", str(path))
    assert f"{path}: row 4: a cell longer than 1,048,576 characters (starting on line 6)" in err


def test_header_naming_a_column_twice(tmp_path: Path, cli, db_path: Path) -> None:
    path = write_decop_csv(tmp_path / "BookTection.csv", decop_rows(n=1))
    text = path.read_text(encoding="utf-8-sig").replace("Length", "ID", 1)
    path.write_text(text, encoding="utf-8")
    err = _rejected(cli, db_path, "import", "decop", str(path))
    assert "row 1: field 'ID': column named twice in the header" in err


# --- queue create ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--seed", str(2**64)),
        ("--seed", "-1"),
        ("--per-value", str(2**70)),
        ("--bin-width", "inf"),
        ("--bin-width", "nan"),
        ("--bin-width", "1e-320"),
    ],
)
def test_queue_create_bounds(option: str, value: str, cli, db_path: Path) -> None:
    err = _rejected(cli, db_path, "queue", "create", "q", "--run", "r", option, value)
    assert option in err


# --- the database file ----------------------------------------------------------------------


def test_non_sqlite_file_is_refused(tmp_path: Path, cli) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"my notes, not a database\n" * 200)
    result = cli("runs", db=path)
    assert result.code == 2
    assert f"{path}: not a SQLite database" in result.err
    assert path.read_bytes() == b"my notes, not a database\n" * 200
    assert not Path(f"{path}-wal").exists()


def test_foreign_sqlite_database_is_refused_unchanged(tmp_path: Path, cli) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE people (name TEXT)")
    conn.execute("INSERT INTO people VALUES ('Ada')")
    conn.commit()
    conn.close()
    before = database_fingerprint(path)
    result = cli("runs", db=path)
    assert result.code == 2
    assert "not copyaudit's" in result.err and "people" in result.err
    assert database_fingerprint(path) == before


def test_empty_file_and_empty_database_are_initialised(tmp_path: Path, cli) -> None:
    empty_file = tmp_path / "empty.db"
    empty_file.write_bytes(b"")
    empty_db = tmp_path / "empty-sqlite.db"
    sqlite3.connect(empty_db).close()
    for path in (empty_file, empty_db):
        # a command that only reads initialises nothing (issue 33); one that writes does
        refused = cli("runs", db=path)
        assert refused.code == 2 and "an empty database" in refused.err
        assert cli("migrate", db=path).code == 0
        assert "suites" in database_fingerprint(path)[0]
        assert cli("runs", db=path).code == 0


# --- a full disk ----------------------------------------------------------------------------


@pytest.fixture
def full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every Store opened from now on may not grow its database by a page."""
    opened = Store.__init__

    def capped(self: Store, *args, **kwargs) -> None:
        opened(self, *args, **kwargs)
        pages = self.conn.execute("PRAGMA page_count").fetchone()[0]
        self.conn.execute(f"PRAGMA max_page_count = {pages}")

    monkeypatch.setattr(Store, "__init__", capped)


def test_full_disk_reads_work_and_writes_fail_clearly(
    tmp_path: Path, cli, db_path: Path, request: pytest.FixtureRequest
) -> None:
    make_run(cli, tmp_path, "literal", ["lit-1", "lit-2"])
    before = database_fingerprint(db_path)
    request.getfixturevalue("full_disk")
    assert cli("export", "generations").code == 0
    assert cli("verify").code == 0
    big = [literal_record(i, reference="text " * 2000) for i in range(3, 60)]
    result = cli("import", "literal", str(write_jsonl(tmp_path / "more.jsonl", big)))
    assert result.code == 2, result.err
    assert "disk full" in result.err and "internal error" not in result.err
    assert database_fingerprint(db_path) == before


def test_enospc_from_the_os_is_a_disk_full_error() -> None:
    import errno

    from copyaudit.errors import environment_error

    error = environment_error(OSError(errno.ENOSPC, "No space left on device"))
    assert error is not None and "disk full" in str(error)
    assert environment_error(OSError(errno.EACCES, "Permission denied")) is None


# --- found by the fuzz census -----------------------------------------------------------------


def test_workbook_with_damaged_sheet_xml(tmp_path: Path, cli, db_path: Path) -> None:
    import zipfile

    from tests.test_decop_results import SUSPECT, workbook_rows, write_suite, write_workbook

    assert cli("import", "decop", str(write_suite(tmp_path / "bt.csv")), "--suite", "bt").code == 0
    good = write_workbook(tmp_path / "good.xlsx", workbook_rows(SUSPECT, 1))
    path = tmp_path / f"{SUSPECT}_Paraphrases_Oversampling.xlsx"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(path, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename.startswith("xl/worksheets/"):
                data = data[: len(data) // 2] + b"<<" + data[len(data) // 2 :]
            dst.writestr(item, data)
    err = _rejected(cli, db_path, "import", "decop-results", str(path), "--model", "ChatGPT")
    assert f"{path}: a damaged Excel workbook" in err


def test_merge_of_a_database_with_non_utf8_text(tmp_path: Path, cli, db_path: Path) -> None:
    make_run(cli, tmp_path, "literal", ["lit-1"])
    with Store(db_path) as store:
        label(store, "r/lit-1/1", "ana", "literal", 0, "yes")
    other = tmp_path / "other.db"
    src, dst = sqlite3.connect(db_path), sqlite3.connect(other)
    src.backup(dst)
    src.close()
    triggers = [r[0] for r in dst.execute("SELECT name FROM sqlite_master WHERE type='trigger'")]
    for name in triggers:
        dst.execute(f'DROP TRIGGER "{name}"')
    dst.execute("UPDATE labels SET note = CAST(x'ff41' AS TEXT)")
    dst.commit()
    dst.close()
    target = tmp_path / "target.db"
    make_run(cli, tmp_path, "literal", ["lit-1"], db=target)
    before = database_fingerprint(target)
    result = cli("merge", str(other), db=target)
    assert result.code == 2, result.err
    assert f"{other}: a damaged database (a text value is not UTF-8)" in result.err
    assert database_fingerprint(target) == before


# --- numeric options: one type each (copyaudit.cli.options FiniteFloat, POSITIVE_INT, COUNT)


@pytest.mark.parametrize(
    "args",
    [
        ("run", "literal", "--topk-std", "inf"),
        ("run", "literal", "--topk-std", "nan"),
        ("run", "literal", "--rcad-alpha", "nan"),
        ("run", "literal", "--rcad-alpha", "-inf"),
        ("run", "literal", "--limit", "0"),
        ("run", "literal", "--limit", "-3"),
        ("run", "literal", "--shots", "-1"),
        ("run", "literal", "--seed", "-1"),
        ("takedown", "literal", "--limit", "0"),
        ("takedown", "literal", "--shots", "-2"),
        ("takedown", "literal", "--topk-std", "nan"),
        ("judge", "r", "--seed", str(2**64)),
    ],
)
def test_numeric_options_refuse_non_finite_and_non_positive(cli, db_path: Path, args) -> None:
    err = _rejected(cli, db_path, *args)
    assert f"Invalid value for '{args[-2]}'" in err and args[-1] in err


@pytest.mark.parametrize("bounds", ["nan,0.8", "0.2,inf"])
def test_notice_thresholds_must_be_finite(cli, db_path: Path, bounds: str) -> None:
    err = _rejected(cli, db_path, "report", "r", "--notice-threshold", f"notice_rouge={bounds}")
    assert f"notice_rouge={bounds}" in err and "finite" in err

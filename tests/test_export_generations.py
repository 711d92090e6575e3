"""Imported generations, exports and their round trips."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.conftest import database_fingerprint, write_jsonl
from tests.factories import RECORD_FACTORIES, decop_rows, literal_record, write_decop_csv


@pytest.fixture
def literal_suite(tmp_path: Path, cli) -> Path:
    path = write_jsonl(tmp_path / "lit.jsonl", [literal_record(i) for i in range(1, 4)])
    assert cli("import", "literal", str(path), "--suite", "lit").code == 0
    return path


def test_import_generations_keys_and_idempotence(
    literal_suite, tmp_path: Path, cli, db_path: Path
) -> None:
    gens = write_jsonl(
        tmp_path / "gens.jsonl",
        [
            {"case_id": "lit-1", "output": "an output [bold]x[/]"},
            {"case_id": "lit-1", "output": "second template", "template": 2},
            {"case_id": "lit-2", "output": ""},
        ],
    )
    result = cli(
        "import-generations", str(gens), "--run", "api", "--suite", "lit", "--model", "gpt-x"
    )
    assert result.code == 0, result.err
    assert "3 added" in result.out
    assert "api: not judged yet: copyaudit judge api" in result.err  # the next step
    before = database_fingerprint(db_path)
    again = cli("import-generations", str(gens), "--run", "api", "--suite", "lit")
    assert "0 added, 3 unchanged" in again.out
    assert "not judged" not in again.err  # nothing new to judge
    assert database_fingerprint(db_path) == before
    rows = [json.loads(x) for x in cli("export", "generations", "--run", "api").out.splitlines()]
    assert [r["generation"] for r in rows] == ["api/lit-1/1", "api/lit-1/2", "api/lit-2/1"]
    assert rows[0]["output"] == "an output [bold]x[/]" and rows[0]["source"] == "imported"
    runs = json.loads(cli("runs", "--format", "json").out)
    assert runs[0]["name"] == "api" and runs[0]["model"] == "gpt-x"
    assert runs[0]["status"] == "imported" and runs[0]["generations"] == 3


@pytest.mark.parametrize(
    ("records", "expected"),
    [
        ([{"case_id": "lit-9", "output": "x"}], "line 1: field 'case_id': no case 'lit-9'"),
        (
            [{"case_id": "lit-1", "output": "x"}, {"case_id": "lit-2"}],
            "line 2: field 'output': missing",
        ),
        (
            [{"case_id": "lit-1", "output": "x", "template": 0}],
            "line 1: field 'template': expected a positive integer",
        ),
        (
            [{"case_id": "lit-1", "output": "x"}, {"case_id": "lit-1", "output": "y"}],
            "line 2: field 'case_id': duplicate generation",
        ),
    ],
)
def test_bad_generations(
    records, expected: str, literal_suite, tmp_path: Path, cli, db_path: Path
) -> None:
    before = database_fingerprint(db_path)
    path = write_jsonl(tmp_path / "g.jsonl", records)
    result = cli("import-generations", str(path), "--run", "r", "--suite", "lit")
    assert result.code == 2 and expected in result.err and str(path) in result.err
    assert database_fingerprint(db_path) == before


def test_changed_generation_needs_replace(literal_suite, tmp_path: Path, cli) -> None:
    first = write_jsonl(tmp_path / "g1.jsonl", [{"case_id": "lit-1", "output": "a"}])
    second = write_jsonl(tmp_path / "g2.jsonl", [{"case_id": "lit-1", "output": "b"}])
    assert cli("import-generations", str(first), "--run", "r", "--suite", "lit").code == 0
    refused = cli("import-generations", str(second), "--run", "r", "--suite", "lit")
    assert refused.code == 2 and "line 1: field 'output'" in refused.err
    assert (
        cli("import-generations", str(second), "--run", "r", "--suite", "lit", "--replace").code
        == 0
    )


def test_unknown_suite_and_run(cli, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "g.jsonl", [{"case_id": "x", "output": "y"}])
    result = cli("import-generations", str(path), "--run", "r", "--suite", "nope")
    assert result.code == 2 and "no suite named 'nope'" in result.err
    result = cli("export", "generations", "--run", "missing")
    assert result.code == 2 and "no run named 'missing'" in result.err


@pytest.mark.parametrize("kind", [*sorted(RECORD_FACTORIES), "decop"])
@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_export_cases_round_trip(kind: str, fmt: str, tmp_path: Path, cli) -> None:
    if kind == "decop":
        source = write_decop_csv(
            tmp_path / "src.csv", decop_rows(n=3) + decop_rows("Other_-_Someone", label=0, n=2)
        )
    else:
        source = write_jsonl(
            tmp_path / "src.jsonl", [RECORD_FACTORIES[kind](i) for i in range(1, 4)]
        )
    assert cli("import", kind, str(source), "--suite", "orig").code == 0
    exported = tmp_path / f"exported.{fmt}"
    assert cli("export", "cases", "--suite", "orig", "--format", fmt, "-o", str(exported)).code == 0
    fresh = tmp_path / "fresh.db"
    if fmt == "csv" and kind != "decop":
        # CSV is a flat view for spreadsheets; check it holds every case and field.
        rows = list(csv.DictReader(io.StringIO(exported.read_text(encoding="utf-8"))))
        assert len(rows) == 3 and rows[0]["id"].endswith("-1")
        return
    assert cli("import", kind, str(exported), "--suite", "orig", db=fresh).code == 0
    original = cli("export", "cases", "--suite", "orig").out
    again = cli("export", "cases", "--suite", "orig", db=fresh).out
    assert original == again
    assert original.count("\n") == (5 if kind == "decop" else 3)


def test_export_judgments_and_labels_are_empty_but_valid(literal_suite, cli) -> None:
    for what in ("judgments", "labels"):
        result = cli("export", what)
        assert result.code == 0 and result.out == ""


def test_import_generations_directory_is_one_run_per_model_file(
    literal_suite, tmp_path: Path, cli, db_path: Path
) -> None:
    """A directory of per-model files: one run per file, named after it; the model from
    the rows' `model` field, else the file's stem; all or nothing."""
    folder = tmp_path / "outputs"
    folder.mkdir()
    write_jsonl(
        folder / "model-a.jsonl",
        [{"case_id": f"lit-{i}", "output": f"a{i}", "model": "org/model-a"} for i in (1, 2)],
    )
    write_jsonl(folder / "model-b.jsonl", [{"case_id": "lit-1", "output": "b1"}])
    (folder / "notes.txt").write_text("not a generations file", encoding="utf-8")
    result = cli("import-generations", str(folder), "--suite", "lit", "--run", "ext")
    assert result.code == 0, result.err
    assert result.out.splitlines() == [
        "ext-model-a: 2 added, 0 unchanged, 0 replaced (model org/model-a)",
        "ext-model-b: 1 added, 0 unchanged, 0 replaced (model model-b)",
    ]
    runs = {r["name"]: r for r in json.loads(cli("runs", "--format", "json").out)}
    assert {n: (r["model"], r["generations"]) for n, r in runs.items()} == {
        "ext-model-a": ("org/model-a", 2),
        "ext-model-b": ("model-b", 1),
    }
    # a row naming no case in the last file: the new run of the file before it is not kept
    write_jsonl(folder / "model-c.jsonl", [{"case_id": "lit-1", "output": "c1"}])
    write_jsonl(folder / "model-z.jsonl", [{"case_id": "lit-9", "output": "z"}])
    before = database_fingerprint(db_path)
    refused = cli("import-generations", str(folder), "--suite", "lit", "--run", "ext")
    assert refused.code == 2
    assert "model-z.jsonl: line 1: field 'case_id': no case 'lit-9'" in refused.err
    assert database_fingerprint(db_path) == before
    # two models in one file
    (folder / "model-z.jsonl").unlink()
    write_jsonl(
        folder / "model-d.jsonl",
        [
            {"case_id": "lit-1", "output": "d1", "model": "x"},
            {"case_id": "lit-2", "output": "d2", "model": "y"},
        ],
    )
    mixed = cli("import-generations", str(folder), "--suite", "lit", "--run", "ext")
    assert mixed.code == 2
    assert "model-d.jsonl: line 2: field 'model': 'y' differs from 'x'" in mixed.err
    assert database_fingerprint(db_path) == before
    one_model = cli("import-generations", str(folder), "--suite", "lit", "--model", "m")
    assert one_model.code == 2 and "--model is for one file" in one_model.err

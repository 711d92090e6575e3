"""Issue 36, tabular inputs: for every registered case importer (each study kind, read
from the registry) and for generations, the same records written as CSV, TSV, Parquet,
an Arrow stream, an Arrow file and a save_to_disk folder import as the same cases as
their JSON Lines; with every column renamed and read back through --map; and, for the
kinds whose records carry an `id`, without it (derived ids, the same in every format)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from copyaudit.columns import NO_MAP, ColumnMap
from copyaudit.engine.demo import samples_dir
from copyaudit.errors import InputError
from copyaudit.formats import load_cases, read_cases, read_generations
from copyaudit.studies.registry import STUDIES, task_kinds
from tests.tabular import SUFFIX, WRITERS

FORMATS = tuple(WRITERS)
PER_KIND = 5  # cases of each kind's bundled sample: every field kind, fast


def _records(kind: str) -> list[dict[str, Any]]:
    spec = STUDIES[kind]
    cases = load_cases(kind, samples_dir() / spec.samples[kind])[:PER_KIND]
    return [spec.to_record(c.case) for c in cases]


def _cases(kind: str, path: Path, columns: ColumnMap = NO_MAP) -> list[tuple]:
    loaded = read_cases(kind, path, columns=columns)
    return [(c.case.case_id, c.case.work, c.case.payload) for c in loaded.accept()]


def _write(tmp_path: Path, fmt: str, name: str, records: Sequence[dict[str, Any]]) -> Path:
    return WRITERS[fmt](tmp_path / f"{name}-{fmt}{SUFFIX[fmt]}", records)


def _renamed(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], ColumnMap]:
    """Every column named otherwise (`src_<field>`), and the map that reads it back."""
    fields = dict.fromkeys(k for r in records for k in r)
    columns = ColumnMap(tuple((f, f"src_{f}") for f in fields))
    return [{f"src_{k}": v for k, v in r.items()} for r in records], columns


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", task_kinds())
def test_every_format_imports_the_jsonl_cases(kind: str, fmt: str, tmp_path: Path) -> None:
    records = _records(kind)
    want = _cases(kind, _write(tmp_path, "jsonl", "base", records))
    assert len(want) == len(records) > 1
    assert _cases(kind, _write(tmp_path, fmt, "same", records)) == want
    renamed, columns = _renamed(records)
    assert _cases(kind, _write(tmp_path, fmt, "mapped", renamed), columns) == want


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", [k for k in task_kinds() if "id" in _records(k)[0]])
def test_without_ids_every_format_derives_the_same_ids(kind: str, fmt: str, tmp_path: Path):
    records = [{k: v for k, v in r.items() if k != "id"} for r in _records(kind)]
    want = _cases(kind, _write(tmp_path, "jsonl", "base", records))
    assert len({case_id for case_id, _, _ in want}) == len(records)
    got = read_cases(kind, _write(tmp_path, fmt, "same", records))
    assert [(c.case.case_id, c.case.work, c.case.payload) for c in got.accept()] == want
    assert got.notes == [f"ids derived from each case's content ({len(records)} cases had no id)"]


GENERATIONS = [
    {"case_id": "a", "output": "once upon a time", "template": 1, "model": "m"},
    {"case_id": "b", "output": "", "template": 2, "model": "m"},
    {"case_id": "a", "output": "it was the best", "template": 2, "model": "m"},
]


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_imports_the_jsonl_generations(fmt: str, tmp_path: Path) -> None:
    def rows(path: Path, columns: ColumnMap = NO_MAP) -> list[tuple]:
        loaded = read_generations(path, columns)
        return [(g.case_id, g.template, g.output, g.model) for g in loaded.accept()]

    want = rows(_write(tmp_path, "jsonl", "base", GENERATIONS))
    assert len(want) == 3
    assert rows(_write(tmp_path, fmt, "same", GENERATIONS)) == want
    renamed, columns = _renamed(GENERATIONS)
    assert rows(_write(tmp_path, fmt, "mapped", renamed), columns) == want


@pytest.mark.parametrize("fmt", ["jsonl", "parquet", "csv"])
def test_a_bad_row_names_its_row_and_field(fmt: str, tmp_path: Path) -> None:
    records = _records("extraction")
    records[2]["prefix"] = ""
    path = _write(tmp_path, fmt, "bad", records)
    loaded = read_cases("extraction", path)
    list(loaded.stream())
    [problem] = loaded.problems
    # JSON Lines counts lines; a CSV's header is row 1; Parquet's first row is row 1
    where = {"jsonl": ("line", 3), "csv": ("row", 4), "parquet": ("row", 3)}[fmt]
    assert (problem.unit, problem.line, problem.field) == (*where, "prefix")
    assert problem.reason == "must not be empty"


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_map_errors_name_the_unknown_column_or_field(fmt: str, tmp_path: Path) -> None:
    records = _records("extraction")
    path = _write(tmp_path, fmt, "cases", records)
    lacking = _write(
        tmp_path, fmt, "lacking", [{k: v for k, v in r.items() if k != "prefix"} for r in records]
    )
    with pytest.raises(
        InputError, match=r"--map prefix=prompt: no (column|record has a field) 'prompt'"
    ):
        list(read_cases("extraction", lacking, columns=ColumnMap.parse(["prefix=prompt"])).stream())
    unknown = ColumnMap.parse(["prefx=prefix", "prefix=prefix"])
    with pytest.raises(InputError, match="--map prefx=prefix: not a field this importer reads"):
        list(read_cases("extraction", path, columns=unknown).stream())
    clash = ColumnMap.parse(["prefix=reference"])
    with pytest.raises(
        InputError, match="--map prefix=reference, but the file has a column 'prefix' too"
    ):
        list(read_cases("extraction", path, columns=clash).stream())


def test_map_on_the_cli(cli, tmp_path: Path) -> None:
    bad = cli("import", "extraction", "x.jsonl", "--map", "prefix")
    assert bad.code == 2 and "--map 'prefix': expected FIELD=COLUMN" in bad.err
    records = [
        {"prompt": r["prefix"], "completion": r["reference"], "title": r["title"]}
        for r in _records("extraction")
    ]
    path = _write(tmp_path, "parquet", "hf", records)
    result = cli(
        "import", "extraction", str(path), "--map", "prefix=prompt", "--map", "reference=completion"
    )
    assert result.code == 0, result.err
    assert f"{len(records)} added" in result.out and "ids derived" in result.out


def test_a_folder_datasets_itself_saved_imports(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")  # not a dependency: where it is installed
    import pyarrow as pa

    records = _records("nonliteral")
    want = _cases("nonliteral", _write(tmp_path, "jsonl", "base", records))
    # a given fingerprint: hashing the table (dill) fails under some dill/pyarrow pairs
    table = datasets.table.InMemoryTable(pa.Table.from_pylist(records))
    dataset = datasets.Dataset(table, fingerprint="test")
    saved = tmp_path / "saved"
    dataset.save_to_disk(str(saved), num_shards=2)
    assert _cases("nonliteral", saved) == want
    first = sorted(saved.glob("*.arrow"))[0]
    assert _cases("nonliteral", first) == want[: len(_cases("nonliteral", first))]
    both = tmp_path / "both"
    datasets.DatasetDict({"train": dataset}).save_to_disk(str(both))
    assert _cases("nonliteral", both / "train") == want
    with pytest.raises(InputError, match="a `datasets` DatasetDict with splits train"):
        read_cases("nonliteral", both)

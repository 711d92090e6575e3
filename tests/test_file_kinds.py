"""Issue 36: each misleading error of the issue, replaced. A Parquet file was "not valid
UTF-8", a `datasets` save_to_disk directory "no such file", its `.arrow` shard "not
valid UTF-8", a CSV of cases or generations "malformed JSON", Hugging Face column names
"field 'prefix': missing from every record", a file without ids "field 'id' missing".
The formats are read now; what cannot be read says what it is."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from copyaudit.errors import InputError
from copyaudit.formats import read_cases, read_generations
from copyaudit.records import read_json_records
from tests.conftest import database_fingerprint, write_jsonl
from tests.tabular import write_arrow_stream, write_dataset_dir

CASES = [
    {"id": "a", "title": "T", "prefix": "Once upon", "reference": "a time"},
    {"id": "b", "title": "T", "prefix": "It was", "reference": "the best of times"},
]


def _refusal(read, path: Path) -> str:
    with pytest.raises(InputError) as caught:
        read(path)
    return str(caught.value)


def _ids(path: Path) -> list[str]:
    return [c.case.case_id for c in read_cases("extraction", path).stream()]


def test_a_parquet_file_is_read_and_a_damaged_one_named(tmp_path: Path) -> None:
    path = tmp_path / "cases.parquet"
    pq.write_table(pa.Table.from_pylist(CASES), path)
    assert _ids(path) == ["a", "b"]
    path.write_bytes(b"PAR1" + bytes(range(200)) + b"PAR1")
    message = _refusal(lambda p: list(read_cases("extraction", p).stream()), path)
    assert message.startswith(f"{path}: not a readable Parquet file (")
    assert "UTF-8" not in message


def test_a_save_to_disk_directory_is_read(tmp_path: Path) -> None:
    saved = write_dataset_dir(tmp_path / "saved", CASES)
    assert _ids(saved) == ["a", "b"]


def test_a_plain_directory_is_a_directory(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert _refusal(read_generations, plain) == f"{plain}: is a directory, not a file"
    assert _refusal(lambda p: read_cases("literal", p), plain).endswith(
        "is a directory, not a file"
    )
    assert _refusal(read_generations, tmp_path / "gone.jsonl").endswith("no such file")


def test_a_dataset_dict_directory_names_its_splits(tmp_path: Path) -> None:
    root = tmp_path / "dict"
    write_dataset_dir(root / "train", CASES)
    write_dataset_dir(root / "test", CASES[:1])
    (root / "dataset_dict.json").write_text(json.dumps({"splits": ["train", "test"]}))
    message = _refusal(lambda p: read_cases("extraction", p), root)
    assert message == (
        f"{root}: is a directory (a `datasets` DatasetDict with splits test, train): "
        f"give one split's folder, such as {root / 'test'}"
    )


def test_an_arrow_shard_is_read_and_a_damaged_one_named(tmp_path: Path) -> None:
    path = write_arrow_stream(tmp_path / "data-00000-of-00001.arrow", CASES)
    assert _ids(path) == ["a", "b"]
    path.write_bytes(b"\xff\xff\xff\xff\x10\x01\x00\x00" + bytes(range(120)))
    message = _refusal(lambda p: list(read_cases("extraction", p).stream()), path)
    assert message.startswith(f"{path}: not a readable Arrow IPC file (")
    assert "UTF-8" not in message


def test_a_file_named_parquet_that_is_not(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "cases.parquet", CASES)
    message = _refusal(lambda p: read_cases("extraction", p), path)
    assert "named as a Parquet file, but its first bytes are not Parquet's" in message


def test_a_csv_of_cases_and_of_generations_is_read(tmp_path: Path) -> None:
    cases = tmp_path / "cases.csv"
    cases.write_text("id,title,prefix,reference\na,T,Once upon,a time\n", encoding="utf-8")
    assert _ids(cases) == ["a"]
    generations = tmp_path / "generations.tsv"
    generations.write_text("case_id\toutput\ttemplate\na\tonce\t2\n", encoding="utf-8")
    [row] = read_generations(generations).stream()
    assert (row.line, row.case_id, row.output, row.template) == (2, "a", "once", 2)


def test_hugging_face_names_are_mapped_and_unmapped_ones_hint_at_map(cli, tmp_path: Path):
    rows = [{"title": "T", "prompt": c["prefix"], "continuation": c["reference"]} for c in CASES]
    path = write_jsonl(tmp_path / "hf.jsonl", rows)
    refused = cli("import", "extraction", str(path))
    assert refused.code == 2
    assert "field 'prefix': missing from every record (a required field; --map prefix=COLUMN" in (
        refused.err
    )
    mapped = ("--map", "prefix=prompt", "--map", "reference=continuation")
    result = cli("import", "extraction", str(path), *mapped)
    assert result.code == 0, result.err
    assert "2 added" in result.out


def test_a_file_without_ids_gets_derived_ids_said_in_the_summary(cli, tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "no_ids.jsonl", [{k: v for k, v in c.items() if k != "id"} for c in CASES]
    )
    result = cli("import", "extraction", str(path))
    assert result.code == 0, result.err
    assert "ids derived from each case's content (2 cases had no id)" in result.out
    ids = _ids(path)
    assert len(set(ids)) == 2 and all(len(i) == 16 for i in ids)
    assert _ids(path) == ids  # the same content, the same ids


def test_a_label_file_that_is_parquet_says_so(cli, tmp_path: Path) -> None:
    path = tmp_path / "labels.parquet"
    pq.write_table(pa.Table.from_pylist([{"generation": "x"}]), path)
    result = cli("import-labels", str(path))
    assert result.code == 2
    assert "this is a Parquet file: convert it to JSON Lines first" in result.err
    assert "UTF-8" not in result.err


def test_json_in_a_csv_named_file_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "cases.csv"
    path.write_text('{"id": "a", "title": "T"}\n', encoding="utf-8")
    assert [r.data["id"] for r in read_json_records(path)] == ["a"]


def test_the_cli_exits_2_and_leaves_the_database_alone(cli, db_path: Path, tmp_path: Path):
    case = {"id": "a", "title": "T", "input": "Once", "reference": "upon a time"}
    assert cli("import", "literal", str(write_jsonl(tmp_path / "ok.jsonl", [case]))).code == 0
    before = database_fingerprint(db_path)
    path = tmp_path / "cases.parquet"
    path.write_bytes(b"PAR1" + bytes(range(200)) + b"PAR1")
    result = cli("import", "literal", str(path))
    assert result.code == 2 and "not a readable Parquet file" in result.err
    assert database_fingerprint(db_path) == before

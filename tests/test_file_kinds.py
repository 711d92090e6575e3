"""Inputs that are not JSON text are refused by what they are (issue 36): a Parquet
file was "not valid UTF-8", a `datasets` save_to_disk directory "no such file", its
`.arrow` shard "not valid UTF-8", a CSV of cases or generations "malformed JSON". No
Parquet/Arrow writer is installed here: the files carry those formats' magic bytes,
which is all the check reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from copyaudit.errors import InputError
from copyaudit.formats import read_cases, read_generations
from copyaudit.records import read_json_records
from tests.conftest import database_fingerprint, write_jsonl

PARQUET = b"PAR1" + bytes(range(200)) + b"PAR1"
ARROW_STREAM = b"\xff\xff\xff\xff\x10\x01\x00\x00" + bytes(range(120))  # datasets' .arrow
ARROW_FILE = b"ARROW1\x00\x00" + bytes(range(120))


def _refusal(read, path: Path) -> str:
    with pytest.raises(InputError) as caught:
        read(path)
    return str(caught.value)


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("cases.parquet", PARQUET, "this is a Parquet file"),
        ("data-00000-of-00001.arrow", ARROW_STREAM, "this is an Arrow file"),
        ("cases.feather", ARROW_FILE, "this is an Arrow file"),
        ("cases.csv", b"id,title,prefix,reference\na,T,p,r\n", "this is a CSV file"),
        ("cases.tsv", b"id\ttitle\tprefix\treference\n", "this is a TSV file"),
    ],
)
def test_a_file_that_is_not_json_is_named(tmp_path: Path, name: str, content: bytes, says: str):
    path = tmp_path / name
    path.write_bytes(content)
    message = _refusal(lambda p: list(read_cases("extraction", p).stream()), path)
    assert message.startswith(f"{path}: {says}") and "UTF-8" not in message
    assert "malformed" not in message
    assert says in _refusal(lambda p: list(read_generations(p).stream()), path)


def test_a_directory_is_a_directory(tmp_path: Path) -> None:
    saved = tmp_path / "saved"
    saved.mkdir()
    (saved / "dataset_info.json").write_text("{}", encoding="utf-8")
    (saved / "state.json").write_text("{}", encoding="utf-8")
    message = _refusal(lambda p: read_cases("literal", p), saved)
    assert message == f"{saved}: is a directory (a `datasets` save_to_disk folder): " + (
        "convert it to JSON Lines first (this format is not read yet)"
    )
    plain = tmp_path / "plain"
    plain.mkdir()
    assert _refusal(read_generations, plain) == f"{plain}: is a directory, not a file"
    assert _refusal(read_generations, tmp_path / "gone.jsonl").endswith("no such file")


def test_json_in_a_csv_named_file_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "cases.csv"
    path.write_text('{"id": "a", "title": "T"}\n', encoding="utf-8")
    assert [r.data["id"] for r in read_json_records(path)] == ["a"]


def test_the_cli_exits_2_and_leaves_the_database_alone(cli, db_path: Path, tmp_path: Path):
    case = {"id": "a", "title": "T", "input": "Once", "reference": "upon a time"}
    assert cli("import", "literal", str(write_jsonl(tmp_path / "ok.jsonl", [case]))).code == 0
    before = database_fingerprint(db_path)
    path = tmp_path / "cases.parquet"
    path.write_bytes(PARQUET)
    result = cli("import", "literal", str(path))
    assert result.code == 2 and "this is a Parquet file" in result.err
    assert database_fingerprint(db_path) == before

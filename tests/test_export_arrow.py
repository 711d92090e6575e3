"""Issue 36, export: a run's generations and judgments as Parquet and as a folder
`datasets.load_from_disk` reads, through the same safe output path as -o. Read back
with pyarrow (and with `datasets` where it is installed); the generations import back."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest

from tests.conftest import database_fingerprint, write_jsonl
from tests.factories import literal_record

OUTPUTS = [
    {"case_id": "lit-1", "output": "an output [bold]x[/]"},
    {"case_id": "lit-1", "output": "second template", "template": 2},
    {"case_id": "lit-2", "output": ""},
]


@pytest.fixture
def judged_run(tmp_path: Path, cli) -> str:
    cases = write_jsonl(tmp_path / "lit.jsonl", [literal_record(i) for i in range(1, 4)])
    assert cli("import", "literal", str(cases), "--suite", "lit").code == 0
    gens = write_jsonl(tmp_path / "gens.jsonl", OUTPUTS)
    assert cli("import-generations", str(gens), "--run", "api", "--suite", "lit").code == 0
    assert cli("judge", "api", "--judges", "literal").code == 0
    return "api"


def _jsonl(cli, what: str) -> list[dict]:
    return [json.loads(line) for line in cli("export", what, "--run", "api").out.splitlines()]


def _text(value):
    """How a list or object cell is written (its JSON text, as in CSV)."""
    return json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else value


@pytest.mark.parametrize("what", ["generations", "judgments"])
def test_parquet_holds_the_jsonl_rows(what: str, judged_run: str, cli, tmp_path: Path) -> None:
    out = tmp_path / f"{what}.parquet"
    result = cli("export", what, "--run", judged_run, "--format", "parquet", "-o", str(out))
    assert result.code == 0, result.err
    want = [{k: _text(v) for k, v in row.items()} for row in _jsonl(cli, what)]
    assert want and pq.read_table(out).to_pylist() == want
    assert out.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("what", ["generations", "judgments"])
def test_datasets_folder_as_save_to_disk_writes_it(what, judged_run, cli, tmp_path: Path) -> None:
    out = tmp_path / what
    result = cli("export", what, "--run", judged_run, "--format", "datasets", "-o", str(out))
    assert result.code == 0, result.err
    state = json.loads((out / "state.json").read_text(encoding="utf-8"))
    info = json.loads((out / "dataset_info.json").read_text(encoding="utf-8"))
    [shard] = [out / f["filename"] for f in state["_data_files"]]
    with ipc.open_stream(str(shard)) as reader:
        table = reader.read_all()
    want = [{k: _text(v) for k, v in row.items()} for row in _jsonl(cli, what)]
    assert table.to_pylist() == want
    assert list(info["features"]) == list(want[0])
    assert json.loads(table.schema.metadata[b"huggingface"])["info"]["features"] == info["features"]


def test_datasets_loads_the_folder(judged_run: str, cli, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")  # not a dependency: where it is installed
    out = tmp_path / "judgments"
    assert cli("export", "judgments", "--format", "datasets", "-o", str(out)).code == 0
    want = [{k: _text(v) for k, v in row.items()} for row in _jsonl(cli, "judgments")]
    assert datasets.load_from_disk(str(out)).to_list() == want


@pytest.mark.parametrize(("fmt", "name"), [("parquet", "g.parquet"), ("datasets", "g")])
def test_exported_generations_import_back(fmt, name, judged_run, cli, tmp_path: Path) -> None:
    out = tmp_path / name
    assert cli("export", "generations", "--format", fmt, "-o", str(out)).code == 0
    result = cli("import-generations", str(out), "--run", "again", "--suite", "lit")
    assert result.code == 0, result.err
    assert "3 added" in result.out and "warning" not in result.err
    again = {(r["case_id"], r["template"], r["output"]) for r in _jsonl_run(cli, "again")}
    assert again == {(r["case_id"], r.get("template", 1), r["output"]) for r in OUTPUTS}


def _jsonl_run(cli, run: str) -> list[dict]:
    return [json.loads(x) for x in cli("export", "generations", "--run", run).out.splitlines()]


def test_the_safe_output_path_holds(judged_run, cli, db_path: Path, tmp_path: Path) -> None:
    before = database_fingerprint(db_path)
    over_db = cli("export", "generations", "--format", "parquet", "-o", str(db_path), "--force")
    assert over_db.code == 2 and "is the database" in over_db.err
    assert database_fingerprint(db_path) == before
    folder = tmp_path / "g"
    assert cli("export", "generations", "--format", "datasets", "-o", str(folder)).code == 0
    again = cli("export", "generations", "--format", "datasets", "-o", str(folder))
    assert again.code == 2 and "already exists; --force overwrites it" in again.err
    assert (
        cli("export", "generations", "--format", "datasets", "-o", str(folder), "--force").code == 0
    )
    assert sorted(p.name for p in folder.iterdir()) == [
        "data-00000-of-00001.arrow",
        "dataset_info.json",
        "state.json",
    ]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".g.")]  # no leftovers
    plain = tmp_path / "plain"
    plain.mkdir()
    refused = cli("export", "generations", "--format", "datasets", "-o", str(plain), "--force")
    assert refused.code == 2 and "is a directory" in refused.err
    needs_o = cli("export", "generations", "--format", "parquet")
    assert needs_o.code == 2 and "name it with -o" in needs_o.err
    cases = cli("export", "cases", "--format", "parquet", "-o", str(tmp_path / "c.parquet"))
    assert cases.code == 2 and "is for generations and judgments" in cases.err

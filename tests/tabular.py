"""Writing records in each format users bring, for the import tests: CSV and TSV (a
list or object cell as its JSON text, an absent value as an empty cell), Parquet, an
Arrow IPC stream (what `datasets` writes) and a save_to_disk folder laid out as
`Dataset.save_to_disk` lays it out. Written here with pyarrow and csv directly, not
with copyaudit's exporter, so that reading is not checked against its own writer."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from tests.conftest import write_jsonl


def _columns(records: Sequence[dict[str, Any]]) -> list[str]:
    names: dict[str, None] = {}
    for record in records:
        names.update(dict.fromkeys(record))
    return list(names)


def _delimited(path: Path, records: Sequence[dict[str, Any]], delimiter: str) -> Path:
    def cell(value: Any) -> str:
        if value is None:
            return ""
        return (
            json.dumps(value, ensure_ascii=False) if isinstance(value, list | dict) else str(value)
        )

    columns = _columns(records)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter=delimiter)
        writer.writerow(columns)
        for record in records:
            writer.writerow([cell(record.get(c)) for c in columns])
    return path


def write_csv(path: Path, records: Sequence[dict[str, Any]]) -> Path:
    return _delimited(path, records, ",")


def write_tsv(path: Path, records: Sequence[dict[str, Any]]) -> Path:
    return _delimited(path, records, "\t")


def _table(records: Sequence[dict[str, Any]]) -> pa.Table:
    columns = _columns(records)
    return pa.Table.from_pylist([{c: r.get(c) for c in columns} for r in records])


def write_parquet(path: Path, records: Sequence[dict[str, Any]], row_group: int = 2) -> Path:
    pq.write_table(_table(records), path, row_group_size=row_group)  # several row groups
    return path


def _stream(path: Path, table: pa.Table) -> Path:
    with pa.OSFile(str(path), "wb") as sink, ipc.new_stream(sink, table.schema) as writer:
        for batch in table.to_batches(max_chunksize=2):
            writer.write_batch(batch)
    return path


def write_arrow_stream(path: Path, records: Sequence[dict[str, Any]]) -> Path:
    return _stream(path, _table(records))


def write_arrow_file(path: Path, records: Sequence[dict[str, Any]]) -> Path:
    table = _table(records)
    with pa.OSFile(str(path), "wb") as sink, ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=2)
    return path


def write_dataset_dir(folder: Path, records: Sequence[dict[str, Any]], shards: int = 2) -> Path:
    """A save_to_disk folder: `shards` .arrow streams, state.json listing them in order,
    dataset_info.json."""
    folder.mkdir(parents=True)
    table = _table(records)  # one schema for every shard, as datasets writes them
    shards = max(1, min(shards, len(records)))
    size = -(-len(records) // shards)
    names = []
    for i in range(shards):
        name = f"data-{i:05d}-of-{shards:05d}.arrow"
        _stream(folder / name, table.slice(i * size, size))
        names.append(name)
    state = {"_data_files": [{"filename": n} for n in names], "_fingerprint": "f", "_split": None}
    (folder / "state.json").write_text(json.dumps(state), encoding="utf-8")
    (folder / "dataset_info.json").write_text(json.dumps({"features": {}}), encoding="utf-8")
    return folder


# each format's writer, by the name the tests show; every one holds the same records
WRITERS: dict[str, Callable[[Path, Sequence[dict[str, Any]]], Path]] = {
    "jsonl": write_jsonl,
    "csv": write_csv,
    "tsv": write_tsv,
    "parquet": write_parquet,
    "arrow": write_arrow_stream,
    "feather": write_arrow_file,
    "save_to_disk": write_dataset_dir,
}
SUFFIX = {
    "jsonl": ".jsonl",
    "csv": ".csv",
    "tsv": ".tsv",
    "parquet": ".parquet",
    "arrow": ".arrow",
    "feather": ".feather",
    "save_to_disk": "",
}

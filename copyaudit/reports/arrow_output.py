"""Exported rows as Parquet, or as a folder `datasets.load_from_disk` reads: one Arrow
IPC stream shard (`data-00000-of-00001.arrow`), `dataset_info.json` (its features) and
`state.json`, as `Dataset.save_to_disk` writes them. The rows stream in batches; the
column types come from the first batch (text, integer, real, boolean; a list or an
object is written as its JSON text, as in CSV; a column empty in the first batch is
text). pyarrow is imported when such an export is asked for."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from copyaudit.errors import UserError
from copyaudit.file_kinds import DATASET_INFO, DATASET_STATE
from copyaudit.hashing import file_sha256

BATCH_ROWS = 4096
SHARD = "data-00000-of-00001.arrow"  # save_to_disk's name for a one-shard dataset
# Arrow type name -> the `datasets` feature dtype it loads as
FEATURE_DTYPES = {"string": "string", "int64": "int64", "double": "float64", "bool": "bool"}


def _arrow_type(values: list[Any]) -> Any:
    import pyarrow as pa

    kinds = {type(v) for v in values if v is not None}
    if kinds == {bool}:
        return pa.bool_()
    if kinds == {int}:
        return pa.int64()
    if kinds and kinds <= {int, float}:
        return pa.float64()
    return pa.string()


def _text(value: Any) -> Any:
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return value


def _batches(rows: Iterable[dict[str, Any]]) -> tuple[Any, Iterator[Any]] | None:
    """(schema, record batches) of `rows`; None when there is no row."""
    import pyarrow as pa

    it = iter(rows)
    first = list(itertools.islice(it, BATCH_ROWS))
    if not first:
        return None
    names = list(first[0])
    schema = pa.schema(
        [(name, _arrow_type([_text(row.get(name)) for row in first])) for name in names]
    )

    def batch(chunk: list[dict[str, Any]]) -> Any:
        arrays = []
        for field in schema:
            values = [_text(row.get(field.name)) for row in chunk]
            if pa.types.is_string(field.type):
                values = [v if v is None or isinstance(v, str) else str(v) for v in values]
            try:
                arrays.append(pa.array(values, type=field.type))
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as exc:
                raise UserError(
                    f"column '{field.name}' changes type along the rows ({exc})"
                ) from None
        return pa.RecordBatch.from_arrays(arrays, schema=schema)

    def batches() -> Iterator[Any]:
        chunk = first
        while chunk:
            yield batch(chunk)
            chunk = list(itertools.islice(it, BATCH_ROWS))

    return schema, batches()


def write_parquet(rows: Iterable[dict[str, Any]], path: Path) -> int:
    """`rows` as a Parquet file at `path` (one row group per batch); how many."""
    import pyarrow.parquet as pq

    opened = _batches(rows)
    if opened is None:
        raise UserError("nothing to export: no rows")
    schema, batches = opened
    count = 0
    with pq.ParquetWriter(str(path), schema) as writer:
        for batch in batches:
            writer.write_batch(batch)
            count += batch.num_rows
    return count


def dataset_features(schema: Any) -> dict[str, Any]:
    """The `datasets` Features of an Arrow schema of flat columns, as dataset_info.json holds."""
    return {
        field.name: {"dtype": FEATURE_DTYPES[str(field.type)], "_type": "Value"} for field in schema
    }


def write_dataset_dir(rows: Iterable[dict[str, Any]], folder: Path) -> int:
    """`rows` as a save_to_disk folder at `folder` (which exists, empty); how many."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    opened = _batches(rows)
    if opened is None:
        raise UserError("nothing to export: no rows")
    schema, batches = opened
    features = dataset_features(schema)
    # datasets reads its features from the shard's schema metadata as well
    schema = schema.with_metadata({"huggingface": json.dumps({"info": {"features": features}})})
    count = 0
    with pa.OSFile(str(folder / SHARD), "wb") as sink, ipc.new_stream(sink, schema) as writer:
        for batch in batches:
            writer.write_batch(pa.RecordBatch.from_arrays(batch.columns, schema=schema))
            count += batch.num_rows
    info = {
        "citation": "",
        "description": "",
        "features": features,
        "homepage": "",
        "license": "",
    }
    state: dict[str, object] = {
        "_data_files": [{"filename": SHARD}],
        "_fingerprint": file_sha256(folder / SHARD)[:16],  # datasets' cache key
        "_format_columns": None,
        "_format_kwargs": {},
        "_format_type": None,
        "_output_all_columns": False,
        "_split": None,
    }
    (folder / DATASET_INFO).write_text(json.dumps(info, indent=2), encoding="utf-8")
    (folder / DATASET_STATE).write_text(json.dumps(state, indent=2), encoding="utf-8")
    return count

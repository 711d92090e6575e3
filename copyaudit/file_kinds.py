"""What an input is, by its content first and its name second: JSON text, CSV, TSV,
Parquet, an Arrow IPC file or stream (a `datasets` `.arrow` shard), or a `datasets`
`save_to_disk` directory. Telling them apart here is what keeps a Parquet file from
reading as "not valid UTF-8" and a directory as "no such file". Recognised by magic
bytes, a directory's marker files and the name's suffix; nothing is decoded here."""

from __future__ import annotations

from pathlib import Path

from copyaudit.errors import InputError

PARQUET_MAGIC = b"PAR1"  # a Parquet file starts (and ends) with it
ARROW_FILE_MAGIC = b"ARROW1"  # Arrow IPC file format
ARROW_STREAM_MARKER = b"\xff\xff\xff\xff"  # Arrow IPC stream (`datasets` .arrow files)
# what `datasets.Dataset.save_to_disk` writes beside its .arrow shards
DATASET_STATE = "state.json"
DATASET_INFO = "dataset_info.json"
DATASET_DICT = "dataset_dict.json"  # a DatasetDict: one sub-folder per split
CONVERT = "convert it to JSON Lines first (this format is not read yet)"

JSON, CSV, TSV, PARQUET, ARROW, DATASETS = "json", "csv", "tsv", "parquet", "arrow", "datasets"
# how each kind is named in messages
NAMES = {
    JSON: "JSON",
    CSV: "CSV",
    TSV: "TSV",
    PARQUET: "Parquet",
    ARROW: "Arrow",
    DATASETS: "`datasets` save_to_disk",
}
# the suffixes a file of each kind usually has (a directory of generation files lists them)
SUFFIXES = {
    JSON: (".jsonl", ".json"),
    CSV: (".csv",),
    TSV: (".tsv", ".tab"),
    PARQUET: (".parquet", ".pq"),
    ARROW: (".arrow", ".feather", ".ipc"),
}
_BY_SUFFIX = {suffix: kind for kind, suffixes in SUFFIXES.items() for suffix in suffixes}


def is_datasets_dir(path: str | Path) -> bool:
    """Whether `path` is a folder `Dataset.save_to_disk` wrote (one split)."""
    target = Path(path)
    return target.is_dir() and (target / DATASET_STATE).is_file()


def detect(path: str | Path) -> str:
    """The kind of `path` (JSON, CSV, ...), or InputError saying what it is when it can
    be none of them: missing, a plain directory, a DatasetDict folder, or a file named
    as Parquet/Arrow whose bytes are not."""
    target = Path(path)
    if target.is_dir():
        if is_datasets_dir(target):
            return DATASETS
        if (target / DATASET_DICT).is_file():
            splits = sorted(p.name for p in target.iterdir() if is_datasets_dir(p))
            raise InputError(
                path,
                None,
                None,
                "is a directory (a `datasets` DatasetDict with splits "
                f"{', '.join(splits) or 'none'}): give one split's folder, such as "
                f"{target / (splits[0] if splits else 'train')}",
            )
        raise InputError(path, None, None, "is a directory, not a file")
    if not target.is_file():
        raise InputError(path, None, None, "no such file")
    with open(target, "rb") as stream:
        head = stream.read(4096)
    if head.startswith(PARQUET_MAGIC):
        return PARQUET
    if head.startswith((ARROW_FILE_MAGIC, ARROW_STREAM_MARKER)):
        return ARROW
    named = _BY_SUFFIX.get(target.suffix.lower(), JSON)
    if named in (PARQUET, ARROW):
        raise InputError(
            path,
            None,
            None,
            f"named as a {NAMES[named]} file, but its first bytes are not {NAMES[named]}'s "
            "(a truncated download, or another format renamed)",
        )
    if named in (CSV, TSV) and head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith((b"[", b"{")):
        return JSON  # JSON saved under a .csv name: its content decides
    return named


def refuse_non_json(path: str | Path) -> None:
    """Raise InputError naming what `path` is when it cannot be a JSON/JSONL file: for
    the readers that take JSON only (label and event files)."""
    kind = detect(path)
    if kind == DATASETS:
        raise InputError(
            path, None, None, f"is a directory (a `datasets` save_to_disk folder): {CONVERT}"
        )
    if kind in (PARQUET, ARROW):
        raise InputError(
            path, None, None, f"this is a{'n' * (kind == ARROW)} {NAMES[kind]} file: {CONVERT}"
        )
    if kind in (CSV, TSV):
        raise InputError(
            path,
            None,
            None,
            f"this is a {NAMES[kind]} file: this reads JSON or JSON Lines; convert it first",
        )

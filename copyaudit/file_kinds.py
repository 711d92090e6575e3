"""What an input that is not JSON text is, so that refusing it names it: a directory (a
`datasets` `save_to_disk` folder, say), a Parquet file, an Arrow file, or a CSV/TSV file
given where JSON is read. Without this a Parquet file reads as "not valid UTF-8" and a
directory as "no such file". Recognised by magic bytes and by name only; none of these
formats is read here."""

from __future__ import annotations

from pathlib import Path

from copyaudit.errors import InputError

PARQUET_MAGIC = b"PAR1"  # a Parquet file starts (and ends) with it
ARROW_FILE_MAGIC = b"ARROW1"  # Arrow IPC file format
ARROW_STREAM_MARKER = b"\xff\xff\xff\xff"  # Arrow IPC stream (`datasets` .arrow files)
DATASETS_DIR_FILES = ("dataset_info.json", "state.json", "dataset_dict.json")
CONVERT = "convert it to JSON Lines first (this format is not read yet)"


def refuse_non_json(path: str | Path) -> None:
    """Raise InputError naming what `path` is when it cannot be a JSON/JSONL file:
    missing, a directory, Parquet, Arrow, or a CSV/TSV file whose text is not JSON."""
    target = Path(path)
    if target.is_dir():
        if any((target / name).is_file() for name in DATASETS_DIR_FILES):
            raise InputError(
                path, None, None, f"is a directory (a `datasets` save_to_disk folder): {CONVERT}"
            )
        raise InputError(path, None, None, "is a directory, not a file")
    if not target.is_file():
        raise InputError(path, None, None, "no such file")
    with open(target, "rb") as stream:
        head = stream.read(4096)
    if head.startswith(PARQUET_MAGIC):
        raise InputError(path, None, None, f"this is a Parquet file: {CONVERT}")
    if head.startswith((ARROW_FILE_MAGIC, ARROW_STREAM_MARKER)):
        raise InputError(path, None, None, f"this is an Arrow file: {CONVERT}")
    suffix = target.suffix.lower()
    if suffix in (".csv", ".tsv") and not head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(
        (b"[", b"{")
    ):
        name = suffix[1:].upper()
        raise InputError(
            path,
            None,
            None,
            f"this is a {name} file: this importer reads JSON or JSON Lines; convert it first",
        )

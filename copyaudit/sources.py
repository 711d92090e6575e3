"""The one reader every importer of cases and generations calls: a file's records
whatever it is (JSON array or JSON Lines, CSV, TSV, Parquet, an Arrow file, a
`datasets` save_to_disk folder; copyaudit.file_kinds tells which), streamed, each with
its line or row for errors, and with the `--map FIELD=COLUMN` in force applied
(copyaudit.columns). A parser sees the same Record whatever the format."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from copyaudit.columns import ColumnMap
from copyaudit.columns import current as current_map
from copyaudit.errors import InputError
from copyaudit.file_kinds import CSV, JSON, TSV, detect
from copyaudit.records import Fields, Record, open_csv, printable, read_json_records
from copyaudit.tables import OPENERS

DELIMITERS = {CSV: ",", TSV: "\t"}


def read_records(path: str | Path, required: Sequence[str] = ()) -> Iterator[Record]:
    """The records of `path`, of any kind copyaudit reads, read as they are asked for.
    `required`: fields a file with a header (CSV, Parquet, Arrow) must name as columns,
    checked before its first row (a JSON file's records are checked by `collect`). The
    `--map` in force is the one when this is called."""
    return _records(path, tuple(required), current_map())


def _records(path: str | Path, required: tuple[str, ...], columns: ColumnMap) -> Iterator[Record]:
    kind = detect(path)
    if kind == JSON:
        records = read_json_records(path)
        yield from _mapped_lines(path, records, columns) if columns else records
        return
    if kind in DELIMITERS:
        header, records = open_csv(path, DELIMITERS[kind])
        header_row: int | None = 1
    else:
        table = OPENERS[kind](path)
        header, header_row = table.columns, None
        records = (Record(str(path), n, Fields(row), unit="row") for n, row in table.rows)
    _check_header(path, header, header_row, required, columns)
    if not columns:
        yield from records
        return
    for record in records:
        yield _renamed(record, columns)


def _check_header(
    path: str | Path,
    header: list[str],
    row: int | None,
    required: tuple[str, ...],
    columns: ColumnMap,
) -> None:
    """A mapped column the file lacks, a mapped field that is also a column, or a
    required column absent: InputError naming it, before any row is read."""
    shown = ", ".join(printable(c) for c in header)
    for field, column in columns.pairs:
        if column not in header:
            raise InputError(
                path,
                row,
                None,
                f"--map {field}={column}: no column '{column}' (columns: {shown})",
                unit="row",
            )
    clash = columns.clash(header)
    if clash is not None:
        raise InputError(path, row, clash, _clash(clash, columns), unit="row")
    names = set(header) - columns.columns | {f for f, _ in columns.pairs}
    missing = next((c for c in required if c not in names), None)
    if missing is not None:
        where = "header has" if row is not None else "the file's columns"
        raise InputError(path, row, missing, f"missing column ({where}: {shown})", unit="row")


def _clash(field: str, columns: ColumnMap) -> str:
    return (
        f"--map {field}={columns.column_of(field)}, but the file has a column '{field}' "
        "too: map that one away as well, or drop the --map"
    )


def _renamed(record: Record, columns: ColumnMap) -> Record:
    data = Fields(columns.rename(record.data))
    return Record(record.path, record.line, data, record.unit, record.text_cells)


def _mapped_lines(
    path: str | Path, records: Iterable[Record], columns: ColumnMap
) -> Iterator[Record]:
    """JSON records renamed one by one (each may hold other fields); a mapped field
    no record holds is an error once they were all read."""
    unseen = set(columns.columns)
    for record in records:
        if unseen:
            unseen.difference_update(record.data.keys())
        clash = columns.clash(record.data.keys())
        if clash is not None:
            raise record.error(clash, _clash(clash, columns))
        yield _renamed(record, columns)
    for field, column in columns.pairs:
        if column in unseen:
            raise InputError(
                path, None, None, f"--map {field}={column}: no record has a field '{column}'"
            )

"""`--map FIELD=COLUMN`: a file's column names read as the fields an importer reads (a
Hugging Face file's `prompt`, `continuation`, `completion` as `prefix`, `reference`,
`output`). The map in force is set around a read (`mapping`) and picked up by the one
reader layer (copyaudit.sources.read_records) and by `collect`, so that every importer
of cases and generations takes it without knowing about it."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from copyaudit.errors import UserError


@dataclass(frozen=True)
class ColumnMap:
    """(field, column) pairs, in the order given."""

    pairs: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, specs: Iterable[str]) -> ColumnMap:
        """`["prefix=prompt", ...]` as a map; a spec without '=' or a field given twice
        is the user's error."""
        pairs: list[tuple[str, str]] = []
        for spec in specs:
            field, sep, column = spec.partition("=")
            field, column = field.strip(), column.strip()
            if not sep or not field or not column:
                raise UserError(f"--map {spec!r}: expected FIELD=COLUMN (such as prefix=prompt)")
            if any(f == field for f, _ in pairs):
                raise UserError(f"--map: field '{field}' is mapped twice")
            pairs.append((field, column))
        return cls(tuple(pairs))

    def __bool__(self) -> bool:
        return bool(self.pairs)

    @functools.cached_property
    def columns(self) -> frozenset[str]:
        return frozenset(column for _, column in self.pairs)

    def column_of(self, field: str) -> str | None:
        return next((c for f, c in self.pairs if f == field), None)

    def clash(self, names: Iterable[str]) -> str | None:
        """A field the map writes that the source also has as a column of its own (and
        does not map away): which of the two to read would be a guess."""
        have = set(names)
        return next((f for f, _ in self.pairs if f in have and f not in self.columns), None)

    def rename(self, data: dict) -> dict:
        """`data` with each mapped column under its field's name (a column mapped to
        two fields is read by both); a mapped column the row lacks stays absent."""
        out = {k: v for k, v in data.items() if k not in self.columns}
        for field, column in self.pairs:
            if column in data:
                out[field] = data[column]
        return out

    def shown(self) -> str:
        return " ".join(f"--map {f}={c}" for f, c in self.pairs)


NO_MAP = ColumnMap()  # the columns as they are named
_CURRENT: ContextVar[ColumnMap] = ContextVar("column_map", default=NO_MAP)


@contextmanager
def mapping(columns: ColumnMap) -> Iterator[None]:
    """Read with `columns` in force: a reader picks it up when it is called (not when
    its records are later streamed)."""
    token = _CURRENT.set(columns)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current() -> ColumnMap:
    return _CURRENT.get()

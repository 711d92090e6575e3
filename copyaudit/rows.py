"""The row policy every importer shares: collect every record that cannot be used,
then either stop (the default: nothing is imported) or import the others and keep
the unusable ones as the skipped rows (`--skip-invalid`)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Generic, TypeVar

from copyaudit.errors import InputError

T = TypeVar("T")
SKIP_HINT = "--skip-invalid"


@dataclass(frozen=True)
class RowProblem:
    """Why one record of a file was not usable: its line (JSON) or row (CSV), the
    field at fault and the reason."""

    line: int
    field: str | None
    reason: str
    unit: str = "line"

    @classmethod
    def from_error(cls, error: InputError) -> RowProblem:
        return cls(error.line or 0, error.field, error.message, error.unit)

    def describe(self) -> str:
        """'row 615 Example_A: missing or empty passage'."""
        where = f"{self.unit} {self.line}"
        return f"{where} {self.field}: {self.reason}" if self.field else f"{where}: {self.reason}"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class InvalidRows(InputError):
    """Some records of a file cannot be used; lists every one of them."""

    def __init__(self, path: str, problems: Sequence[RowProblem], usable: int) -> None:
        first = problems[0]
        super().__init__(path, first.line, first.field, first.reason, unit=first.unit)
        self.problems = list(problems)
        self.usable = usable
        n = len(self.problems)
        if usable == 0:
            hint = "no record can be imported"
        else:
            them = "it" if n == 1 else "them"
            hint = (
                f"nothing imported; {SKIP_HINT} imports the other {usable:,} and "
                f"records {them} as skipped"
            )
        if n == 1:
            p = self.problems[0]
            field = f"field '{p.field}': " if p.field else ""
            message = f"{path}: {p.unit} {p.line}: {field}{p.reason} ({hint})"
        else:
            lines = [f"{path}: {n:,} of {n + usable:,} records cannot be used ({hint}):"]
            for p in self.problems:
                field = f"field '{p.field}': " if p.field else ""
                lines.append(f"  {p.unit} {p.line}: {field}{p.reason}")
            message = "\n".join(lines)
        self.args = (message,)


class Loaded(Generic[T]):
    """A file's usable records and the problems of the others, read once and only when
    asked: `stream()` / `accepted()` hand the usable records out as they are parsed
    (constant memory; `problems` fills as they go and is complete at the end), `items`
    reads them all into a list. `source` is the parsed records; it appends each
    unusable record's problem to `problems` and raises the file's structural errors."""

    def __init__(
        self,
        path: str,
        source: Iterable[T],
        problems: list[RowProblem] | None = None,
        warnings: list[RowProblem] | None = None,
    ) -> None:
        self.path = path
        self._source = iter(source)
        self._problems = [] if problems is None else problems
        self._warnings = [] if warnings is None else warnings  # e.g. fields no parser reads
        self.notes: list[str] = []  # what the summary says of how it was read (derived ids)
        self._items: list[T] | None = None
        self._started = False
        self.usable = 0  # usable records read so far

    def stream(self) -> Iterator[T]:
        """The usable records, one at a time (a file streams once)."""
        if self._items is not None:
            return iter(self._items)
        if self._started:
            raise RuntimeError(f"{self.path}: the records were streamed already")
        self._started = True
        return self._counted()

    def _counted(self) -> Iterator[T]:
        for item in self._source:
            self.usable += 1
            yield item

    def accepted(self, skip_invalid: bool = False) -> Iterator[T]:
        """`stream()`, then at its end what `accept` raises: a consumer writing the
        records inside a transaction rolls back on it, so nothing is written."""
        items = self.stream()

        def checked() -> Iterator[T]:
            yield from items
            self.check(skip_invalid)

        return checked()

    @property
    def items(self) -> list[T]:
        if self._items is None:
            self._items = list(self.stream())
        return self._items

    @property
    def problems(self) -> list[RowProblem]:
        """Every problem once the records were read (read here if they were not)."""
        if not self._started:
            self.items  # noqa: B018 - reads the file
        return self._problems

    @property
    def warnings(self) -> list[RowProblem]:
        """What was accepted but looks wrong (an unknown field, a repeated row), complete
        once the records were read (read here if they were not)."""
        if not self._started:
            self.items  # noqa: B018 - reads the file
        return self._warnings

    @property
    def total(self) -> int:
        return self.usable + len(self.problems)

    def accept(self, skip_invalid: bool = False) -> list[T]:
        """The usable records; raises InvalidRows when some records are unusable
        (unless `skip_invalid`) or when none is usable."""
        items = self.items
        self.check(skip_invalid)
        return items

    def check(self, skip_invalid: bool = False) -> None:
        """After reading: InvalidRows when some records are unusable (unless
        `skip_invalid`) or when none is usable; InputError when there is none."""
        if self.problems and (not skip_invalid or not self.usable):
            raise InvalidRows(self.path, self.problems, self.usable)
        if not self.usable:
            raise InputError(self.path, None, None, "no records found")


def read_ahead(items: Iterable[T], n: int) -> Iterator[T]:
    """`items` with the first `n` read now. An importer calls it before opening the
    database: a file of up to `n` records is then checked whole (its errors raise
    here) before the database is touched; a longer one streams, and an error found
    later rolls its transaction back."""
    it = iter(items)
    head = list(itertools.islice(it, n))
    return itertools.chain(head, it)


def skipped_note(imported: int, skipped: Sequence[dict[str, Any]], limit: int = 5) -> str | None:
    """'1,548 of 1,549 rows; 1 skipped: row 615 Example_A: missing or empty passage'
    for a suite with skipped rows (`skipped`: stored RowProblem dicts, each with an
    optional `source`); None when nothing was skipped. Names the file when the
    skipped rows come from more than one."""
    if not skipped:
        return None
    sources = {s.get("source") for s in skipped}
    shown = []
    for item in skipped[:limit]:
        text = RowProblem(item["line"], item["field"], item["reason"], item["unit"]).describe()
        if len(sources) > 1 and item.get("source"):
            text = f"{_basename(item['source'])} {text}"
        shown.append(text)
    more = f"; and {len(skipped) - limit:,} more" if len(skipped) > limit else ""
    total = imported + len(skipped)
    return f"{imported:,} of {total:,} rows; {len(skipped):,} skipped: " + "; ".join(shown) + more


def _basename(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]

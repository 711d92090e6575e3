"""The row policy every importer shares: collect every record that cannot be used,
then either stop (the default: nothing is imported) or import the others and keep
the unusable ones as the skipped rows (`--skip-invalid`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
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


@dataclass(frozen=True)
class Loaded(Generic[T]):
    """A file's usable records and the problems of the others."""

    path: str
    items: list[T]
    problems: list[RowProblem]
    warnings: list[RowProblem] = field(default_factory=list)  # fields no parser reads

    @property
    def total(self) -> int:
        return len(self.items) + len(self.problems)

    def accept(self, skip_invalid: bool = False) -> list[T]:
        """The usable records; raises InvalidRows when some records are unusable
        (unless `skip_invalid`) or when none is usable."""
        if self.problems and (not skip_invalid or not self.items):
            raise InvalidRows(self.path, self.problems, len(self.items))
        if not self.items:
            raise InputError(self.path, None, None, "no records found")
        return self.items


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

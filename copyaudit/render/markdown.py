"""The one Markdown-table helper: a header and rows become table lines.

Every cell is escaped so that stored text (work titles, queries, annotator names,
model output) cannot break the table: a `|` is backslash-escaped and whitespace runs,
newlines included, become one space. A document with its own inline escaping (the
dossier) passes it as `escape`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any


def cell(value: object) -> str:
    """One table cell: str() of `value` on one line, `|` escaped (None is empty)."""
    return "" if value is None else " ".join(str(value).split()).replace("|", "\\|")


def table(
    header: Sequence[Any], rows: Iterable[Sequence[Any]], escape: Callable[[Any], str] = cell
) -> list[str]:
    """The table's lines: header, separator, one line per row; the header cells escaped
    with `cell`, the row cells with `escape`."""
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(escape(c) for c in row) + " |" for row in rows]
    return lines

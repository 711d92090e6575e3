"""Writing rows as a Rich table, JSON, JSONL or CSV (shared by every listing command)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO, Any

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from copyaudit.reports.exports import TextOut as TextOut
from copyaudit.reports.exports import cell_text
from copyaudit.reports.output_file import write_output
from copyaudit.untrusted import terminal_text


class TerminalStream:
    """Standard output for a command's rows: what is written goes through
    terminal_text (control sequences escaped; JSON stays exact)."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(terminal_text(text))

    def flush(self) -> None:
        self.stream.flush()


def echo(text: str, *, nl: bool = True, err: bool = False) -> None:
    """click.echo of stored (untrusted) text: control sequences escaped."""
    click.echo(terminal_text(text), nl=nl, err=err)


def print_table(rows: Sequence[dict[str, Any]], columns: Sequence[str], title: str) -> None:
    """A Rich table; every cell is plain Text so stored strings are never parsed as
    markup, with control sequences escaped."""
    table = Table(title=title, title_justify="left")
    for position, column in enumerate(columns):
        # the first column names the row (a run, a generation key): folded, never cut
        # short, so it can be read in full and typed into the next command
        table.add_column(column, overflow="fold" if position == 0 else "ellipsis")
    for row in rows:
        table.add_row(*(Text(terminal_text(cell_text(row.get(c)))) for c in columns))
    Console().print(table)


def print_json(value: object) -> None:
    sys.stdout.write(terminal_text(json.dumps(value, ensure_ascii=False, indent=2, default=str)))
    sys.stdout.write("\n")


def echo_skipped(problems: Iterable[Any]) -> None:
    """Each record an import skipped (a copyaudit.rows.RowProblem), on standard error,
    so that the result on standard output stays one line."""
    for problem in problems:
        sys.stderr.write(f"skipped {problem.describe()}\n")


def echo_warnings(path: object, warnings: Iterable[Any]) -> None:
    """Each warning about a file (a copyaudit.rows.RowProblem: a field no parser reads,
    a row repeated exactly), on standard error; the import goes on."""
    for w in warnings:
        field = f"field '{w.field}': " if w.field else ""
        sys.stderr.write(f"warning: {path}: {w.unit} {w.line}: {field}{w.reason}\n")


def emit(text: str | bytes, output: Path | None, *, database: Path, force: bool) -> None:
    """A command's document: to standard output, or safely to `output` (never over the
    database, an existing file only with --force) with a line on standard error.
    Bytes (a PDF) go only to a file: the caller asks for -o first."""
    if output is None:
        assert isinstance(text, str)  # the caller asks bytes (a PDF) for -o first
        echo(text, nl=False)
        return
    write_output(output, text, database=database, force=force)
    click.echo(f"wrote {output}", err=True)

"""What the app's export dialog (screens.export_dialog) offers and writes: labels, a run's
generations (or a study's own run rows), a run's report, a case's dossier, each to a file
the person names, its format picked by the extension. The rows and documents are
`copyaudit export`'s, `report`'s and `dossier`'s (copyaudit.reports), written through the
same safe output file as `-o` (copyaudit.reports.output_file: never over the database,
an existing file only when the person said so, atomically)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from copyaudit.errors import UserError
from copyaudit.reports.dossier.build import FORMATS as DOSSIER_FORMATS
from copyaudit.reports.dossier.build import build_dossier, render_dossier
from copyaudit.reports.exports import (
    REPORT_FORMATS,
    ROW_FORMATS,
    RUN_EXPORTS,
    anchored_report,
    export_rows,
    report_document,
    write_rows,
)
from copyaudit.reports.output_file import check_destination, output_file, write_output
from db.connection import Store


def file_stem(name: str) -> str:
    """A run name or generation key as a file name: '/' -> '__', anything but letters,
    digits, '.', '-', '_' -> '_'."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name.replace("/", "__"))


@dataclass(frozen=True)
class ExportChoice:
    what: str  # an export_rows kind, "report" or "dossier"
    title: str  # as the dialog lists it
    stem: str  # the default file name without its extension
    formats: tuple[str, ...]  # by the file's extension; the first is the default
    run: str | None = None  # None: every run
    generation_id: int | None = None  # the dossier's

    @property
    def default_name(self) -> str:
        return f"{self.stem}.{self.formats[0]}"

    def format_of(self, path: Path) -> str:
        """The format the file's extension names, or a UserError listing the ones taken."""
        fmt = path.suffix[1:].lower()
        if fmt not in self.formats:
            named = " or ".join(f".{f}" for f in self.formats)
            raise UserError(f"name a {named} file: the extension picks the format")
        return fmt


def run_choices(runs: Iterable[Mapping[str, Any]]) -> list[ExportChoice]:
    """Every run's labels, generations (a study's own run rows where it has them, as
    `export KIND --run`) and report, after the labels of every run."""
    choices = [ExportChoice("labels", "Labels of every run", "labels", ROW_FORMATS)]
    for run in runs:
        name, kind, stem = run["name"], run["kind"], file_stem(run["name"])
        rows = kind if kind in RUN_EXPORTS else "generations"
        choices += [
            ExportChoice("labels", f"Labels of {name}", f"{stem}.labels", ROW_FORMATS, name),
            ExportChoice(
                rows, f"{rows.capitalize()} of {name}", f"{stem}.{rows}", ROW_FORMATS, name
            ),
            ExportChoice("report", f"Report of {name}", f"{stem}.report", REPORT_FORMATS, name),
        ]
    return choices


def dossier_choice(generation_key: str, generation_id: int) -> ExportChoice:
    """The case's dossier, HTML by default (what the case view's D wrote before)."""
    formats = ("html", *(fmt for fmt in DOSSIER_FORMATS if fmt != "html"))
    return ExportChoice(
        "dossier",
        f"Dossier of {generation_key}",
        f"{file_stem(generation_key)}.dossier",
        formats,
        generation_id=generation_id,
    )


@dataclass(frozen=True)
class ExportRequest:
    choice: ExportChoice
    path: Path  # absolute
    fmt: str
    overwrite: bool  # the file exists and the person said to replace it


def destination(choice: ExportChoice, typed: str, database: Path) -> tuple[Path, str, bool]:
    """(absolute path, format, whether the file exists) of a typed path (relative: to
    the current directory), or a UserError: no name, an extension the choice does not
    write, the database or one of its files, a symbolic link, a directory, no such
    directory (copyaudit.reports.output_file.check_destination)."""
    if not typed.strip():
        raise UserError("type a file name")
    path = Path(os.path.abspath(Path(typed.strip()).expanduser()))
    check_destination(path, database=database, force=True)  # all but "exists"
    return path, choice.format_of(path), path.exists()


def write_export(store: Store, request: ExportRequest, database: Path) -> str:
    """Write the export safely (an existing file only when `request.overwrite`); what
    was written, for the message ("12 labels", "the report of run r")."""
    choice, path, force = request.choice, request.path, request.overwrite
    if choice.what == "report":
        report = anchored_report(store, str(choice.run))
        text = report_document(store, report, request.fmt, database=database)
        write_output(path, text, database=database, force=force)
        return f"the report of run {choice.run}"
    if choice.what == "dossier" and choice.generation_id is not None:
        dossier = build_dossier(store, choice.generation_id, database)
        write_output(path, render_dossier(dossier, request.fmt), database=database, force=force)
        return "the dossier"
    with output_file(path, database=database, force=force) as out:
        count = write_rows(export_rows(store, choice.what, choice.run), request.fmt, out)
    return f"{count} {choice.what}"

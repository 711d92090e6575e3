"""What `copyaudit export` and the app's export dialog write: the rows of a kind (cases,
generations, judgments, labels, a study's own run rows) as JSONL or CSV, and a run's
report as Markdown, HTML or JSON. Where the text goes (standard output, or safely to a
file: copyaudit.reports.output_file) is the caller's choice."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

from copyaudit.anchors import anchor_markdown
from copyaudit.formats import case_to_record
from copyaudit.reports.anchor import current_anchor
from copyaudit.studies.registry import STUDIES, study
from copyaudit.untrusted import csv_row
from db import queries
from db.case_file import run_judges, run_record
from db.connection import Store
from db.queries import metric_thresholds

# `export KIND --run NAME` of a study with its own runs: kind -> how its runs are called
RUN_EXPORTS = {kind: spec.title for kind, spec in STUDIES.items() if spec.export_run is not None}
EXPORT_KINDS = ("cases", "generations", "judgments", "labels", *RUN_EXPORTS)
ROW_FORMATS = ("jsonl", "csv")
REPORT_FORMATS = ("md", "json", "html")


def export_rows(
    store: Store, what: str, run: str | None = None, suite: str | None = None
) -> Iterator[dict[str, Any]]:
    """The rows of `what` (one of EXPORT_KINDS), of one run or suite where given. Cases
    are in their import format, so an exported suite imports back unchanged."""
    if what == "cases":
        return (case_to_record(case) for _, case in queries.iter_cases(store, suite))
    if what == "generations":
        return queries.iter_generations(store, run)
    if what in RUN_EXPORTS:
        return study(what).export_run(store, run)  # type: ignore[misc, arg-type]
    if what == "judgments":
        return queries.iter_judgments(store, run)
    return queries.iter_labels(store, run)


def cell_text(value: Any) -> str:
    """A value as one table or CSV cell: JSON for lists and objects, 4 digits for floats."""
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


class TextOut(Protocol):
    """Where rows are written: a text file, or standard output as a TerminalStream."""

    def write(self, text: str, /) -> int: ...


def write_jsonl(rows: Iterable[dict[str, Any]], out: TextOut) -> int:
    count = 0
    for row in rows:
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
        count += 1
    return count


def write_csv(rows: Iterable[dict[str, Any]], out: TextOut) -> int:
    writer: csv.DictWriter | None = None
    count = 0
    for row in rows:
        if writer is None:
            writer = csv.DictWriter(out, fieldnames=list(row), extrasaction="ignore")
            writer.writeheader()
        writer.writerow(
            csv_row({k: cell_text(v) if isinstance(v, dict | list) else v for k, v in row.items()})
        )
        count += 1
    return count


def write_rows(rows: Iterable[dict[str, Any]], fmt: str, out: TextOut) -> int:
    """Write `rows` as `fmt` (ROW_FORMATS); how many were written."""
    return (write_jsonl if fmt == "jsonl" else write_csv)(rows, out)


def anchored_report(
    store: Store, run: str, notice_thresholds: dict[str, tuple[float, float]] | None = None
) -> dict[str, Any]:
    """The run report with the audit chains' heads as of now (its `anchor`)."""
    from copyaudit.reports.run_report import build_report  # deferred: every command's
    # output imports this module (cell_text), and a report loads the judges' declarations

    report = build_report(store, run, notice_thresholds=notice_thresholds)
    report["anchor"] = current_anchor(store)
    return report


def report_document(
    store: Store, report: dict[str, Any], fmt: str, *, database: Path, file_hash: bool = False
) -> str:
    """The report as a document of `fmt` (REPORT_FORMATS); html: one self-contained page
    with its provenance and integrity sections (`file_hash`: with the database file's
    SHA-256, which reads the whole file)."""
    from copyaudit.reports.dossier.build import integrity_figures  # deferred: see above
    from copyaudit.reports.run_report import report_markdown
    from copyaudit.reports.run_report_html import report_html

    if fmt == "json":
        return json.dumps(report, ensure_ascii=False, indent=2, default=str) + "\n"
    if fmt == "md":
        return report_markdown(report) + "\n" + "\n".join(anchor_markdown(report["anchor"])) + "\n"
    run = report["run"]
    return report_html(
        report,
        metric_thresholds(store, run),
        provenance=(run_record(store, run), run_judges(store, run)),
        integrity=integrity_figures(store, database, file_hash=file_hash),
    )

"""The trace figures of a comparison: one row per selected run the trace judge judged,
each the run report's own "trace" block (copyaudit.reports.copying): the reproduction
rate (SRR, Mueller et al. 2024: the share of generations with a span of the threshold's
characters traced to the library) overall with its Wilson interval, by kind of work
(protected, public-domain), and their ratio (CDR)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from copyaudit.intervals import wilson

STATUSES = ("protected", "public-domain", "unknown")  # the columns, in this order


def trace_rows(
    runs: Sequence[Mapping[str, Any]], report: Callable[[Mapping[str, Any]], dict[str, Any]]
) -> list[dict[str, Any]]:
    """One row per run of `runs` whose report (`report(run)`) has a trace block."""
    rows = []
    for run in runs:
        block = report(run).get("trace")
        if block is None:
            continue
        bounds = wilson(block["flagged"], block["n"]) if block["n"] else None
        rows.append(
            {
                "run": run["name"],
                "model": run.get("shown_model") or run["model"],
                "suite": run["suite"],
                "n": block["n"],
                "flagged": block["flagged"],
                "srr": block["rate"],
                "interval": list(bounds) if bounds else None,
                "thresholds": block["thresholds"],
                "srr_by_status": block.get("srr") or {},
                "by_status": block.get("by_status") or {},
                "cdr": block.get("cdr"),
            }
        )
    return rows


TRACE_TITLE = "Traced to the library (SRR, CDR after Mueller et al. 2024)"
TRACE_NOTE = (
    "SRR: share of generations with a span traced to the library at the threshold "
    "(exact or near-verbatim), [95% Wilson interval]; by kind of work: share with such a "
    "span in a work of that status (a span held by works of both kinds counts in both); "
    "CDR: protected / public-domain (— when either is 0)."
)
TRACE_HEADER = ("run", "model", "suite", "n", "SRR", *(f"SRR {s}" for s in STATUSES), "CDR")


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def trace_cells(row: Mapping[str, Any]) -> list[str]:
    """A row's cells as text."""
    srr = _percent(row["srr"]) + (
        f" [{100 * row['interval'][0]:.1f}, {100 * row['interval'][1]:.1f}]"
        if row["interval"]
        else ""
    )
    by_status = [
        f"{_percent(row['srr_by_status'][s])} ({row['by_status'][s]})"
        if s in row["srr_by_status"]
        else "0.0% (0)"
        for s in STATUSES
    ]
    cdr = "—" if row["cdr"] is None else f"{row['cdr']:.2f}"
    return [row["run"], row["model"], row["suite"], str(row["n"]), srr, *by_status, cdr]

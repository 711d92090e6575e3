"""Text pieces the reports and the dossier write alike in Markdown and HTML: headline
figures, the import notes, the histogram captions and configurations as JSON."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from copyaudit.metrics_spec import Headline

DASH = "—"  # no value
NOTE_LABELS = {
    "import_note": "Suite rows",
    "generations_note": "Imported generations",
    "results_note": "Imported results",
}


def percent(value: float | None) -> str:
    """A rate in [0, 1] as '12.5%'."""
    return DASH if value is None else f"{100 * value:.1f}%"


def headline_text(headline: Headline, value: float | None) -> str:
    """A headline figure as the report columns show it: rates as percentages, a mean
    fraction times 100, a mean rating with two decimals."""
    if value is None:
        return DASH
    if headline.shown_as == "percent":
        return percent(value)
    if headline.shown_as == "x100":
        return f"{100 * value:.1f}"
    return f"{value:.2f}"


def import_notes(report: Mapping[str, Any]) -> list[str]:
    """What the suite's and the run's imports skipped, one sentence each (none when
    nothing was skipped)."""
    return [f"{label}: {report[key]}" for key, label in NOTE_LABELS.items() if report.get(key)]


def suite_note_lines(report: Mapping[str, Any]) -> list[str]:
    """The import notes as Markdown lines, each after a blank line."""
    return [line for note in import_notes(report) for line in ("", note)]


def judged_caption(report: Mapping[str, Any], metric: str) -> str:
    """'40 judged' or '15 judged, none with a value (not computed)' for a histogram."""
    judged, missing = report["judged"][metric], report.get("no_value", {}).get(metric, 0)
    if missing == judged and judged:
        return f"{judged} judged, none with a value (not computed)"
    return f"{judged} judged" + (f", {missing} without a value" if missing else "")

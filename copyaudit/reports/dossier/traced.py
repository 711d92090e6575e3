"""Every span of a case's output traced to the library (the trace judge,
copyaudit.judges.trace): where it stands in the output, which work holds it and where
(character offsets in the work's text), the work's edition or source as registered
(library_works.source), its SHA-256 and status, and whether the match is exact or
near-verbatim (Mueller et al.'s one-word slips)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

TRACE_JUDGE, TRACE_METRIC = "trace", "longest_traced_chars"


@dataclass(frozen=True)
class TracedRow:
    output_span: tuple[int, int]  # character offsets in the output, 0-based, end excluded
    work: str
    work_span: tuple[int, int]  # character offsets in the work's text
    source: str | None  # the edition or source the work was registered with
    sha256: str
    status: str
    near: int | None  # slips of a near-verbatim match; None: exact
    places: int  # how many places the library holds an exact span (1 for near-verbatim)

    @property
    def chars(self) -> int:
        return self.output_span[1] - self.output_span[0]

    @property
    def match(self) -> str:
        if self.near is None:
            return "exact" + (f" (held {self.places} times)" if self.places > 1 else "")
        return f"near-verbatim ({self.near} slip{'s' if self.near > 1 else ''})"


def traced_rows(
    judgments: list[dict[str, Any]], sources: dict[str, str | None]
) -> list[TracedRow] | None:
    """One row per place of every traced span (the places the judge kept), in output
    order; None when the trace judge did not judge this generation. `sources`: the
    library's works by SHA-256 -> their source (db.library)."""
    judgment = next(
        (j for j in judgments if (j["judge"], j["metric"]) == (TRACE_JUDGE, TRACE_METRIC)), None
    )
    if judgment is None:
        return None
    extra = (judgment["evidence"] or {}).get("extra") or {}
    # (span in the output, place in the work, slips or None, places held)
    found = [
        (span, place, None, int(span.get("count", 1)))
        for span in extra.get("spans") or []
        for place in span.get("places") or []
    ] + [
        (near, {**near, "start": near["work_start"], "end": near["work_end"]}, near["slips"], 1)
        for near in extra.get("near_verbatim") or []
    ]
    rows = [
        TracedRow(
            (int(span["start"]), int(span["end"])),
            place["work"],
            (int(place["start"]), int(place["end"])),
            sources.get(place["sha256"]),
            place["sha256"],
            place["status"],
            None if slips is None else int(slips),
            places,
        )
        for span, place, slips, places in found
    ]
    return sorted(rows, key=lambda r: (r.output_span, r.near is not None, r.work_span))


TRACED_HEADER = (
    "output (characters)",
    "length",
    "work",
    "in the work (characters)",
    "edition / source",
    "SHA-256",
    "status",
    "match",
)


def traced_cells(row: TracedRow) -> tuple[str, ...]:
    """A row's cells, as text (offsets counted from 1, as the dossier counts them)."""
    return (
        f"{row.output_span[0] + 1:,}–{row.output_span[1]:,}",
        f"{row.chars:,}",
        row.work,
        f"{row.work_span[0] + 1:,}–{row.work_span[1]:,}",
        row.source or "—",
        row.sha256,
        row.status,
        row.match,
    )

"""The longest verbatim run of a case, set apart from the LCS overlap.

The verbatim judge (copyaudit.judges.verbatim) measures one unbroken run of
characters the output shares with its source; the literal judge's LCS tokens may be
scattered over the whole text. A dossier states the run on its own: its length
against the threshold, and where it lies in both texts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from copyaudit.judges.metric_facts import format_metric
from copyaudit.render.highlight import VERBATIM_JUDGE


@dataclass(frozen=True)
class VerbatimRun:
    metric: str
    length: int
    threshold: float | None
    flagged: bool | None
    output_span: tuple[int, int]  # character offsets, 0-based, end excluded
    source_span: tuple[int, int] | None
    text: str


def verbatim_run(judgments: list[dict[str, Any]], output: str) -> VerbatimRun | None:
    """The verbatim judge's run in this generation; None when it did not judge it."""
    for judgment in judgments:
        if judgment["judge"] != VERBATIM_JUDGE:
            continue
        evidence = judgment["evidence"] or {}
        spans = evidence.get("spans") or []
        start, end = (int(spans[0]["start"]), int(spans[0]["end"])) if spans else (0, 0)
        source = (evidence.get("extra") or {}).get("source_span")
        return VerbatimRun(
            metric=judgment["metric"],
            length=int(judgment["value"] or 0),
            threshold=evidence.get("threshold"),
            flagged=judgment["flagged"],
            output_span=(start, end),
            source_span=(int(source[0]), int(source[1])) if source and spans else None,
            text=output[start:end],
        )
    return None


def _counted(span: tuple[int, int]) -> str:
    return f"characters {span[0] + 1:,} to {span[1]:,}"


def verbatim_sentence(run: VerbatimRun, source: str) -> str:
    """The run in plain words, e.g. 'The longest verbatim run is 281 characters long
    (flagged: the threshold is 160); it is characters 1 to 281 of the output and
    characters 1 to 281 of the reference continuation (counted from 1).'"""
    if run.length == 0:
        return "The output shares no run of characters with the source text."
    threshold = "" if run.threshold is None else format_metric(run.metric, run.threshold)
    state = {True: "flagged", False: "not flagged", None: "no verdict"}[run.flagged]
    where = f"{_counted(run.output_span)} of the output"
    if run.source_span is not None:
        where += f" and {_counted(run.source_span)} of the {source}"
    return (
        f"The longest verbatim run is {run.length:,} characters long ({state}: the threshold "
        f"is {threshold} characters); it is {where} (counted from 1)."
    )

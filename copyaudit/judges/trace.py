"""The trace judge: every span of an output that a work of the library holds
(copyaudit.tracing), however the case names its source. Metrics: `longest_traced_chars`
(exact or near-verbatim: copyaudit.tracing.near; flagged at the verbatim judge's 160
characters, after Mueller et al. 2024),
`traced_works` (distinct works holding a traced span) and `traced_share` (the share of
the output's characters inside traced spans). Evidence: each span with where it stands
(work, status, character offsets; the first places of a span held many times) and how
often the library holds it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from copyaudit.errors import UserError
from copyaudit.judges.base import Judge
from copyaudit.judges.context import JudgeUnavailable
from copyaudit.metrics_spec import Metric
from copyaudit.tracing.corpus_trace import CorpusSpan
from copyaudit.tracing.library import ENGINES, CatalogueEntry, open_index
from copyaudit.tracing.trace import DEFAULT_MIN_TOKENS, NearSpan, TracedSpan, trace, trace_near
from copyaudit.types import JudgeInput, Score, Span

if TYPE_CHECKING:
    from copyaudit.judges.context import BuildContext
    from copyaudit.tracing.index import LibraryIndex

FLAG_CHARS = 160  # Mueller et al. (AIES 2024): a reproduction of 160 characters or more
# the longest span a work holds (flagged at FLAG_CHARS), how many works hold a span, the
# share of the output inside traced spans
LONGEST_TRACED = Metric("longest_traced_chars", "longest traced (chars)", "count", "flagged")
METRICS = (
    LONGEST_TRACED,
    Metric("traced_works", "works traced", "count"),
    Metric("traced_share", "share traced", "fraction"),
)
PLACES_KEPT = 5  # places per span in the evidence


class TraceJudge(Judge):
    name = "trace"
    version = "1"

    def __init__(
        self,
        index: LibraryIndex,
        catalogue: dict[str, CatalogueEntry],
        folder: Path,
        min_tokens: int = DEFAULT_MIN_TOKENS,
        engine: str = ENGINES[0],
    ) -> None:
        self.index, self.catalogue, self.folder = index, catalogue, folder
        self.min_tokens, self.engine = min_tokens, engine

    def config(self) -> dict[str, Any]:
        config = {
            "min_tokens": self.min_tokens,
            "flag_chars": FLAG_CHARS,
            "tokens": "words (letters and digits), casefolded",
            "library": sorted(self.catalogue),  # the works' SHA-256: what was searched
        }
        if self.engine != ENGINES[0]:  # the same spans; the default stays out of the hash
            config["engine"] = self.engine
        return config

    def judge(self, items: Sequence[JudgeInput]) -> list[list[Score]]:
        return [self._judge_one(item.output or "") for item in items]

    def _place(self, span: TracedSpan) -> list[dict[str, Any]]:
        return [
            {
                "work": self.catalogue[p.work].title,
                "sha256": p.work,
                "status": self.catalogue[p.work].status,
                "start": p.start,
                "end": p.end,
            }
            for p in span.places[:PLACES_KEPT]
        ]

    def _near(self, near: NearSpan) -> dict[str, Any]:
        entry = self.catalogue[near.work]
        return {
            "start": near.start, "end": near.end, "words": near.words, "slips": near.slips,
            "chars": near.chars, "work": entry.title, "sha256": near.work,
            "status": entry.status, "work_start": near.work_start, "work_end": near.work_end,
        }  # fmt: skip

    def _judge_one(self, output: str) -> list[Score]:
        spans = trace(self.index, output, self.min_tokens)
        near = trace_near(self.index, output, self.min_tokens)
        covered = covered_chars([*spans, *near])
        longest = max([s.chars for s in spans] + [n.end - n.start for n in near], default=0)
        works = {p.work for s in spans for p in s.places} | {n.work for n in near}
        evidence = tuple(
            Span(
                s.start,
                s.end,
                note=f"{self.catalogue[s.places[0].work].title} @ {s.places[0].start}"
                + (f" (and {s.count - 1} more places)" if s.count > 1 else ""),
            )
            for s in spans
        ) + tuple(
            Span(
                n.start,
                n.end,
                note=f"near-verbatim ({n.slips} slip{'s' if n.slips > 1 else ''}): "
                f"{self.catalogue[n.work].title} @ {n.work_start}",
            )
            for n in near
        )
        details = [
            {"start": s.start, "end": s.end, "words": s.words, "count": s.count,
             "places": self._place(s)}
            for s in spans
        ]  # fmt: skip
        statuses = sorted(
            {
                self.catalogue[p.work].status
                for s in spans
                if s.chars >= FLAG_CHARS
                for p in s.places
            }
            | {self.catalogue[n.work].status for n in near if n.end - n.start >= FLAG_CHARS}
        )  # the kinds of work (protected, public-domain) holding a span at the threshold
        return [
            Score(
                "longest_traced_chars",
                float(longest),
                flagged=longest >= FLAG_CHARS,
                threshold=float(FLAG_CHARS),
                spans=evidence,
                extra={
                    "spans": details,
                    "near_verbatim": [self._near(n) for n in near],
                    "statuses_at_threshold": statuses,
                },
            ),
            Score("traced_works", float(len(works))),
            Score("traced_share", covered / len(output) if output else 0.0),
        ]


def covered_chars(spans: Sequence[TracedSpan | NearSpan | CorpusSpan]) -> int:
    """The output's characters inside some span (spans may overlap)."""
    covered, reach = 0, 0
    for span in sorted(spans, key=lambda s: s.start):
        start = max(span.start, reach)
        if span.end > start:
            covered += span.end - start
            reach = span.end
    return covered


def trace_judge(ctx: BuildContext) -> TraceJudge:
    folder = ctx.options.trace_library
    if folder is None:
        raise JudgeUnavailable(
            "no library to trace against: copyaudit library add FILE... (or --trace-library DIR)"
        )
    engine = ctx.options.trace_engine
    try:
        index, catalogue = open_index(Path(folder), engine)
    except UserError as error:
        raise JudgeUnavailable(str(error)) from None
    tokens = ctx.options.trace_tokens
    return TraceJudge(
        index, catalogue, Path(folder), DEFAULT_MIN_TOKENS if tokens is None else tokens, engine
    )

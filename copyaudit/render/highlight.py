"""Highlights from judge evidence: character spans cut into non-overlapping segments.

Each judgment's evidence (copyaudit.types.Score.evidence_json) holds `spans` with
character offsets into the output: the literal judge's LCS tokens, the characters
judge's alias matches, the events judge's supporting 128-token windows, the QA
answer, the refusal phrase, the verbatim judge's longest verbatim run (the
160-character measure: one unbroken run, set apart from the LCS tokens, which may be
scattered). The literal judge also stores the same LCS tokens in the reference
(`extra.reference_spans`), the verbatim judge the run's place in its source
(`extra.source_span`). Renderers only see segments, each with the
set of marks covering it, so overlapping evidence needs no nesting.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

# The kinds a renderer styles, in the order a legend lists them.
MARK_KINDS = ("literal", "verbatim", "character", "event", "answer", "refusal")
VERBATIM_JUDGE = "verbatim"  # copyaudit.judges.verbatim.VerbatimJudge.name


@dataclass(frozen=True, order=True)
class Mark:
    start: int
    end: int
    kind: str  # one of MARK_KINDS
    label: str  # what it is evidence of, shown as a tooltip or footnote


@dataclass(frozen=True)
class Segment:
    text: str
    marks: tuple[Mark, ...]

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(k for k in MARK_KINDS if any(m.kind == k for m in self.marks))


def _kind_of(judgment: dict[str, Any]) -> str:
    target = (judgment.get("evidence") or {}).get("target")
    if target in MARK_KINDS:
        return str(target)
    if judgment.get("judge") == VERBATIM_JUDGE:
        return "verbatim"
    return "answer" if judgment.get("judge") == "qa" else "literal"


def _label(kind: str, span: dict[str, Any], metric: str) -> str:
    item, note = span.get("item"), span.get("note") or ""
    if kind == "character":
        return f"character {item}: '{note}'"
    if kind == "event":
        return f"event {item} supported ({note})"
    if kind == "verbatim":
        return f"longest verbatim run ({int(span['end']) - int(span['start'])} characters)"
    if kind == "literal" and note in ("", "lcs"):
        return "overlap with the reference (longest common subsequence)"
    return f"{metric}: {note}" if note else metric


def output_marks(judgments: Iterable[dict[str, Any]]) -> list[Mark]:
    """Every evidence span of the judgments, deduplicated, in order."""
    marks: set[Mark] = set()
    for judgment in judgments:
        kind = _kind_of(judgment)
        for span in (judgment.get("evidence") or {}).get("spans") or ():
            label = _label(kind, span, str(judgment.get("metric")))
            marks.add(Mark(int(span["start"]), int(span["end"]), kind, label))
    return _unique_spans(marks)


def reference_marks(judgments: Iterable[dict[str, Any]]) -> list[Mark]:
    """The literal judge's LCS tokens in the reference text, and the longest verbatim
    run where the study's verbatim source is that text (CopyBench literal, extraction)."""
    marks: set[Mark] = set()
    for judgment in judgments:
        extra = (judgment.get("evidence") or {}).get("extra") or {}
        for start, end in extra.get("reference_spans") or ():
            marks.add(Mark(int(start), int(end), "literal", f"{judgment.get('metric')}: lcs"))
        if judgment.get("judge") == VERBATIM_JUDGE and extra.get("source_span"):
            start, end = (int(x) for x in extra["source_span"])
            if end > start:
                label = f"longest verbatim run ({end - start} characters)"
                marks.add(Mark(start, end, "verbatim", label))
    return _unique_spans(marks)


def _unique_spans(marks: set[Mark]) -> list[Mark]:
    """One mark per (start, end, kind): rougeL and lcs_tokens report the same spans."""
    seen: dict[tuple[int, int, str], Mark] = {}
    for mark in sorted(marks):
        seen.setdefault((mark.start, mark.end, mark.kind), mark)
    return list(seen.values())


def segments(text: str, marks: Sequence[Mark]) -> list[Segment]:
    """`text` cut at every mark boundary; each piece carries the marks covering it.
    Offsets outside the text are clamped; empty marks are dropped."""
    size = len(text)
    clamped = [
        Mark(max(0, min(m.start, size)), max(0, min(m.end, size)), m.kind, m.label) for m in marks
    ]
    clamped = [m for m in clamped if m.end > m.start]
    cuts = sorted({0, size, *(m.start for m in clamped), *(m.end for m in clamped)})
    out: list[Segment] = []
    for start, end in pairwise(cuts):
        covering = tuple(m for m in clamped if m.start <= start and end <= m.end)
        out.append(Segment(text[start:end], covering))
    return out

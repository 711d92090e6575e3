"""Plain data types shared by the core, the store and the screens.

Everything here is a frozen dataclass or a TypedDict-like dict shape so that it
can be stored as JSON without custom encoders.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

# re-exported: the task kinds are copyaudit.vocabulary's
from copyaudit.vocabulary import TASK_KINDS as TASK_KINDS

Membership = Literal["suspect", "clean", "unknown"]


@dataclass(frozen=True)
class Work:
    """A book or document the cases are drawn from."""

    title: str
    author: str | None = None
    year: int | None = None
    membership: str = "unknown"  # suspect / clean / unknown (DE-COP label)


@dataclass(frozen=True)
class Case:
    """One evaluation case: a task kind, its work and a kind-specific payload.

    Payload keys by kind (all strings unless noted):
      literal     input, reference
      nonliteral  input, reference_events: list[str], reference_characters: list[list[str]]
      qa          input, reference
      decop       options: list[str] (4), answer: int (index of the verbatim option)
      notice      source_type, snippet, notice_level, notice, task, query
    """

    case_id: str
    kind: str
    work: Work
    payload: dict[str, Any]


@dataclass(frozen=True)
class Span:
    """A character range [start, end) in a generation's output."""

    start: int
    end: int
    item: int | None = None  # index of the event / character it supports, if any
    note: str = ""  # e.g. the alias that matched, or "lcs"

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "item": self.item, "note": self.note}


@dataclass(frozen=True)
class ItemVerdict:
    """The judge's verdict on one reference item (an event or a character); verdict None:
    the judge could not decide it (its model's answers were unreadable), a judge error
    for that item, never a "no"."""

    index: int
    verdict: bool | None
    score: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "verdict": self.verdict, "score": self.score}


@dataclass(frozen=True)
class Score:
    """One metric a judge produced for one generation, with its evidence.

    `value` is None when the judge could not produce a number (e.g. an
    unparseable fluency answer); `error` then says why. `flagged` is the
    thresholded verdict (None when the metric has no threshold).
    """

    metric: str
    value: float | None
    flagged: bool | None = None
    threshold: float | None = None
    spans: tuple[Span, ...] = ()
    items: tuple[ItemVerdict, ...] = ()
    target: str | None = None  # human label target this metric is checked against
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def evidence_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "spans": [s.to_json() for s in self.spans],
            "items": [i.to_json() for i in self.items],
        }
        if self.threshold is not None:
            out["threshold"] = self.threshold
        if self.target is not None:
            out["target"] = self.target
        if self.error is not None:
            out["error"] = self.error
        if self.extra:
            out["extra"] = self.extra
        return out


@dataclass(frozen=True)
class JudgeInput:
    """What a judge sees: the case and one generation for it."""

    kind: str
    payload: dict[str, Any]
    prompt: str
    output: str

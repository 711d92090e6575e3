"""From stored judgments to what the generation view shows: the checklist items and the
output with its evidence highlighted.

Highlights, by judge: literal overlap (the LCS spans of rougeL) on an olive background;
each character's mentions in its own colour (the checklist shows the same colour);
each event's supporting window tinted and opened by a marker "[n]" numbered like the
event list (1-based); other spans (QA answer, refusal phrase) on their own background.
The selected checklist item's spans are shown reversed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.style import Style
from rich.text import Text
from textual.content import Content

from db.browse import GenerationDetail, JudgmentView
from screens.widgets.plain import visible

CHARACTER_COLOURS = (
    "#ff8787",
    "#87d7ff",
    "#afff87",
    "#ffd75f",
    "#d7afff",
    "#5fffd7",
    "#ffafd7",
    "#d7d787",
)
LITERAL_STYLE = Style(bgcolor="#5f5f00", bold=True)
WINDOW_STYLE = Style(bgcolor="#262640")
MARKER_STYLE = Style(color="#000000", bgcolor="#87afff", bold=True)
SPAN_STYLES = {
    "refusal": Style(bgcolor="#5f005f", bold=True),
    "qa": Style(bgcolor="#005f5f", bold=True),
}
DEFAULT_SPAN_STYLE = Style(bgcolor="#5f3f00", bold=True)
SELECTED_STYLE = Style(reverse=True)


def character_style(index: int) -> Style:
    return Style(color=CHARACTER_COLOURS[index % len(CHARACTER_COLOURS)], bold=True, underline=True)


@dataclass(frozen=True)
class EvidenceItem:
    """One checklist entry: an event, a character, or a whole-output score."""

    key: str  # "event:3", "character:0", "score:literal/rougeL"
    kind: str  # event | character | score
    index: int | None  # item index in the reference list (events, characters)
    label: str  # event text, character aliases, or the metric name
    verdict: bool | None
    score: float | None
    spans: tuple[tuple[int, int], ...]
    judgment: JudgmentView
    note: str = ""

    @property
    def number(self) -> int | None:
        """1-based number shown in the list and in the output markers."""
        return None if self.index is None else self.index + 1


def _aliases(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return " / ".join(str(v) for v in value)
    return str(value)


def _reference_list(payload: dict[str, Any], kind: str) -> list[Any]:
    key = "reference_events" if kind == "event" else "reference_characters"
    value = payload.get(key)
    return value if isinstance(value, list) else []


def _spans_of(judgment: JudgmentView, item: int | None = None) -> tuple[tuple[int, int], ...]:
    spans = []
    for span in judgment.evidence.get("spans") or []:
        if item is None or span.get("item") == item:
            spans.append((int(span["start"]), int(span["end"])))
    return tuple(sorted(spans))


def evidence_items(detail: GenerationDetail) -> list[EvidenceItem]:
    """Checklist entries: per-item judges (events, characters) give one entry per
    reference item; other judges one entry per metric with spans or a flag (a metric
    repeating another's spans, like lcs_tokens after rougeL, is left out)."""
    items: list[EvidenceItem] = []
    seen_spans: set[tuple[tuple[int, int], ...]] = set()
    for judgment in sorted(detail.judgments, key=_judgment_order):
        target = judgment.target
        verdicts = judgment.evidence.get("items") or []
        if target in ("event", "character") and verdicts:
            reference = _reference_list(detail.payload, target)
            excluded = set((judgment.evidence.get("extra") or {}).get("excluded") or [])
            for entry in verdicts:
                index = int(entry["index"])
                label = _aliases(reference[index]) if index < len(reference) else f"#{index + 1}"
                items.append(
                    EvidenceItem(
                        key=f"{target}:{index}",
                        kind=target,
                        index=index,
                        label=label,
                        verdict=entry.get("verdict"),
                        score=entry.get("score"),
                        spans=_spans_of(judgment, index),
                        judgment=judgment,
                        note="named in the prompt" if index in excluded else "",
                    )
                )
            continue
        spans = _spans_of(judgment)
        if spans in seen_spans and spans:
            continue
        if not spans and judgment.flagged is None and target is None:
            continue
        seen_spans.add(spans)
        items.append(
            EvidenceItem(
                key=f"score:{judgment.judge}/{judgment.metric}",
                kind="score",
                index=None,
                label=judgment.metric,
                verdict=judgment.flagged,
                score=judgment.value,
                spans=spans,
                judgment=judgment,
                note=judgment.error or "",
            )
        )
    return items


def _judgment_order(judgment: JudgmentView) -> tuple[int, str, str]:
    rank = {"literal": 0, "event": 1, "character": 2, "refusal": 3}.get(judgment.target or "", 4)
    return rank, judgment.judge, judgment.metric


def span_style(item: EvidenceItem) -> Style:
    if item.kind == "character":
        return character_style(item.index or 0)
    if item.kind == "event":
        return WINDOW_STYLE
    if item.judgment.target == "literal":
        return LITERAL_STYLE
    if item.judgment.metric.startswith("qa"):
        return SPAN_STYLES["qa"]
    return SPAN_STYLES.get(item.judgment.target or "", DEFAULT_SPAN_STYLE)


@dataclass
class RenderedOutput:
    """The output as shown (with event markers inserted) and the offset bookkeeping."""

    text: Text
    insertions: list[tuple[int, int]] = field(default_factory=list)  # (position, length)

    def display_offset(self, position: int) -> int:
        """Where character `position` of the stored output is in the shown text (a marker
        inserted at `position` comes before it)."""
        return position + sum(length for at, length in self.insertions if at <= position)


def _clip(start: int, end: int, length: int) -> tuple[int, int] | None:
    start, end = max(0, min(start, length)), max(0, min(end, length))
    return (start, end) if end > start else None


def render_output(
    output: str, items: Sequence[EvidenceItem], selected: str | None = None
) -> RenderedOutput:
    """The output with every item's evidence styled and event markers inserted."""
    base = Text(visible(output), end="")
    length = len(output)
    markers: dict[int, list[int]] = {}
    for item in items:
        style = span_style(item)
        for start, end in item.spans:
            clipped = _clip(start, end, length)
            if clipped is None:
                continue
            base.stylize(style, *clipped)
            if item.kind == "event" and item.number is not None:
                markers.setdefault(clipped[0], []).append(item.number)
    chosen = next((i for i in items if i.key == selected), None)
    if chosen is not None:
        for start, end in chosen.spans:
            clipped = _clip(start, end, length)
            if clipped is not None:
                base.stylize(SELECTED_STYLE, *clipped)
    if not markers:
        return RenderedOutput(base)
    positions = sorted(markers)
    pieces = base.divide(positions)
    result = Text(end="")
    insertions: list[tuple[int, int]] = []
    result.append_text(pieces[0])
    for position, piece in zip(positions, pieces[1:], strict=True):
        label = "".join(f"[{n}]" for n in sorted(markers[position]))
        marker_style = MARKER_STYLE + SELECTED_STYLE if _marks_selected(chosen, position) else None
        result.append(label, marker_style or MARKER_STYLE)
        insertions.append((position, len(label)))
        result.append_text(piece)
    return RenderedOutput(result, insertions)


def _marks_selected(chosen: EvidenceItem | None, position: int) -> bool:
    return (
        chosen is not None
        and chosen.kind == "event"
        and any(start == position for start, _ in chosen.spans)
    )


def line_of_offset(shown: str, offset: int, width: int) -> int:
    """The wrapped line (0-based) holding character `offset` of `shown` at `width` cells,
    wrapped the way Textual wraps a Static's content."""
    if width <= 0 or offset <= 0:
        return 0
    end = offset
    while end < len(shown) and not shown[end].isspace():
        end += 1  # wrap whole words, as the widget does
    return max(0, len(Content(shown[:end]).wrap(width)) - 1)

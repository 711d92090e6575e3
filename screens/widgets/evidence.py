"""From stored judgments to what the generation view shows: the checklist items and the
output with its evidence highlighted.

Highlights, by judge: literal overlap (the LCS spans of rougeL) on an olive background;
each character's mentions in its own colour (the checklist shows the same colour; no
two characters of a case share one); each event's supporting window tinted, with a
marker "[n]" numbered like the event list (1-based) in the gutter beside the line where
the window starts (never inserted into the output); other spans (QA answer, refusal
phrase) on their own background; each span traced to the library (the trace judge) is
one item, saying which work holds it, a work other than the case's own called out. The
selected checklist item's spans are shown reversed. `legend` names every highlight present.
"""

from __future__ import annotations

import bisect
import colorsys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.content import Content

from db.browse import GenerationDetail, JudgmentView
from screens.plain import visible

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
TRACE_STYLE = Style(bgcolor="#00005f", bold=True, underline=True)
TRACE_METRIC = ("trace", "longest_traced_chars")  # the judgment whose evidence lists the spans
SELECTED_STYLE = Style(reverse=True)


GOLDEN = 0.6180339887498949  # hue step beyond the palette: every index its own hue


def character_colour(index: int) -> str:
    """The colour of the character at `index`: the palette, then hues spread by the
    golden ratio (distinct for every index, however many characters a case has)."""
    if index < len(CHARACTER_COLOURS):
        return CHARACTER_COLOURS[index]
    hue = (index * GOLDEN) % 1.0
    red, green, blue = colorsys.hls_to_rgb(hue, 0.7, 0.9)
    colour = f"#{round(red * 255):02x}{round(green * 255):02x}{round(blue * 255):02x}"
    return colour if colour not in CHARACTER_COLOURS else f"#{(int(colour[1:], 16) ^ 1):06x}"


def character_style(index: int) -> Style:
    return Style(color=character_colour(index), bold=True, underline=True)


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
    place: dict[str, Any] | None = None  # a traced span: where the library holds it

    @property
    def number(self) -> int | None:
        """1-based number shown in the list and in the output markers."""
        return None if self.index is None else self.index + 1


def _aliases(value: object) -> str:
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
        traced = trace_items(judgment, detail.work_title)
        if traced:
            items += traced
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


def own_work(place: dict[str, Any], work_title: str) -> bool:
    """Whether the library's work at `place` is the case's own (by title, casefolded)."""
    return str(place.get("work", "")).casefold() == work_title.casefold()


def trace_label(place: dict[str, Any], work_title: str) -> str:
    """Where a traced span comes from: 'from <title> (status)', or 'from another work:
    <title> (status)' when the work is not the case's own."""
    origin = "from" if own_work(place, work_title) else "from another work:"
    return f"{origin} {place.get('work')} ({place.get('status')})"


def trace_items(judgment: JudgmentView, work_title: str) -> list[EvidenceItem]:
    """One item per span of the trace judge's evidence (exact spans with their first
    place, then near-verbatim ones), in output order; [] for any other judgment."""
    if (judgment.judge, judgment.metric) != TRACE_METRIC:
        return []
    extra = judgment.evidence.get("extra") or {}
    threshold = judgment.threshold
    found: list[tuple[int, int, dict[str, Any], str]] = []
    for span in extra.get("spans") or []:
        places = span.get("places") or []
        if places:
            more = span.get("count", 1) - 1
            note = f"and {more} more place{'s' if more > 1 else ''}" if more > 0 else ""
            found.append((int(span["start"]), int(span["end"]), places[0], note))
    for near in extra.get("near_verbatim") or []:
        place = {**near, "start": near["work_start"], "end": near["work_end"]}
        slips = near.get("slips", 1)
        found.append(
            (int(near["start"]), int(near["end"]), place, f"near-verbatim, {slips} slip(s)")
        )
    return [
        EvidenceItem(
            key=f"trace:{number}",
            kind="trace",
            index=None,
            label=trace_label(place, work_title),
            verdict=None if threshold is None else end - start >= threshold,
            score=float(end - start),
            spans=((start, end),),
            judgment=judgment,
            note=note,
            place=place,
        )
        for number, (start, end, place, note) in enumerate(sorted(found, key=lambda f: f[:2]))
    ]


def _judgment_order(judgment: JudgmentView) -> tuple[int, str, str]:
    rank = {"literal": 0, "event": 1, "character": 2, "refusal": 3}.get(judgment.target or "", 4)
    return rank, judgment.judge, judgment.metric


def span_style(item: EvidenceItem) -> Style:
    if item.kind == "character":
        return character_style(item.index or 0)
    if item.kind == "event":
        return WINDOW_STYLE
    if item.kind == "trace":
        return TRACE_STYLE
    if item.judgment.target == "literal":
        return LITERAL_STYLE
    if item.judgment.metric.startswith("qa"):
        return SPAN_STYLES["qa"]
    return SPAN_STYLES.get(item.judgment.target or "", DEFAULT_SPAN_STYLE)


GUTTER = 5  # the narrowest gutter ("[1]  "); it widens to the longest marker here
MAX_GUTTER = 12  # markers longer than this are cut ("[1,2,3,4,5…")


@dataclass
class RenderedOutput:
    """The output as shown: its text, and (when shown with a gutter) where each shown
    line starts in the stored output, so a span's line is known without re-wrapping."""

    text: Text
    line_starts: list[int] = field(default_factory=list)  # in the stored output
    shown_starts: list[int] = field(default_factory=list)  # the same lines in `text`
    gutter: int = 0  # cells of the gutter before every line (0: no gutter)

    def line_of(self, position: int) -> int | None:
        """The shown line (0-based) holding stored character `position`, when the
        output was wrapped here (None: the widget wraps it; see line_of_offset)."""
        if not self.line_starts:
            return None
        return max(0, bisect.bisect_right(self.line_starts, position) - 1)

    def display_offset(self, position: int) -> int:
        """Where stored character `position` is in the shown text (after the gutters)."""
        line = self.line_of(position)
        if line is None:
            return position
        return self.shown_starts[line] + position - self.line_starts[line]

    def shown_ranges(self, start: int, end: int) -> list[tuple[int, int]]:
        """Where stored characters start..end are in the shown text: one range per
        shown line they cross (the gutters between lines left out)."""
        first, last = self.line_of(start), self.line_of(max(start, end - 1))
        if first is None or last is None:
            return [(start, end)]
        ranges = []
        for line in range(first, last + 1):
            line_end = self.line_starts[line + 1] if line + 1 < len(self.line_starts) else end
            begin, stop = max(start, self.line_starts[line]), min(end, line_end)
            if stop > begin:
                shown = self.display_offset(begin)
                ranges.append((shown, shown + stop - begin))
        return ranges


def _clip(start: int, end: int, length: int) -> tuple[int, int] | None:
    start, end = max(0, min(start, length)), max(0, min(end, length))
    return (start, end) if end > start else None


def wrap_ranges(text: str, width: int) -> list[tuple[int, int]]:
    """(start, end) of each line when `text` is wrapped at `width` cells: at the last
    whitespace that fits, else inside the word; a newline always ends a line (it is
    not part of either line)."""
    ranges: list[tuple[int, int]] = []
    position = 0
    for paragraph in text.split("\n"):
        start, end = position, position + len(paragraph)
        line_start, cells, last_break, index = start, 0, None, start
        while index < end:
            char_cells = cell_len(text[index])
            if cells + char_cells > width and index > line_start:
                cut = last_break if last_break is not None and last_break > line_start else index
                ranges.append((line_start, cut))
                line_start, last_break = cut, None
                cells = cell_len(text[line_start:index])
                continue
            if text[index].isspace():
                last_break = index + 1
            cells += char_cells
            index += 1
        ranges.append((line_start, end))
        position = end + 1
    return ranges


def _marker(numbers: Sequence[int]) -> str:
    label = "[" + ",".join(str(n) for n in sorted(numbers)) + "]"
    return label if len(label) < MAX_GUTTER else label[: MAX_GUTTER - 2] + "…"


def _gutter(numbers: Sequence[int] | None, width: int) -> Text:
    label = _marker(numbers) if numbers else ""
    text = Text(label, style=MARKER_STYLE, end="")
    text.append(" " * (width - len(label)))
    return text


def render_output(
    output: str,
    items: Sequence[EvidenceItem],
    selected: str | None = None,
    width: int | None = None,
) -> RenderedOutput:
    """The output with every item's evidence styled. With event windows and a known
    `width` (cells), it is wrapped here with a gutter: each window's marker "[n]" stands
    beside the line where the window starts, outside the output text."""
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
    if not markers or width is None or width <= MAX_GUTTER + 8:
        return RenderedOutput(base)
    shown = base.plain.replace("\t", " ")  # tabs one cell wide, as wrapped here
    base = Text(shown, spans=base.spans, end="")
    gutter = GUTTER
    for _ in range(2):  # the gutter fits the longest marker of its lines
        ranges = wrap_ranges(shown, width - gutter)
        rendered = RenderedOutput(Text(end=""), [start for start, _ in ranges], gutter=gutter)
        by_line: dict[int, list[int]] = {}
        for at, numbers in markers.items():
            by_line.setdefault(rendered.line_of(at) or 0, []).extend(numbers)
        needed = max(len(_marker(numbers)) + 1 for numbers in by_line.values())
        if needed <= gutter:
            break
        gutter = needed
    result = rendered.text
    for number, (start, end) in enumerate(ranges):
        result.append_text(_gutter(by_line.get(number), rendered.gutter))
        rendered.shown_starts.append(len(result))
        result.append_text(base[start:end])
        if number < len(ranges) - 1:
            result.append("\n")
    return rendered


def line_of_offset(shown: str, offset: int, width: int) -> int:
    """The wrapped line (0-based) holding character `offset` of `shown` at `width` cells,
    wrapped the way Textual wraps a Static's content."""
    if width <= 0 or offset <= 0:
        return 0
    end = offset
    while end < len(shown) and not shown[end].isspace():
        end += 1  # wrap whole words, as the widget does
    return max(0, len(Content(shown[:end]).wrap(width)) - 1)


def _swatch(style: Style, name: str) -> Text:
    text = Text(" ", end="")
    text.append(" abc ", style=style)
    text.append(f" {name} ", style="dim")
    return text


def legend(items: Sequence[EvidenceItem]) -> Text:
    """One line naming every highlight the output shows: literal overlap, event windows
    (and their gutter markers), each character in its colour, answer, refusal evidence."""
    shown = [item for item in items if item.spans]
    line = Text("Legend:", style="bold", end="")
    if not shown:
        line.append(" no highlights in this output", style="dim")
        return line
    kinds: dict[str, Style] = {}
    for item in shown:
        if item.kind == "score":
            name = "literal overlap" if item.judgment.target == "literal" else None
            if name is None:
                name = "answer" if item.judgment.metric.startswith("qa") else "refusal evidence"
                if item.judgment.target != "refusal" and not item.judgment.metric.startswith("qa"):
                    name = f"{item.judgment.metric} evidence"  # e.g. longest_verbatim_chars
            kinds.setdefault(name, span_style(item))
        elif item.kind == "event":
            kinds.setdefault("event window ([n] in the gutter)", WINDOW_STYLE)
        elif item.kind == "trace":
            kinds.setdefault("traced to the library", TRACE_STYLE)
    for name, style in kinds.items():
        line.append_text(_swatch(style, name))
    characters = [item for item in shown if item.kind == "character"]
    if characters:
        line.append("  characters: ", style="dim")
        for number, item in enumerate(characters):
            if number:
                line.append(", ", style="dim")
            line.append(visible(item.label.split(" / ")[0]), style=span_style(item))
    line.append("  selected: ", style="dim")
    line.append("reversed", style=SELECTED_STYLE)
    return line

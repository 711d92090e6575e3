"""The evidence checklist of the generation view: events and characters with the
judge's verdict and score, the current human labels, and whole-output scores.

It is an OptionList of EvidenceItem entries keyed by item key ("event:3"). Labelling
happens in annotation mode (screens/review/annotation.py), whose LabelChecklist
(screens/widgets/label_checklist.py) uses the same keys for events and characters.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import OptionList
from textual.widgets.option_list import Option, OptionDoesNotExist

from copyaudit.judges.metric_facts import format_metric
from db.content import with_version
from screens.plain import DASH, plain
from screens.widgets.evidence import EvidenceItem, character_style

HEADINGS = {
    "event": "Events",
    "character": "Characters",
    "score": "Scores",
    "trace": "Traced to the library (Enter: the work's text)",
}


def _verdict_mark(verdict: bool | None) -> Text:
    if verdict is None:
        return Text("·", style="dim")
    return Text("✓", style="bold green") if verdict else Text("✗", style="red")


def _score_text(item: EvidenceItem) -> Text:
    if item.kind == "score":
        return Text(format_metric(item.judgment.metric, item.score))
    if item.kind == "trace":
        return Text(f"{item.score:.0f} chars", style="bold" if item.verdict else "dim")
    return Text(DASH if item.score is None else f"{item.score:.2f}", style="dim")


def _labels_text(labels: Sequence[dict[str, Any]]) -> Text:
    if not labels:
        return Text("")
    parts = [
        plain(f"{label['annotator']}: {with_version(label['label'], label.get('stale'))}")
        for label in labels
    ]
    return Text("  ", end="").join([Text("  human ", style="italic dim"), *parts])


def item_prompt(item: EvidenceItem, labels: Sequence[dict[str, Any]] = ()) -> Text:
    """One line per item: verdict, number or colour swatch, score, text, labels."""
    line = Text(end="")
    line.append_text(_verdict_mark(item.verdict))
    line.append(" ")
    if item.kind == "event":
        line.append(f"[{item.number}]", style="bold #87afff")
        line.append(" ")
    elif item.kind == "character":
        line.append("■", style=character_style(item.index or 0))
        line.append(" ")
    if item.kind == "score":
        line.append_text(plain(item.label, style="bold"))
        line.append(" ")
    line.append_text(_score_text(item))
    if item.kind == "score" and item.judgment.threshold is not None:
        line.append(f" (≥ {item.judgment.threshold:g})", style="dim")
    if item.kind != "score":
        line.append(" ")
        line.append_text(plain(item.label))
    if item.note:
        line.append_text(plain(f"  ({item.note})", style="italic dim"))
    if item.spans:
        count = len(item.spans)
        line.append(f"  {count} span{'s' if count != 1 else ''}", style="dim")
    line.append_text(_labels_text(labels))
    return line


class EvidenceChecklist(OptionList):
    """Highlighting an item shows its evidence in the output; Enter goes to its next span."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select", "Next span", id="checklist.next_span", show=False),
    ]

    def set_items(
        self, items: Sequence[EvidenceItem], labels: Sequence[dict[str, Any]] = ()
    ) -> None:
        options: list[Option] = []
        previous_kind = None
        for item in items:
            if item.kind != previous_kind:
                heading = Text(HEADINGS.get(item.kind, item.kind), style="bold underline")
                options.append(Option(heading, id=f"heading:{item.kind}", disabled=True))
                previous_kind = item.kind
            target = "literal" if item.kind == "score" else item.kind
            mine = [
                label
                for label in labels
                if label["target"] == (item.judgment.target or target)
                and (item.index is None or label["item_index"] == item.index)
            ]
            options.append(Option(item_prompt(item, mine), id=item.key))
        self.clear_options()
        self.add_options(options)
        first = next((i for i, o in enumerate(options) if not o.disabled), None)
        if first is not None:
            self.highlighted = first

    def select_item(self, key: str) -> None:
        """Highlight the item with option id `key` (nothing happens if it is absent)."""
        try:
            self.highlighted = self.get_option_index(key)
        except OptionDoesNotExist:
            return

"""The checklist of annotation mode: one line per label item with your current label,
your note, and (outside blind mode) the judges' verdicts; when adjudicating, everyone's
labels too. Stored text is shown through plain()."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from db.content import EARLIER_VERSION, with_version
from db.labels import CurrentLabel
from screens.plain import plain
from screens.state.labelling import ItemKey
from screens.widgets.evidence import character_style
from screens.widgets.label_items import LabelItem

HEADINGS = {
    "event": "Events: in the story?",
    "character": "Characters: in the story?",
    "refusal": "Whole output",
    "literal": "Whole output",
    "content": "Whole output",
}
LABEL_MARKS = {
    "yes": (" YES ", "bold black on green"),
    "no": (" NO  ", "bold white on red"),
    "unsure": (" ??? ", "bold black on yellow"),
}
NO_LABEL = (" ·   ", "dim")


def _judge_marks(item: LabelItem) -> Text:
    out = Text(end="")
    for mark in item.judges:
        symbol, style = (
            ("·", "dim")
            if mark.verdict is None
            else {True: ("✓", "bold green"), False: ("✗", "red")}[mark.verdict]
        )
        out.append("  ")
        out.append_text(plain(mark.judge, "dim"))
        out.append(f" {symbol}", style=style)
    return out


def label_line(
    item: LabelItem,
    mine: CurrentLabel | None,
    others: Sequence[CurrentLabel] = (),
    *,
    blind: bool = True,
) -> Text:
    """[label] number/swatch text (note) ✎ your note · judges · other people."""
    mark, style = LABEL_MARKS.get(mine.label, NO_LABEL) if mine else NO_LABEL
    line = Text(mark, style=style, end="")
    line.append(" ")
    if item.target == "event":
        line.append(f"[{item.index + 1}] ", style="bold #87afff")
    elif item.target == "character":
        line.append("■ ", style=character_style(item.index))
    line.append_text(plain(item.text))
    if item.note:
        line.append_text(plain(f"  ({item.note})", "italic dim"))
    if mine is not None and mine.note:
        line.append_text(plain(f"  ✎ {mine.note}", "italic cyan"))
    if mine is not None and mine.stale:
        line.append(f"  ({EARLIER_VERSION}: label again)", style="italic yellow")
    if not blind:
        line.append_text(_judge_marks(item))
    if others:
        people = ", ".join(f"{o.annotator}: {with_version(o.label, o.stale)}" for o in others)
        line.append_text(plain(f"  [{people}]", "italic"))
    return line


class LabelChecklist(OptionList):
    """Label items as options keyed by LabelItem.key; headings are disabled options."""

    def __init__(self, *, id: str) -> None:
        super().__init__(id=id)
        self.items: list[LabelItem] = []
        self._by_key: dict[str, LabelItem] = {}

    def set_items(self, items: Sequence[LabelItem]) -> None:
        """Load a generation's items (labels come with `show_labels`)."""
        self.items = list(items)
        self._by_key = {item.key: item for item in items}
        options: list[Option] = []
        heading = None
        for item in items:
            if HEADINGS[item.target] != heading:
                heading = HEADINGS[item.target]
                options.append(
                    Option(
                        Text(heading, style="bold underline"),
                        id=f"heading:{item.target}",
                        disabled=True,
                    )
                )
            # an item not asked (named in the prompt) is shown but the cursor skips it
            options.append(Option(plain(item.text), id=item.key, disabled=not item.asked))
        self.clear_options()
        self.add_options(options)
        first = next((i for i, o in enumerate(options) if not o.disabled), None)
        if first is not None:
            self.highlighted = first

    def show_labels(
        self,
        labels: Mapping[ItemKey, Sequence[CurrentLabel]],
        annotator: str,
        *,
        blind: bool,
        show_others: bool,
    ) -> None:
        """Redraw every line with the current labels (the cursor stays where it is)."""
        for item in self.items:
            here = labels.get((item.target, item.index), ())
            mine = next((label for label in here if label.annotator == annotator), None)
            others = [label for label in here if label.annotator != annotator]
            prompt = label_line(item, mine, others if show_others else (), blind=blind)
            self.replace_option_prompt(item.key, prompt)

    @property
    def current_item(self) -> LabelItem | None:
        option = self.highlighted_option
        return None if option is None or option.id is None else self._by_key.get(option.id)

    def select_item(self, key: str) -> None:
        if key in self._by_key:
            self.highlighted = self.get_option_index(key)

    def step(self, step: int) -> bool:
        """Move the cursor to the next (or previous) item; False at either end."""
        if self.highlighted is None:
            return False
        index = self.highlighted + step
        while 0 <= index < self.option_count:
            if not self.get_option_at_index(index).disabled:
                self.highlighted = index
                return True
            index += step
        return False

"""One DE-COP passage: its four options (the verbatim passage, the true one, and three
paraphrases) as plain text, then its 24 prompts — which option stood at A..D, the
true letter, the model's probabilities for A..D before and after the calibration
(p + Δ) and the letter chosen each way."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Static

from copyaudit.studies.decop.method import ANSWER_LETTERS
from copyaudit.studies.decop.orders import OPTION_TAGS, OrderRow
from screens.plain import DASH, plain
from screens.state.decop_view_data import PassageEntry, letter, options_of
from screens.widgets.decop_charts import fixed, work_title
from screens.widgets.footer import KeysFooter

if TYPE_CHECKING:
    from screens.state.decop_view_data import WorkRow

TRUE_STYLE = "bold #7bc47f"
WRONG_STYLE = "#e07a5f"
OPTION_NAMES = ("verbatim — the true option", "paraphrase 1", "paraphrase 2", "paraphrase 3")


def options_text(payload: dict[str, Any]) -> Text:
    """The four options, verbatim first, each under its tag (V, P1..P3)."""
    text = Text(end="")
    imported = ANSWER_LETTERS[int(payload["answer"])]
    for i, (tag, option) in enumerate(zip(OPTION_TAGS, options_of(payload), strict=True)):
        style = TRUE_STYLE if i == 0 else "bold"
        text.append(f"{tag:<3}{OPTION_NAMES[i]}", style)
        if i == 0:
            text.append(f" (imported as option {imported})", "dim")
        text.append("\n")
        text.append_text(plain(option))
        text.append("\n\n" if i < len(OPTION_TAGS) - 1 else "")
    return text


def probability_cell(value: float, true: bool) -> Text:
    shown = DASH if not math.isfinite(value) else f"{value:.3f}"
    return Text(shown, style=TRUE_STYLE if true else "", justify="right")


def chosen_cell(chosen: int | None, answer: int) -> Text:
    if chosen is None:
        return Text(DASH, justify="center")
    right = chosen == answer
    return Text(
        f"{letter(chosen)} {'✓' if right else '✗'}",
        style=TRUE_STYLE if right else WRONG_STYLE,
        justify="center",
    )


def order_cells(row: OrderRow) -> tuple[Text, ...]:
    arrangement = Text(no_wrap=True, end="")
    for i, tag in enumerate(row.tags):
        arrangement.append(f"{tag:<3}", TRUE_STYLE if i == row.answer else "")
    cells = [
        Text(str(row.index + 1), justify="right"),
        arrangement,
        Text(letter(row.answer), style=TRUE_STYLE, justify="center"),
        *(probability_cell(p, i == row.answer) for i, p in enumerate(row.probs)),
        chosen_cell(row.chosen, row.answer),
    ]
    if row.calibrated is not None:
        cells += [
            *(probability_cell(p, i == row.answer) for i, p in enumerate(row.calibrated)),
            chosen_cell(row.chosen_calibrated, row.answer),
        ]
    return tuple(cells)


class DecopPassageScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="decop_passage.back"),
    ]

    def __init__(
        self, run: dict[str, Any], work: WorkRow, entry: PassageEntry, delta: list[float] | None
    ) -> None:
        super().__init__()
        self.run, self.work, self.entry, self.delta = run, work, entry, delta

    def compose(self) -> ComposeResult:
        passage = self.entry.passage
        title = Text.assemble(("Passage ", "bold"), plain(passage["case_id"], "bold"), " · ")
        title.append_text(work_title(self.work))
        yield Static(title, classes="title-bar")
        yield Static(self._summary(), id="decop-passage-summary")
        with VerticalScroll(id="decop-options"):
            yield Static(options_text(passage["payload"]), id="decop-options-text")
        table: DataTable[Text] = DataTable(id="decop-orders", cursor_type="row", zebra_stripes=True)
        columns = ["#", "A  B  C  D", "True", *(f"p({x})" for x in ANSWER_LETTERS), "Chosen"]
        if self.delta is not None:
            columns += [*(f"{x}+Δ" for x in ANSWER_LETTERS), "Calib."]
        for column in columns:
            table.add_column(column)
        for row in self.entry.orders or []:
            table.add_row(*order_cells(row), key=str(row.index))
        yield table
        yield KeysFooter()

    def _summary(self) -> Text:
        figures = self.entry.figures
        text = Text(end="")
        if figures is None:
            return Text("not scored", style="dim")
        text.append("accuracy ", "bold")
        text.append(fixed(figures.accuracy))
        if figures.accuracy_calibrated is not None:
            text.append("   calibrated ", "bold")
            text.append(fixed(figures.accuracy_calibrated))
        text.append("   mean p(true) ", "bold")
        text.append(fixed(figures.verbatim_probability))
        if figures.unread:
            text.append(f"   {figures.unread} prompts unread", WRONG_STYLE)
        text.append("   true option in ", "dim")
        text.append("green", TRUE_STYLE)
        text.append(" · Tab: options ↔ prompts", "dim")
        return text

    def on_mount(self) -> None:
        self.query_one("#decop-orders").focus()

    def action_back(self) -> None:
        self.app.pop_screen()

"""The takedown table of one suite and model (CoTaEval): one row per takedown method —
win rates on the eight infringement metrics and their average, utility, decoding speed
— as `copyaudit takedown --table-only` prints it (copyaudit.studies.takedown), computed
in a worker. Opened from the dashboard (t on a run: that run's suite and model)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Static

from copyaudit.studies.takedown.render import cells
from copyaudit.studies.takedown.table import TakedownTable, takedown_table
from screens.app_link import copyaudit_app
from screens.plain import plain
from screens.widgets.footer import KeysFooter

EXPLANATION = (
    "Win rate: % of the other methods a method beats on a generation (less copying; for "
    "Levenshtein a larger distance), mean over generations; utility and tokens/s beside "
    "the method-less run's."
)


class TakedownLoaded(Message):
    def __init__(self, table: TakedownTable) -> None:
        super().__init__()
        self.table = table


class TakedownScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="takedown.back"),
        Binding("r", "reload", "Reload", id="takedown.reload"),
    ]

    def __init__(self, suite: str, model: str) -> None:
        super().__init__()
        self.suite = suite
        self.model = model
        self.table: TakedownTable | None = None

    def compose(self) -> ComposeResult:
        title = Text.assemble(("Takedown comparison", "bold"), " · ", plain(self.suite))
        title.append_text(Text(" × "))
        title.append_text(plain(self.model))
        yield Static(title, classes="title-bar")
        yield Static(Text("computing…", style="italic dim"), id="takedown-status")
        yield DataTable(id="takedown-table", cursor_type="row")
        yield Static(id="takedown-notes")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.action_reload()
        self.query_one("#takedown-table").focus()

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_reload(self) -> None:
        app = copyaudit_app(self)

        def work() -> None:
            with app.data.background() as store:
                table = takedown_table(store, self.suite, self.model)
            self.post_message(TakedownLoaded(table))

        app.start_worker(work, group="takedown", description="computing the takedown table")

    def on_takedown_loaded(self, message: TakedownLoaded) -> None:
        self.table = table = message.table
        status = plain(f"{table.examples} generations compared · {EXPLANATION}")
        self.query_one("#takedown-status", Static).update(status)
        head, rows = cells(table)
        widget = self.query_one("#takedown-table", DataTable)
        widget.clear(columns=True)
        for label in head:
            widget.add_column(plain(label))
        for row in rows:
            widget.add_row(*(plain(cell) for cell in row))
        notes = Text("\n".join(f"· {note}" for note in table.notes), style="italic")
        self.query_one("#takedown-notes", Static).update(notes)

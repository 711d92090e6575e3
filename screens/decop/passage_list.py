"""One work of a DE-COP run: its passages with their accuracy over the 24 orders
(before and after calibration), the mean probability given to the true option, and a
preview of the verbatim passage. Enter opens a passage's 24 prompts."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Static

from db.decop_browse import work_passages
from screens.app_link import copyaudit_app
from screens.destinations import DecopPassage
from screens.plain import number, one_line, plain
from screens.state.decop_view_data import PassageEntry, WorkRow, options_of, passage_entries
from screens.widgets.decop_charts import work_title
from screens.widgets.footer import KeysFooter
from screens.widgets.tables import OpenTable

PREVIEW_WIDTH = 200


class PassagesLoaded(Message):
    def __init__(self, entries: list[PassageEntry]) -> None:
        super().__init__()
        self.entries = entries


class DecopPassageListScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="decop_passages.back"),
    ]

    def __init__(self, run: dict[str, Any], work: WorkRow, delta: list[float] | None) -> None:
        super().__init__()
        self.run, self.work, self.delta = run, work, delta
        self.entries: list[PassageEntry] = []

    def compose(self) -> ComposeResult:
        title = Text.assemble(("DE-COP ", "bold"), plain(self.run["name"]), " · ")
        title.append_text(work_title(self.work))
        yield Static(title, classes="title-bar")
        yield Static(Text("loading passages…", style="dim"), id="decop-passages-summary")
        table = OpenTable(id="decop-passages")
        for key, label in (
            ("case", "Case"),
            ("accuracy", "Acc."),
            ("calibrated", "Calib."),
            ("p_true", "p(true)"),
            ("unread", "Unread"),
            ("verbatim", "Verbatim passage"),
        ):
            table.add_column(label, key=key)
        yield table
        yield KeysFooter()

    def on_mount(self) -> None:
        app = copyaudit_app(self)
        run_id, work_id, delta = int(self.run["id"]), self.work.work_id, self.delta

        def work() -> None:
            with app.data.background() as store:
                passages = work_passages(store, run_id, int(work_id or 0))
            self.post_message(PassagesLoaded(passage_entries(passages, delta)))

        self.query_one("#decop-passages").focus()
        app.start_worker(
            work, group=f"decop-passages-{id(self)}", description="loading DE-COP passages"
        )

    def on_passages_loaded(self, message: PassagesLoaded) -> None:
        self.entries = message.entries
        table = self.query_one("#decop-passages", DataTable)
        table.clear()
        for i, entry in enumerate(self.entries):
            figures = entry.figures
            verbatim = options_of(entry.passage["payload"])[0]
            table.add_row(
                plain(entry.passage["case_id"]),
                number(None if figures is None else figures.accuracy, 3, whole=False),
                number(None if figures is None else figures.accuracy_calibrated, 3, whole=False),
                number(None if figures is None else figures.verbatim_probability, 3, whole=False),
                number(None if figures is None else figures.unread),
                one_line(verbatim, PREVIEW_WIDTH),
                key=str(i),
            )
        scored = sum(1 for e in self.entries if e.orders is not None)
        self.query_one("#decop-passages-summary", Static).update(
            Text.assemble(
                f"{len(self.entries)} passages, {scored} scored · ",
                ("p(true)", "bold"),
                ": mean probability of the verbatim option's letter · Enter: the 24 prompts",
            )
        )

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is None:
            return
        entry = self.entries[int(event.row_key.value)]
        if entry.orders is None:
            self.notify("this passage has not been scored yet", severity="warning")
            return
        app = copyaudit_app(self)
        app.open(DecopPassage(self.run, self.work, entry, self.delta))

    def action_back(self) -> None:
        self.app.pop_screen()

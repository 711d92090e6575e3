"""A DE-COP run: its separation figures, per-work accuracy and the full report.

DE-COP runs score passages (no generations): the figures come from
copyaudit.decop_run.decop_report, computed in a worker."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from screens.widgets.plain import number, plain


class DecopLoaded(Message):
    def __init__(self, report: dict[str, Any], markdown: str) -> None:
        super().__init__()
        self.report, self.markdown = report, markdown


class DecopScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="decop.back"),
    ]

    def __init__(self, run: dict[str, Any]) -> None:
        super().__init__()
        self.run = run

    def compose(self) -> ComposeResult:
        title = Text.assemble(("DE-COP run ", "bold"), plain(self.run["name"], "bold"))
        title.append_text(plain(f" · suite {self.run['suite']} · model {self.run['model']}"))
        yield Static(title, classes="title-bar")
        yield Static(Text("computing the report…", style="dim"), id="decop-summary")
        table = DataTable(id="decop-works", cursor_type="row", zebra_stripes=True)
        for key, label in (
            ("work", "Work"),
            ("label", "Label"),
            ("prompts", "Prompts"),
            ("accuracy", "Accuracy"),
            ("calibrated", "Calibrated"),
        ):
            table.add_column(label, key=key)
        yield table
        with VerticalScroll(id="decop-report"):
            yield Static(id="decop-markdown")
        yield Footer()

    def on_mount(self) -> None:
        app: Any = self.app
        name = self.run["name"]

        def work() -> None:
            from copyaudit.decop_run import decop_markdown, decop_report

            with app.data.background() as store:
                report = decop_report(store, name)
            self.post_message(DecopLoaded(report, decop_markdown(report)))

        app.start_worker(work, group=f"decop-{id(self)}", description="computing the DE-COP report")

    def on_decop_loaded(self, message: DecopLoaded) -> None:
        report = message.report
        summary = Text.assemble(
            ("ROC-AUC ", "bold"),
            number(report.get("auc"), 3),
            ("   calibrated ", "bold"),
            number(report.get("auc_calibrated"), 3),
            ("   p-value ", "bold"),
            number(report.get("p_value"), 4),
            ("   passages ", "bold"),
            f"{report['passages']['scored']}/{report['passages']['total']}",
        )
        self.query_one("#decop-summary", Static).update(summary)
        table = self.query_one("#decop-works", DataTable)
        labels = {1: "suspect", 0: "clean", None: "unknown"}
        for entry in report.get("per_work", []):
            table.add_row(
                plain(entry["work"]),
                Text(labels.get(entry["label"], "?")),
                number(entry["n_prompts"]),
                number(entry["accuracy"], 3),
                number(entry.get("accuracy_calibrated"), 3),
            )
        self.query_one("#decop-markdown", Static).update(plain(message.markdown))

    def action_back(self) -> None:
        self.app.pop_screen()

"""A DE-COP run: headline figures, the method table (baselines and DE-COP, as the
paper's Table 2), per-work accuracy bars against the chance line (0.25), the ROC curve
and the label-position bias before and after calibration. Enter on a work lists its
passages; `r` shows the full text report.

DE-COP runs score passages (no generations): the figures come from
studies.decop.report.decop_report, computed in a worker (screens.state.decop_view_data)."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Static

from copyaudit.studies.decop.report import mean_std
from screens.app_link import copyaudit_app
from screens.destinations import DecopWork
from screens.plain import number, one_line, plain
from screens.state.decop_view_data import DecopView, WorkRow, load_decop_view
from screens.widgets.decop_charts import (
    CHANCE,
    LABELS,
    bar,
    bias_text,
    ci_text,
    fixed,
    label_style,
    methods_table,
    p_text,
)
from screens.widgets.footer import KeysFooter
from screens.widgets.roc_plot import RocPlot
from screens.widgets.tables import OpenTable

BAR_WIDTH = 16
NAME_WIDTH = 26


class DecopLoaded(Message):
    def __init__(self, view: DecopView) -> None:
        super().__init__()
        self.view = view


def headline(report: dict[str, Any]) -> Text:
    """Three lines: the AUC with its interval, calibrated AUC and Welch p; then the Youden
    balanced accuracy (the reference code's "AUC"), the works and passages counted; then
    the paper's Table 2 figure (thresholded AUC, mean ± std over 10 resamples)."""
    text = Text(end="")
    text.append("ROC-AUC ", "bold")
    text.append(fixed(report.get("auc")), "bold")
    text.append(f"  (95% CI {ci_text(report.get('auc_ci'))})")
    text.append("  calibrated AUC ", "bold")
    text.append(fixed(report.get("auc_calibrated")))
    text.append("  Welch p ", "bold")
    text.append(p_text(report.get("p_value")))
    passages = report["passages"]
    text.append(
        f"  {report['n_suspect']} suspect, {report['n_clean']} clean · "
        f"{passages['scored']}/{passages['total']} passages",
        "dim",
    )
    text.append("\nBalanced accuracy at the Youden threshold ", "bold")
    text.append(fixed(report.get("balanced_accuracy_youden")))
    calibrated = report.get("calibrated")
    if calibrated:
        text.append(f" (calibrated {fixed(calibrated['balanced_accuracy_youden'])})")
    text.append('  — what the reference code printed as "AUC"', "dim")
    text.append("\nPaper's Table 2 AUC", "bold")
    text.append(" (thresholded, mean ± std over 10 resamples) ", "dim")
    text.append(mean_std(report.get("auc_thresholded_bootstrap")))
    if calibrated:
        text.append(f" (calibrated {mean_std(calibrated.get('auc_thresholded_bootstrap'))})")
    if report.get("failed_prompts"):
        text.append(f" · {report['failed_prompts']} unreadable prompts left out", "dim")
    return text


def work_cells(row: WorkRow) -> tuple[Text, ...]:
    style = label_style(row.label)
    label = "calib." if row.held_out else LABELS.get(row.label, "?")
    return (
        one_line(row.name, NAME_WIDTH),
        Text(label, style=style),
        bar(row.accuracy, BAR_WIDTH, style),
        number(row.accuracy, 3, whole=False),
        number(row.accuracy_calibrated, 3, whole=False),
    )


class ReportScreen(Screen[None]):
    """The run's text report (as `copyaudit report`), plain text."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="decop_report.back"),
    ]

    def __init__(self, title: str, markdown: str) -> None:
        super().__init__()
        self._title, self._markdown = title, markdown

    def compose(self) -> ComposeResult:
        yield Static(plain(self._title, "bold"), classes="title-bar")
        with VerticalScroll(id="decop-report"):
            yield Static(plain(self._markdown))
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one("#decop-report").focus()

    def action_back(self) -> None:
        self.app.pop_screen()


class DecopScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="decop.back"),
        Binding("r", "report", "Text report", id="decop.report"),
    ]

    def __init__(self, run: dict[str, Any]) -> None:
        super().__init__()
        self.run = run
        self.view: DecopView | None = None

    def compose(self) -> ComposeResult:
        title = Text.assemble(("DE-COP run ", "bold"), plain(self.run["name"], "bold"))
        title.append_text(plain(f" · suite {self.run['suite']} · model {self.run['model']}"))
        yield Static(title, classes="title-bar")
        yield Static(Text("computing the report…", style="dim"), id="decop-summary")
        with Horizontal(id="decop-body"):
            with Vertical(id="decop-left"):
                yield Static(
                    Text.assemble(
                        ("Per-work accuracy", "bold"),
                        (" over all 24 orders · ", "dim"),
                        ("┃", "bold #f2cc60"),
                        (f" chance {CHANCE} · Enter: passages", "dim"),
                    ),
                    classes="decop-caption",
                )
                table = OpenTable(id="decop-works")
                for key, label in (
                    ("work", "Work"),
                    ("label", "Label"),
                    ("bar", "Accuracy 0 ─ 1"),
                    ("accuracy", "Acc."),
                    ("calibrated", "Calib."),
                ):
                    table.add_column(label, key=key)
                yield table
                yield Static(id="decop-methods")
            with Vertical(id="decop-right"):
                yield RocPlot(id="decop-roc")
                yield Static(id="decop-bias")
        yield KeysFooter()

    def on_mount(self) -> None:
        app = copyaudit_app(self)
        name = self.run["name"]

        def work() -> None:
            with app.data.background() as store:
                view = load_decop_view(store, name)
            self.post_message(DecopLoaded(view))

        self.query_one("#decop-works").focus()
        app.start_worker(work, group=f"decop-{id(self)}", description="computing the DE-COP report")

    def on_decop_loaded(self, message: DecopLoaded) -> None:
        view = self.view = message.view
        report = view.report
        self.query_one("#decop-summary", Static).update(headline(report))
        table = self.query_one("#decop-works", DataTable)
        table.clear()
        for i, row in enumerate(view.works):
            table.add_row(*work_cells(row), key=str(i))
        self.query_one("#decop-methods", Static).update(methods_table(report))
        bias = report["label_position_bias"]
        held = [w["work"] for w in report["calibration"]["works"]]
        self.query_one("#decop-bias", Static).update(
            bias_text(bias["before"], bias.get("after"), report.get("delta"), held)
        )
        self.query_one(RocPlot).show(
            view.roc, view.roc_calibrated, report.get("auc"), report.get("auc_calibrated")
        )

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if self.view is None or event.row_key.value is None:
            return
        row = self.view.works[int(event.row_key.value)]
        if row.work_id is None:
            self.notify(f"no work id for {row.name}", severity="error", markup=False)
            return
        app = copyaudit_app(self)
        app.open(DecopWork(self.run, row, self.view.report.get("delta")))

    def action_report(self) -> None:
        if self.view is None:
            self.notify("the report is still being computed", severity="warning")
            return
        self.app.push_screen(
            ReportScreen(f"DE-COP report · {self.run['name']}", self.view.markdown)
        )

    def action_back(self) -> None:
        self.app.pop_screen()

"""The model comparison: one table per study as its paper prints it (copyaudit compare),
each cell the run report's figure with its 95% interval and n, or why it is empty.
Enter on a cell opens the run it came from; b cycles the rows (per model, model x
mitigation, model x notice level); below, the selected column as bars with intervals
and the score distributions of its runs side by side."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Static

from copyaudit.reports.compare.build import build_comparison, views
from copyaudit.reports.compare.render import cell_text, group_text
from screens.app_link import copyaudit_app
from screens.plain import plain
from screens.widgets.compare_plots import Distributions, FigureBars, run_color
from screens.widgets.footer import KeysFooter
from screens.widgets.tables import OpenTable

SCALES = {"percent": 100.0, "x100": 100.0}
CELL_WIDTH = 30  # a longer cell (a reason) is cut; the detail line below shows it whole


def _short(text: str, width: int = CELL_WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


class ComparisonLoaded(Message):
    def __init__(self, comparison: dict[str, Any]) -> None:
        super().__init__()
        self.comparison = comparison


class CompareScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="compare.back"),
        Binding("b", "next_view", "Rows by", id="compare.by"),
        Binding("r", "reload", "Reload", id="compare.reload"),
    ]
    DEFAULT_CSS = """
    #compare-tables { height: 1fr; }
    #compare-tables DataTable { height: auto; max-height: 12; }
    #compare-detail { height: auto; padding: 0 1; border-top: solid $primary; }
    #compare-plots { height: 14; }
    #compare-plots PlotextPlot { width: 1fr; }
    #compare-legend { width: 36; padding: 0 1; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.by = views()[0]
        self.comparison: dict[str, Any] | None = None
        self.selected: tuple[int, int, int] | None = None  # table, row, column

    def compose(self) -> ComposeResult:
        yield Static(Text("Model comparison", style="bold"), classes="title-bar")
        yield Static(Text("computing…", style="italic dim"), id="compare-status")
        yield VerticalScroll(id="compare-tables")
        yield Static(id="compare-detail")
        with Horizontal(id="compare-plots"):
            yield FigureBars(id="compare-bars")
            yield Distributions(id="compare-distributions")
            yield Static(id="compare-legend")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.action_reload()

    def action_reload(self) -> None:
        app = copyaudit_app(self)
        by = self.by

        def work() -> None:
            with app.data.background() as store:
                comparison = build_comparison(store, by=by)
            self.post_message(ComparisonLoaded(comparison))

        app.start_worker(work, group="compare", description="building the comparison")

    def action_next_view(self) -> None:
        choices = views()
        self.by = choices[(choices.index(self.by) + 1) % len(choices)]
        self.action_reload()

    def action_back(self) -> None:
        self.app.pop_screen()

    async def on_comparison_loaded(self, message: ComparisonLoaded) -> None:
        self.comparison = comparison = message.comparison
        status = f"rows per {comparison['by']} (b: change) · {len(comparison['runs'])} runs"
        if comparison["not_shown"]:
            status += " · not shown: " + "; ".join(comparison["not_shown"])
        self.query_one("#compare-status", Static).update(plain(status))
        holder = self.query_one("#compare-tables", VerticalScroll)
        await holder.remove_children()
        widgets: list[Any] = []
        for index, block in enumerate(comparison["tables"]):
            widgets.append(
                Static(plain(f"{block['title']} ({block['paper']})", "bold"), classes="section")
            )
            table = OpenTable(id=f"compare-table-{index}")
            table.cursor_type = "cell"
            table.fixed_columns = len(block["group"])  # the row's model stays in view
            for key in block["group"]:
                table.add_column(key, key=f"group:{key}")
            for column in block["columns"]:
                table.add_column(column["label"], key=column["key"])
            for number, row in enumerate(block["rows"]):
                table.add_row(
                    *(plain(_short(str(v), 40)) for v in row["group"].values()),
                    *(
                        plain(
                            _short(cell_text(row["cells"][c["key"]], c["shown_as"])),
                            "italic dim" if row["cells"][c["key"]]["value"] is None else "",
                        )
                        for c in block["columns"]
                    ),
                    key=str(number),
                )
            widgets.append(table)
        if not comparison["tables"]:
            widgets.append(Static(Text("No run to compare.", style="italic")))
        await holder.mount_all(widgets)
        if comparison["tables"]:
            first = self.query_one("#compare-table-0", DataTable)
            first.focus()
            first.move_cursor(column=len(comparison["tables"][0]["group"]))
            self._select(0, 0, len(comparison["tables"][0]["group"]))

    def _cell(self, table: int, row: int, column: int) -> tuple[dict, dict | None, dict | None]:
        assert self.comparison is not None
        block = self.comparison["tables"][table]
        offset = column - len(block["group"])
        if offset < 0 or row >= len(block["rows"]):
            return block, None, None
        spec = block["columns"][offset]
        return block, spec, block["rows"][row]["cells"][spec["key"]]

    def _select(self, table: int, row: int, column: int) -> None:
        self.selected = (table, row, column)
        block, spec, cell = self._cell(table, row, column)
        detail = self.query_one("#compare-detail", Static)
        if spec is None or cell is None:
            detail.update(Text("Select a figure: its run, n, interval and reason show here."))
            return
        text = Text.assemble(
            plain(group_text(block["rows"][row]["group"]), "bold"),
            " · ",
            plain(spec["label"]),
            ": ",
            plain(cell_text(cell, spec["shown_as"])),
        )
        if cell.get("run"):
            text.append_text(plain(f"\nfrom run {cell['run']} (Enter opens it)", "dim"))
        if cell.get("note"):
            text.append_text(plain(f"\n{cell['note']}", "dim"))
        detail.update(text)
        self._plot(block, spec)

    def _plot(self, block: dict[str, Any], spec: dict[str, Any]) -> None:
        cells = [row["cells"][spec["key"]] for row in block["rows"]]
        scale = SCALES.get(spec["shown_as"], 1.0)
        plottable = spec["shown_as"] not in ("mean_std", "p")
        self.query_one("#compare-bars", FigureBars).show(
            spec["label"],
            [c["value"] if plottable else None for c in cells],
            [c.get("interval") if plottable else None for c in cells],
            scale,
        )
        runs = {c["run"] for c in cells if c.get("run")}
        metric = next((d for d in block["distributions"] if d["metric"] == spec["metric"]), None)
        shown = [r for r in metric["runs"] if r["run"] in runs] if metric else []
        self.query_one("#compare-distributions", Distributions).show(
            metric["label"] if metric else "no score distribution", shown
        )
        legend = Text("rows\n", style="bold")
        for number, row in enumerate(block["rows"]):
            legend.append_text(plain(f"{number + 1} {group_text(row['group'])}\n"))
        if shown:
            legend.append("runs\n", style="bold")
            for number, run in enumerate(shown):
                legend.append("■ ", style="rgb({},{},{})".format(*run_color(number)))
                legend.append_text(plain(f"{number + 1} {run['run']}\n"))
        self.query_one("#compare-legend", Static).update(legend)

    def _table_index(self, table: DataTable) -> int:
        return int(str(table.id).rsplit("-", 1)[-1])

    def on_data_table_cell_highlighted(self, event: DataTable.CellHighlighted) -> None:
        event.stop()
        if self.comparison is None:
            return
        self._select(
            self._table_index(event.data_table), event.coordinate.row, event.coordinate.column
        )

    def on_data_table_cell_selected(self, event: DataTable.CellSelected) -> None:
        """Enter: open the run the cell came from."""
        event.stop()
        if self.comparison is None:
            return
        _, _, cell = self._cell(
            self._table_index(event.data_table), event.coordinate.row, event.coordinate.column
        )
        app = copyaudit_app(self)
        if cell is not None and cell.get("run"):
            app.open_run(cell["run"])

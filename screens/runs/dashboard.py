"""Runs dashboard: every run (kind, model, status, live progress, headline figures) and
every suite. Enter opens a run's generations, or the launcher for a suite. Under the
runs, for the highlighted run with a random-sample queue: its rates as people would
give them (judge -> estimate [interval], copyaudit.verification.estimates), computed in
the loading worker; the line is hidden for other runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Static

from copyaudit.metrics_spec import Headline, dashboard_headlines
from copyaudit.reports.people import run_people_estimates, summary_lines
from copyaudit.studies.registry import headlines as all_headlines
from copyaudit.verification.quality import judge_quality, quality_brief
from db.browse import dashboard_runs
from db.queries import suites_summary
from db.queue_designs import ESTIMATE_DESIGNS
from db.queues import design_queues
from screens.app_link import copyaudit_app
from screens.destinations import Comparison, MemorisationMap, ReviewQueue, Takedown
from screens.plain import DASH, middle_cut, number, one_line, percent, plain
from screens.review.queue_open import continue_labelling
from screens.runs.run_control import ActiveRun
from screens.state.export_choices import run_choices
from screens.widgets.footer import KeysFooter
from screens.widgets.tables import CELL_CHARS, OpenTable

if TYPE_CHECKING:
    from db.connection import Store


def shown_headlines() -> tuple[Headline, ...]:
    """The headlines the runs table shows: the shared and the studies' own, each where it
    declares its place (read when the screen is built, so a study added is shown)."""
    return dashboard_headlines(all_headlines())


def run_columns() -> tuple[tuple[str, str], ...]:
    """The runs table's (key, title) columns."""
    return (
        ("run", "Run"),
        ("suite", "Suite (kind)"),
        ("model", "Model"),
        ("status", "Status"),
        ("progress", "Progress"),
        *((h.key, h.short) for h in shown_headlines()),
        ("auc", "AUC"),
    )


RUN_NAME_WIDTH = 32  # longer names are cut in the middle (the table keys keep them whole)
SUITE_COLUMNS = (("suite", "Suite"), ("kind", "Kind"), ("cases", "Cases"), ("works", "Works"))
EMPTY_DATABASE_HINT = (
    "This database holds no cases yet. Import some (copyaudit import KIND FILE; docs/using.md "
    "lists the formats) or build the demo (copyaudit demo), then press r."
)
NO_RUNS_HINT = (
    "No runs yet: s (or Enter on a suite) starts one; outputs made elsewhere come in with "
    "copyaudit import-generations."
)


def _headline_cell(headline: Headline, value: float | None) -> Text:
    """A rate as a percentage, a mean fraction times 100, a rating as it is."""
    if headline.shown_as == "percent":
        return percent(value)
    scale = 100 if headline.shown_as == "x100" else 1
    return number(None if value is None else scale * value, 1 if scale == 100 else 2)


class DashboardLoaded(Message):
    def __init__(self, runs: list[dict[str, Any]], suites: list[dict[str, Any]]) -> None:
        super().__init__()
        self.runs = runs
        self.suites = suites


def load_dashboard(store: Store) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Runs with figures (and the DE-COP AUC of DE-COP runs) and suites."""

    runs = dashboard_runs(store, all_headlines())
    for row in runs:
        # people-level estimates only where a random-sample queue makes them possible
        row["people"] = (
            summary_lines(row["name"], run_people_estimates(store, row["name"], row["kind"]))
            if design_queues(store, row["name"], ESTIMATE_DESIGNS)
            else None
        )
        # how far to trust each headline's judge, where its rate is read
        # no intervals on the dashboard: skip the bootstrap on every reload
        quality = judge_quality(store, row["name"], resamples=0)
        row["quality"] = [quality_brief(q) for q in quality]
        row["auc"] = None
        if row["kind"] == "decop" and row["generations"]:
            from copyaudit.studies.decop.report import decop_report  # deferred: loads scipy

            row["auc"] = decop_report(store, row["name"], n_bootstrap=200, blind=False)["auc"]
    return runs, suites_summary(store)


def _suite_cell(suite: str, kind: str) -> Text:
    """The suite, with its task kind when the name does not say it."""
    return plain(suite if suite == kind else f"{suite} ({kind})")


def _progress_cell(row: dict[str, Any], active: ActiveRun | None) -> Text:
    if active is not None and not active.finished:
        return plain(active.describe(), "bold yellow")
    total, done = row["total"], row["generations"]
    if not total or done == total:
        return Text(str(done))
    return Text(f"{done}/{total} {100 * done / total:.0f}%")


def _status_cell(status: str | None, active: ActiveRun | None) -> Text:
    if active is not None and not active.finished:
        return Text(active.state, style="bold yellow")
    style = {
        "failed": "red",
        "cancelled": "yellow",
        "interrupted": "magenta",
        "running": "yellow",
        "judging": "yellow",
        "done": "green",
    }
    # 'done with N failed' (running the run again retries them) is a warning
    shown = "cancelled" if (status or "").startswith("done with") else status or ""
    return plain(status or DASH, style.get(shown, ""))


class DashboardScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "new_run", "New run", id="dashboard.new_run"),
        Binding("x", "cancel_run", "Cancel run", id="dashboard.cancel_run"),
        Binding("r", "reload", "Reload", id="dashboard.reload"),
        Binding("a", "app.agreement", "Agreement", id="dashboard.agreement"),
        Binding("v", "review", "Review", id="dashboard.review"),
        Binding("c", "compare", "Compare models", id="dashboard.compare"),
        Binding("t", "takedown", "Takedown", id="dashboard.takedown"),
        # labelling and exporting from the app: the footer is full at 120 columns, so
        # these are in the help (?), the docs' key table and ctrl+p
        Binding(
            "l",
            "continue_labelling",
            "Continue labelling",
            show=False,
            id="dashboard.continue",
        ),
        Binding("w", "new_queue", "New queue", show=False, id="dashboard.new_queue"),
        Binding("e", "export", "Export", show=False, id="dashboard.export"),
        Binding("m", "memorisation_map", "Memorisation map", show=False, id="dashboard.pz_map"),
    ]

    DEFAULT_CSS = "#run-people { height: auto; max-height: 6; padding: 0 1; }"

    def __init__(self) -> None:
        super().__init__()
        self._runs: list[dict[str, Any]] = []
        self._suites: list[dict[str, Any]] = []

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="title", classes="title-bar")
        yield Static(id="hint")
        yield Static(Text("Runs", style="bold"), classes="section")
        runs = OpenTable(id="runs", flexible={"model": 12})
        for key, label in run_columns():
            runs.add_column(label, key=key)
        yield runs
        people = Static(id="run-people")
        people.display = False
        yield people
        yield Static(Text("Suites (Enter: new run on the suite)", style="bold"), classes="section")
        suites = OpenTable(id="suites")
        for key, label in SUITE_COLUMNS:
            suites.add_column(label, key=key)
        yield suites
        yield KeysFooter()

    def _title(self) -> Text:
        app = copyaudit_app(self)
        return Text.assemble(("copyaudit", "bold"), " · database ", plain(app.db_path.name))

    def on_mount(self) -> None:
        app = copyaudit_app(self)
        app.run_signal.subscribe(self, self._run_changed)
        self.action_reload()

    def on_screen_resume(self) -> None:
        self.action_reload()

    def action_reload(self) -> None:
        app = copyaudit_app(self)

        def work() -> None:
            with app.data.background() as store:
                runs, suites = load_dashboard(store)
            self.post_message(DashboardLoaded(runs, suites))

        app.start_worker(work, group="dashboard", description="loading the dashboard")

    def on_dashboard_loaded(self, message: DashboardLoaded) -> None:
        self._runs, self._suites = message.runs, message.suites
        hint = self.query_one("#hint", Static)
        text = "" if self._runs else NO_RUNS_HINT if self._suites else EMPTY_DATABASE_HINT
        hint.update(Text(text, style="italic"))
        hint.display = bool(text)
        self._fill_runs()
        table = self.query_one("#suites", DataTable)
        table.clear()
        for row in self._suites:
            table.add_row(
                plain(row["name"]),
                plain(row["kind"]),
                number(row["cases"]),
                number(row["works"]),
                key=row["name"],
            )

    def _fill_runs(self) -> None:
        app = copyaudit_app(self)
        table = self.query_one("#runs", DataTable)
        cursor = table.cursor_row
        table.clear()
        for row in self._runs:
            active = app.active_runs.get(row["name"])
            figures = row["figures"]
            table.add_row(
                middle_cut(row["name"], RUN_NAME_WIDTH),
                _suite_cell(row["suite"], row["kind"]),
                one_line(row["model"] or DASH, CELL_CHARS),
                _status_cell(row["status"], active),
                _progress_cell(row, active),
                *(_headline_cell(h, figures.get(h.key)) for h in shown_headlines()),
                number(row.get("auc"), 3, whole=False),
                key=row["name"],
            )
        self._add_starting_runs(table)
        if self._runs:
            table.move_cursor(row=min(cursor, len(self._runs) - 1))
        self._show_people(table.cursor_row)

    def _add_starting_runs(self, table: DataTable[Any]) -> None:
        """Runs started in this app that the database does not hold yet (loading their
        model, say: the demo's map): a row with their live state, after the stored ones."""
        known = {row["name"] for row in self._runs}
        blank = [Text("") for _ in range(len(run_columns()) - 5)]
        for run in copyaudit_app(self).active_runs.values():
            if run.name not in known and not run.finished:
                name = middle_cut(run.name, RUN_NAME_WIDTH)
                status, progress = _status_cell(None, run), _progress_cell({}, run)
                table.add_row(
                    name, plain(DASH), plain(DASH), status, progress, *blank, key=run.name
                )

    def _show_people(self, index: int) -> None:
        """The highlighted run's judges' measured quality and its people-level estimates
        (when it has a random-sample queue); hidden when it has neither."""
        run = self._runs[index] if 0 <= index < len(self._runs) else {}
        lines = [*(run.get("quality") or ()), *(run.get("people") or ())]
        widget = self.query_one("#run-people", Static)
        widget.display = bool(lines)
        widget.update(plain("\n".join(lines or ()), "dim"))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "runs":
            self._show_people(event.cursor_row)

    def _run_changed(self, run: ActiveRun) -> None:
        """Live progress of runs started in this app; a new or finished run reloads."""
        known = {row["name"] for row in self._runs}
        if run.name not in known or run.finished or run.progress is None:
            self.action_reload()
            return
        table = self.query_one("#runs", DataTable)
        row = next(r for r in self._runs if r["name"] == run.name)
        table.update_cell(run.name, "progress", _progress_cell(row, run))
        table.update_cell(run.name, "status", _status_cell(row["status"], run))

    def _selected(self, table_id: str) -> str | None:
        table = self.query_one(f"#{table_id}", DataTable)
        if table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        return None if key is None else str(key.value)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter: a run opens its generations, a suite opens the launcher on it."""
        event.stop()
        app = copyaudit_app(self)
        key = event.row_key.value
        if key is None:
            return
        if event.data_table.id == "suites":
            app.action_new_run(str(key))
        else:
            app.open_run(str(key))

    def action_new_run(self) -> None:
        app = copyaudit_app(self)
        on_suites = isinstance(self.focused, DataTable) and self.focused.id == "suites"
        app.action_new_run(self._selected("suites") if on_suites else None)

    def action_continue_labelling(self) -> None:
        """l: your most recent unfinished queue, at your first item without a label."""
        continue_labelling(copyaudit_app(self))

    def action_new_queue(self) -> None:
        """w: a new work queue, on the highlighted run."""
        app = copyaudit_app(self)
        app.action_new_queue(self._selected("runs"))

    def action_export(self) -> None:
        """e: labels of every run, or the highlighted run's labels, generations, report."""
        app = copyaudit_app(self)
        name = self._selected("runs")
        app.export(run_choices(r for r in self._runs if r["name"] == name))

    def action_review(self) -> None:
        app = copyaudit_app(self)
        app.open(ReviewQueue())

    def action_compare(self) -> None:
        app = copyaudit_app(self)
        app.open(Comparison())

    def action_takedown(self) -> None:
        """t: the takedown table of the selected run's suite and model."""
        app = copyaudit_app(self)
        name = self._selected("runs")
        row = next((r for r in self._runs if r["name"] == name), None)
        if row is None:
            app.notify("select a run: its suite and model are compared", markup=False)
            return
        app.open(Takedown(row["suite"], row["model"] or ""))

    def action_memorisation_map(self) -> None:
        """m: the memorisation map of the selected run (a p_z run)."""
        app = copyaudit_app(self)
        name = self._selected("runs")
        if name is None:
            app.notify("select a p_z run: its map is shown", markup=False)
            return
        app.open(MemorisationMap(name))

    def action_cancel_run(self) -> None:
        """x: the run that is running (whichever row is selected), or ask which."""
        app = copyaudit_app(self)
        app.ask_cancel_run()

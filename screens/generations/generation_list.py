"""Generation list of one run: paged from SQL (a page at a time, the next one fetched as
the cursor nears the end), sortable by any score, filtered by flag, labels, judge/human
disagreement, work, template, and a substring search (SQL LIKE: case-insensitive for
ASCII letters only; served by the FTS5 trigram index from 3 characters, db.search). `u`
keeps the generations you (the annotator) have not fully labelled. The list is live:
every REFRESH_S seconds (and on return from the view, and on R) it compares a cheap
fingerprint (db.browse.list_stamp) and shows new rows of a running run or an import, and
new labels in the Labels column and the u/d filters."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Checkbox, DataTable, Input, Select, Static

from copyaudit.reports.unreadable import run_warnings
from db.browse import (
    ANY_FLAG,
    GenerationFilter,
    ListRow,
    MetricKey,
    label_counts,
    list_stamp,
    run_metrics,
    run_templates,
    run_works,
)
from db.search import MIN_INDEXED_CHARS, uses_index
from db.search_index import has_backlog
from screens.app_link import copyaudit_app
from screens.destinations import Generation
from screens.generations.paged_table import PagedTableScreen
from screens.plain import DASH, metric_cell, one_line, plain
from screens.search_type_ahead import SearchTypeAhead
from screens.state.paging import GenerationPager
from screens.widgets.footer import KeysFooter
from screens.widgets.tables import CELL_CHARS, OpenTable

if TYPE_CHECKING:
    from textual.timer import Timer

ALL = "all"


def _metric_value(key: MetricKey) -> str:
    return f"{key.judge}/{key.metric}"


def _metric_from(value: object) -> MetricKey | None:
    if not isinstance(value, str) or value in (ALL, "order"):
        return None
    if value == "any":
        return ANY_FLAG
    judge, _, metric = value.partition("/")
    return MetricKey(judge, metric)


# the narrowest widths of the columns that share the screen's room (widgets.tables)
FLEXIBLE = {"case": 12, "work": 16, "output": 24}


REFRESH_S = 2.0  # how often the list looks for new rows and labels


def _labels_cell(count: int) -> Text:
    return Text(str(count) if count else DASH, justify="right")


class StampLoaded(Message):
    def __init__(self, stamp: tuple[int, int, int]) -> None:
        super().__init__()
        self.stamp = stamp


class LabelCountsLoaded(Message):
    def __init__(self, version: int, counts: dict[int, int]) -> None:
        super().__init__()
        self.version, self.counts = version, counts


class MetaLoaded(Message):
    def __init__(
        self,
        metrics: list[MetricKey],
        works: list,
        templates: list[int],
        warnings: list[str] | None = None,
    ) -> None:
        super().__init__()
        self.metrics, self.works, self.templates = metrics, works, templates
        self.warnings = warnings or []


class GenerationListScreen(PagedTableScreen):
    pager: GenerationPager

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="list.back"),
        Binding("slash", "search", "Search", id="list.search"),
        Binding("s", "pick('sort')", "Sort", id="list.sort"),
        Binding("r", "reverse", "Reverse", id="list.reverse"),
        Binding("f", "pick('flagged')", "Flag", id="list.flagged"),
        Binding("w", "pick('work')", "Work", id="list.work"),
        Binding("t", "pick('template')", "Tmpl", id="list.template"),
        Binding("u", "toggle('unlabeled')", "Unlabelled (me)", id="list.unlabeled"),
        Binding("d", "toggle('disagreement')", "Disagree", id="list.disagreement"),
        Binding("c", "clear", "Clear", id="list.clear"),
        Binding("R", "refresh_rows", "Reload", id="list.reload"),
    ]

    TABLE_ID = "generations"

    def __init__(self, run: dict[str, Any]) -> None:
        super().__init__()
        self.run = run
        self.pager = GenerationPager(GenerationFilter(run_id=int(run["id"])))
        self.metrics: list[MetricKey] = []
        self._search_timer: Timer | None = None
        self._stamp: tuple[int, int, int] | None = None
        self._type_ahead = SearchTypeAhead()

    # --- layout ------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        run = self.run
        title = Text.assemble(("Run ", "bold"), plain(run["name"], "bold"), " · ")
        title.append_text(plain(f"{run['kind']} · suite {run['suite']} · model {run['model']}"))
        yield Static(title, classes="title-bar")
        yield Static(id="warnings")
        with Horizontal(classes="filter-row"):
            yield Input(
                id="search",
                placeholder="/ search outputs, prompts, case text (substring, SQL LIKE)",
                compact=True,
            )
            yield Select(
                [(Text("sort: generation order"), "order")],
                id="sort",
                allow_blank=False,
                compact=True,
            )
        with Horizontal(classes="filter-row"):
            yield Select(
                [(Text("all generations"), ALL)], id="flagged", allow_blank=False, compact=True
            )
            yield Select([(Text("all works"), ALL)], id="work", allow_blank=False, compact=True)
            yield Select(
                [(Text("all templates"), ALL)], id="template", allow_blank=False, compact=True
            )
            yield Checkbox("unlabeled", id="unlabeled", compact=True)
            yield Checkbox("disagreement", id="disagreement", compact=True)
        yield Static(Text("loading…", style="dim"), id="status")
        yield OpenTable(id="generations", flexible=FLEXIBLE)
        yield KeysFooter()

    def on_mount(self) -> None:
        app = copyaudit_app(self)
        run_id = int(self.run["id"])

        def work() -> None:
            with app.data.background() as store:
                meta = MetaLoaded(
                    run_metrics(store, run_id),
                    run_works(store, run_id),
                    run_templates(store, run_id),
                    run_warnings(store, run_id),
                )
            self.post_message(meta)

        app.start_worker(work, group=f"list-meta-{id(self)}", description="loading the run")
        self.query_one("#generations", DataTable).focus()
        self.set_interval(REFRESH_S, self._poll)

    def on_meta_loaded(self, message: MetaLoaded) -> None:
        self.metrics = message.metrics
        warnings = self.query_one("#warnings", Static)
        warnings.update(
            Text("\n").join(plain(f"warning: {w}", "bold yellow") for w in message.warnings)
        )
        warnings.display = bool(message.warnings)
        ambiguous = {
            m.metric for m in self.metrics if sum(k.metric == m.metric for k in self.metrics) > 1
        }
        labels = {m: m.label(m.metric in ambiguous) for m in self.metrics}
        self.query_one("#sort", Select).set_options(
            [(Text("sort: generation order"), "order")]
            + [(plain(f"sort: {labels[m]}"), _metric_value(m)) for m in self.metrics]
        )
        self.query_one("#flagged", Select).set_options(
            [(Text("all generations"), ALL), (Text("flagged by any judge"), "any")]
            + [(plain(f"flagged: {labels[m]}"), _metric_value(m)) for m in self.metrics]
        )
        self.query_one("#work", Select).set_options(
            [(Text("all works"), ALL)] + [(plain(title), str(wid)) for wid, title in message.works]
        )
        self.query_one("#template", Select).set_options(
            [(Text("all templates"), ALL)]
            + [(Text(f"template {t}"), str(t)) for t in message.templates]
        )
        table = self.query_one("#generations", DataTable)
        # Fixed widths, or shared out by the table (case, work, output): auto widths
        # re-measure every added row, and rows painted before a re-measure keep the old.
        table.add_column("Case", key="case")
        table.add_column("T", key="template", width=2)
        table.add_column("Work", key="work")
        for metric in self.metrics:
            label = plain(labels[metric])
            table.add_column(label, key=_metric_value(metric), width=max(len(label), 7))
        table.add_column("⚑", key="flag", width=1)
        table.add_column("Labels", key="labels", width=6)
        table.add_column("Output", key="output")
        self._ready = True
        self._reload(self.pager.filter.with_changes(annotator=self._annotator()))

    # --- rows --------------------------------------------------------------------------

    def _add_rows(self, rows: list[ListRow]) -> None:
        table = self.query_one("#generations", DataTable)
        for row in rows:
            cells: list[Any] = [
                one_line(row.case_id, CELL_CHARS),
                Text(str(row.template)),
                one_line(row.work, CELL_CHARS),
            ]
            for metric in self.metrics:
                value, flagged = row.scores.get(metric, (None, None))
                cell = metric_cell(metric.metric, value)
                if flagged:
                    cell.stylize("bold red")
                cells.append(cell)
            flagged_any = any(flag for _, flag in row.scores.values())
            cells.append(Text("⚑", style="bold red") if flagged_any else Text(""))
            cells.append(_labels_cell(row.labels))
            cells.append(
                Text("error: ", style="red") + one_line(row.error, CELL_CHARS)
                if row.error
                else one_line(row.preview, CELL_CHARS)
            )
            table.add_row(*cells, key=str(row.generation_id))

    def _show_status(self) -> None:
        f = self.pager.filter
        loaded = f"{len(self.pager.rows):,} loaded"
        counting = " (counting…)" if self.pager.counting_on else ""
        parts = [f"{self.pager.shown_total()} generations match{counting}", loaded]
        if f.sort is not None:
            parts.append(f"sorted by {f.sort.metric} {'↓' if f.descending else '↑'}")
        elif f.descending:
            parts.append("newest first")
        if self.pager.total == 0:
            parts = ["no generation matches these filters (c clears them)"]
            if f == GenerationFilter(run_id=f.run_id, annotator=f.annotator):
                running = self.run.get("status") == "running"
                parts = [
                    "no generations yet"
                    + (" (rows appear as the run makes them)" if running else "")
                ]
        elif f.unlabeled and f.annotator:
            parts.append(f"not fully labelled by {f.annotator}")
        if f.search and not uses_index(f.search):
            parts.append(f"search under {MIN_INDEXED_CHARS} characters: a scan, not the index")
        elif f.search and has_backlog(copyaudit_app(self).data.ui):  # one seek a table
            parts.append("rows not yet in the search index are scanned")
        self.query_one("#status", Static).update(plain(" · ".join(parts), "dim"))

    # --- filters -----------------------------------------------------------------------

    def _filter_from_widgets(self) -> GenerationFilter:
        work = self.query_one("#work", Select).value
        template = self.query_one("#template", Select).value
        sort = _metric_from(self.query_one("#sort", Select).value)
        current = self.pager.filter
        descending = current.descending if sort == current.sort else sort is not None
        return current.with_changes(
            flagged=_metric_from(self.query_one("#flagged", Select).value),
            work_id=int(work) if isinstance(work, str) and work != ALL else None,
            template=int(template) if isinstance(template, str) and template != ALL else None,
            unlabeled=self.query_one("#unlabeled", Checkbox).value,
            annotator=self._annotator(),
            disagreement=self.query_one("#disagreement", Checkbox).value,
            search=self.query_one("#search", Input).value.strip(),
            sort=sort,
            descending=descending,
        )

    def _annotator(self) -> str | None:
        app = copyaudit_app(self)
        return getattr(app, "annotator", None)

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        self._apply_filters()

    def on_input_changed(self, event: Input.Changed) -> None:
        if self._search_timer is not None:
            self._search_timer.stop()
        self._search_timer = self.set_timer(0.3, self._apply_filters)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._apply_filters()
        self.query_one("#generations", DataTable).focus()

    def action_search(self) -> None:
        self._type_ahead.open(self, self.query_one("#search", Input))

    def on_key(self, event: events.Key) -> None:
        if self._type_ahead.take(self, self.query_one("#search", Input), event):
            event.stop()
            event.prevent_default()

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        if event.widget.id == "search":
            self._type_ahead.left()

    def action_reverse(self) -> None:
        if self._ready:
            self._reload(
                self.pager.filter.with_changes(descending=not self.pager.filter.descending)
            )

    async def action_toggle(self, name: str) -> None:
        self.query_one(f"#{name}", Checkbox).toggle()

    def action_clear(self) -> None:
        self.query_one("#search", Input).value = ""
        for name in ("flagged", "work", "template"):
            self.query_one(f"#{name}", Select).value = ALL
        self.query_one("#sort", Select).value = "order"
        for name in ("unlabeled", "disagreement"):
            self.query_one(f"#{name}", Checkbox).value = False
        self._apply_filters()

    # --- opening -----------------------------------------------------------------------

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is None:
            return
        app = copyaudit_app(self)
        app.open(Generation(int(event.row_key.value), self.pager, self))

    def on_screen_resume(self) -> None:
        self._catch_up()
        self._poll()

    # --- live --------------------------------------------------------------------------

    def _poll(self) -> None:
        """Fetch the run's fingerprint (a worker); a change refreshes the list."""
        app = copyaudit_app(self)
        run_id = int(self.run["id"])

        def work() -> None:
            with app.data.background() as store:
                stamp = list_stamp(store, run_id)
            self.post_message(StampLoaded(stamp))

        app.start_worker(work, group=f"list-stamp-{id(self)}", description="checking the run")

    def on_stamp_loaded(self, message: StampLoaded) -> None:
        old, self._stamp = self._stamp, message.stamp
        if old is None or old == message.stamp or not self._ready:
            return
        if self.pager.filter != self._filter_from_widgets():
            return  # a filter change is loading: it shows the new state anyway
        new_rows, new_labels = old[:2] != message.stamp[:2], old[2] != message.stamp[2]
        filtered = self.pager.filter.unlabeled or self.pager.filter.disagreement
        if (new_labels and filtered) or (new_rows and not self.pager.rows):
            self.action_refresh_rows()
            return
        if new_rows:
            self.pager.exhausted = False
            self._load_more()
            self._count()
        if new_labels:
            self._reload_label_counts()

    def action_refresh_rows(self) -> None:
        """Reload the rows under the same filters, the cursor kept on its generation."""
        if not self._ready:
            return
        table = self.table
        if table.row_count:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
            self.focus_generation = None if key is None else int(key)
        self._reload(self.pager.filter)

    def _reload_label_counts(self) -> None:
        app = copyaudit_app(self)
        version, ids = self.pager.version, [row.generation_id for row in self.pager.rows]

        def work() -> None:
            with app.data.background() as store:
                counts = label_counts(store, ids)
            self.post_message(LabelCountsLoaded(version, counts))

        app.start_worker(work, group=f"labels-{id(self)}", description="reading labels")

    def on_label_counts_loaded(self, message: LabelCountsLoaded) -> None:
        if message.version != self.pager.version:
            return
        table = self.table
        for index, row in enumerate(self.pager.rows):
            count = message.counts.get(row.generation_id, 0)
            if count == row.labels:
                continue
            self.pager.rows[index] = replace(row, labels=count)
            if index < table.row_count:
                table.update_cell(str(row.generation_id), "labels", _labels_cell(count))

"""Reviewer queue: every generation a judge flagged for copying, that a person labelled
as copied, or that has a review decision, most severe first (db.review), with its status
(open / cleared / escalated / needs second look), reviewer and note. Filters by work,
model or run, and status. Paged from SQL after the last row loaded (keyset paging on the
severity key), the next page fetched as the cursor nears the end; Enter opens the case
view (screens.generations.case_view), whose n/p walk this queue in this order and filter."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import DataTable, Select, Static

from db.connection import Store
from db.events import REVIEW_STATUSES
from db.queries import run_models, work_titles
from db.review import QueueRow
from screens.app_link import copyaudit_app
from screens.destinations import Case
from screens.generations.paged_table import PagedTableScreen
from screens.plain import DASH, number, one_line, plain
from screens.state.review_cases import QueueFilter, ReviewPager, status_text
from screens.widgets.footer import KeysFooter
from screens.widgets.tables import CELL_CHARS, OpenTable

ALL = "all"
COLUMNS = (  # key, label, width (None: shares the room left, FLEXIBLE)
    ("case", "Case", None),
    ("work", "Work", None),
    ("judges", "Flagged by", None),
    ("ratio", "×thr", 4),
    ("yes", "Yes", 3),
    ("status", "Status", 11),
    ("reviewer", "Reviewer", 9),
    ("note", "Note", None),
)
# narrowest widths; wider screens give work titles, judges and notes more
FLEXIBLE = {"case": 30, "work": 14, "note": 10, "judges": 14}


# a decision made on an earlier version of the content (db.content)
EARLIER_MARK = Text(" (earlier version)", style="italic yellow")


class QueueMetaLoaded(Message):
    def __init__(self, works: list[tuple[str, str]], runs: list[tuple[str, str | None]]) -> None:
        super().__init__()
        self.works, self.runs = works, runs


def queue_meta(store: Store) -> tuple[list[tuple[str, str]], list[tuple[str, str | None]]]:
    """(work key, title) of every work and (name, model) of every run, for the filters."""
    return work_titles(store), run_models(store)


class ReviewQueueScreen(PagedTableScreen):
    pager: ReviewPager

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="review.back"),
        Binding("w", "pick('review-work')", "Work", id="review.work"),
        Binding("m", "pick('review-model')", "Model/run", id="review.model"),
        Binding("s", "pick('review-status')", "Status", id="review.status"),
        Binding("c", "clear", "Clear", id="review.clear"),
        Binding("r", "reload", "Reload", id="review.reload"),
    ]

    DEFAULT_CSS = """
    ReviewQueueScreen #review-queue { height: 1fr; }
    ReviewQueueScreen #review-status-line { height: 1; padding: 0 1; }
    """

    TABLE_ID = "review-queue"

    def __init__(self) -> None:
        super().__init__()
        self.pager = ReviewPager()
        self._work_titles: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        title = Text.assemble(("Reviewer queue", "bold"), " · most severe first: ")
        title.append("flagging judges, ×threshold, human yes", style="dim")
        yield Static(title, classes="title-bar")
        with Horizontal(classes="filter-row"):
            yield Select(
                [(Text("all works"), ALL)], id="review-work", allow_blank=False, compact=True
            )
            yield Select(
                [(Text("all models and runs"), ALL)],
                id="review-model",
                allow_blank=False,
                compact=True,
            )
            yield Select(
                [(Text("every status"), ALL)] + [(status_text(s), s) for s in REVIEW_STATUSES],
                id="review-status",
                allow_blank=False,
                compact=True,
            )
        yield Static(Text("loading…", style="dim"), id="review-status-line")
        table = OpenTable(id="review-queue", flexible=FLEXIBLE)
        for key, label, width in COLUMNS:
            table.add_column(label, key=key, width=width)
        yield table
        yield KeysFooter()

    def on_mount(self) -> None:
        app = copyaudit_app(self)

        def work() -> None:
            with app.data.background() as store:
                works, runs = queue_meta(store)
            self.post_message(QueueMetaLoaded(works, runs))

        app.start_worker(work, group=f"review-meta-{id(self)}", description="loading the filters")
        self.query_one("#review-queue", DataTable).focus()
        self._reload(self.pager.filter)

    def on_queue_meta_loaded(self, message: QueueMetaLoaded) -> None:
        self._work_titles = dict(message.works)
        self.query_one("#review-work", Select).set_options(
            [(Text("all works"), ALL)] + [(plain(title), key) for key, title in message.works]
        )
        models = sorted({model for _, model in message.runs if model})
        self.query_one("#review-model", Select).set_options(
            [(Text("all models and runs"), ALL)]
            + [(plain(f"model {model}"), ("model", model)) for model in models]
            + [
                (plain(f"run {name}" + (f" ({model})" if model else "")), ("run", name))
                for name, model in message.runs
            ]
        )
        self._ready = True

    # --- loading -----------------------------------------------------------------------

    def _cells(self, row: QueueRow) -> list[Text]:
        judges = ", ".join(sorted(j for j in row.judges.split(",") if j))
        flagged = f"{row.flagged_judges}: {judges}" if row.flagged_judges else DASH
        ratio = number(row.max_ratio, 2, whole=False)
        if row.max_ratio is not None and row.max_ratio >= 1:
            ratio.stylize("bold red")
        return [
            one_line(row.generation_key, CELL_CHARS),
            one_line(row.work, CELL_CHARS),
            one_line(flagged, CELL_CHARS),
            ratio,
            number(row.human_yes) if row.human_yes else Text(DASH, justify="right"),
            status_text(row.status) + (EARLIER_MARK if row.review_stale else Text("")),
            one_line(row.reviewer or DASH, 9),
            one_line(row.note or "", CELL_CHARS),
        ]

    def _add_rows(self, rows: list[QueueRow]) -> None:
        table = self.query_one("#review-queue", DataTable)
        for row in rows:
            table.add_row(*self._cells(row), key=str(row.generation_id))

    def _show_status(self) -> None:
        pager = self.pager
        total = pager.shown_total()
        cases = "case" if pager.total == 1 else "cases"
        counting = " (counting…)" if pager.counting_on else ""
        loaded = f"{len(pager.rows):,} loaded"
        text = f"{total} {cases}{counting} · {loaded} · {pager.filter.describe()}"
        if pager.total == 0:
            text = f"no case in the queue with {pager.filter.describe()} (c clears the filters)"
        self.query_one("#review-status-line", Static).update(plain(text, "dim"))

    # --- filters -----------------------------------------------------------------------

    def _filter_from_widgets(self) -> QueueFilter:
        work = self.query_one("#review-work", Select).value
        model = self.query_one("#review-model", Select).value
        status = self.query_one("#review-status", Select).value
        kind, name = model if isinstance(model, tuple) else (None, None)
        work_key = work if isinstance(work, str) and work != ALL else None
        return QueueFilter(
            work=work_key,
            work_title=self._work_titles.get(work_key) if work_key else None,
            model=name if kind == "model" else None,
            run=name if kind == "run" else None,
            status=status if isinstance(status, str) and status != ALL else None,
        )

    def action_clear(self) -> None:
        for name in ("review-work", "review-model", "review-status"):
            self.query_one(f"#{name}", Select).value = ALL
        self._apply_filters()

    def action_reload(self) -> None:
        self._reload(self.pager.filter)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is None:
            return
        app = copyaudit_app(self)
        app.open(Case(int(event.row_key.value), self.pager, self))

    def on_screen_resume(self) -> None:
        """Back from the case view: show the decisions made there and the rows it
        loaded, and put the cursor on the case it showed last."""
        table = self.query_one("#review-queue", DataTable)
        for generation_id in sorted(self.pager.changed):
            index = self.pager.index_of(generation_id)
            if index is None or index >= table.row_count:
                continue
            cells = self._cells(self.pager.rows[index])
            for (key, _, _), cell in zip(COLUMNS, cells, strict=True):
                if key in ("status", "reviewer", "note"):
                    table.update_cell(str(generation_id), key, cell)
        self.pager.changed.clear()
        self._catch_up()

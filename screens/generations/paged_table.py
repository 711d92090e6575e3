"""A screen that shows a `KeysetPager` in a DataTable, with filter widgets above it.

The one loading mechanism of the generation list and the reviewer queue: the first page
and the count are fetched in workers when the filter changes, the next page as the
cursor nears the end, and replies for an older filter are dropped (the pager's version).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any, ClassVar

from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Select

from db.connection import Interrupted, Store
from screens.app_link import copyaudit_app
from screens.state.paging import QUICK_COUNT, KeysetPager

LOAD_AHEAD = 20  # fetch the next page when the cursor is this close to the end


class PageLoaded(Message):
    def __init__(self, version: int, rows: list[Any]) -> None:
        super().__init__()
        self.version, self.rows = version, rows


class CountLoaded(Message):
    """A count for pager version `version`: the total, or (not `exact`) a lower bound."""

    def __init__(self, version: int, total: int, exact: bool = True) -> None:
        super().__init__()
        self.version, self.total, self.exact = version, total, exact


class PagedTableScreen(Screen[None]):
    """Subclasses set `TABLE_ID`, `pager`, and provide the filter, rows and status."""

    TABLE_ID: ClassVar[str]
    pager: KeysetPager[Any, Any]

    def __init__(self) -> None:
        super().__init__()
        self._loading_more = False
        self._ready = False  # filter widgets hold their options: changes count
        self._picking: str | None = None  # the filter opened from the keyboard
        self.focus_generation: int | None = None  # set by the view it opened, on return

    # --- what a subclass provides ------------------------------------------------------

    def _filter_from_widgets(self) -> Any:
        raise NotImplementedError

    def _add_rows(self, rows: list[Any]) -> None:
        raise NotImplementedError

    def _show_status(self) -> None:
        raise NotImplementedError

    # --- loading -----------------------------------------------------------------------

    @property
    def table(self) -> DataTable[Any]:
        return self.query_one(f"#{self.TABLE_ID}", DataTable)

    def _reload(self, new_filter: object) -> None:
        app = copyaudit_app(self)
        pager = self.pager
        version = pager.reset(new_filter)
        self._loading_more = False
        self.table.clear()
        self._show_status()

        def page() -> None:
            with app.data.background() as store, self._while_wanted(store, version):
                self.post_message(PageLoaded(version, pager.page(store)))

        app.start_worker(page, group=f"page-{id(self)}", description="loading rows")
        if pager.total is None:  # kept where only the order changed
            self._count()

    def _count(self) -> None:
        """Count the pager's rows in a worker: first no further than QUICK_COUNT (shown as
        "1,000+" at once), then, where there are more, all of them."""
        app = copyaudit_app(self)
        pager, version = self.pager, self.pager.version

        def count() -> None:
            with app.data.background() as store, self._while_wanted(store, version):
                found = pager.count_at_most(store, QUICK_COUNT)
                if found is None or found >= QUICK_COUNT:
                    if found is not None:
                        self.post_message(CountLoaded(version, found, exact=False))
                    found = pager.count(store)
                self.post_message(CountLoaded(version, found))

        app.start_worker(count, group=f"count-{id(self)}", description="counting rows")

    @contextmanager
    def _while_wanted(self, store: Store, version: int) -> Iterator[None]:
        """Reads for the pager's `version`, abandoned (SQLite interrupts them; nothing is
        posted) once the pager has moved on: a count or page of a filter the list has left
        would hold the one worker connection (Connections.background) from the new one's
        (a word in most rows of a million: a second)."""
        with suppress(Interrupted), store.interrupted_when(lambda: self.pager.version != version):
            yield

    def _load_more(self) -> None:
        pager = self.pager
        if self._loading_more or pager.exhausted or not pager.rows:
            return
        app = copyaudit_app(self)
        self._loading_more = True
        version, after = pager.version, pager.after

        def page() -> None:
            with app.data.background() as store, self._while_wanted(store, version):
                self.post_message(PageLoaded(version, pager.page(store, after)))

        app.start_worker(page, group=f"more-{id(self)}", description="loading more rows")

    def on_page_loaded(self, message: PageLoaded) -> None:
        if message.version != self.pager.version:
            return
        self._loading_more = False
        self._add_rows(self.pager.add_page(message.rows))
        self._show_status()
        self._move_to_focus()

    def on_count_loaded(self, message: CountLoaded) -> None:
        if message.version != self.pager.version:
            return
        if message.exact:
            self.pager.total = message.total
        else:
            self.pager.at_least = message.total
        self._show_status()

    # --- filters -----------------------------------------------------------------------

    def _apply_filters(self) -> None:
        if not self._ready:
            return
        new_filter = self._filter_from_widgets()
        if new_filter != self.pager.filter:
            self._reload(new_filter)

    def on_select_changed(self, event: Select.Changed) -> None:
        self._apply_filters()
        if event.select.id == self._picking:  # picked after its key: back to the rows
            self._picking = None
            self.call_after_refresh(self.table.focus)

    def action_pick(self, name: str) -> None:
        select = self.query_one(f"#{name}", Select)
        self._picking = name
        select.focus()
        select.expanded = True

    def action_back(self) -> None:
        """Esc: from a filter back to the rows; from the rows, back a screen."""
        if self.focused is not self.table:
            self.table.focus()
        else:
            self.app.pop_screen()

    # --- moving ------------------------------------------------------------------------

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.cursor_row >= event.data_table.row_count - LOAD_AHEAD:
            self._load_more()

    def _catch_up(self) -> None:
        """Back from the view: show the rows it loaded and put the cursor on the
        generation it showed last."""
        table = self.table
        if table.row_count < len(self.pager.rows):
            self._add_rows(self.pager.rows[table.row_count :])
            self._show_status()
        self._move_to_focus(forget=True)

    def _move_to_focus(self, *, forget: bool = False) -> None:
        """Put the cursor on `focus_generation` once its row is shown (`forget`: give
        up on it when it is not)."""
        if self.focus_generation is None:
            return
        index = self.pager.index_of(self.focus_generation)
        if index is not None and index < self.table.row_count:
            self.table.move_cursor(row=index, animate=False)
            self.focus_generation = None
        elif forget:
            self.focus_generation = None

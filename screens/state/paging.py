"""Lists as loaded so far: a filter, the rows in order, and whether more pages exist.

`KeysetPager` is the one mechanism; a subclass says how to fetch a page after a row's
key. A pager is shared by a list screen and the view it opens, so n/p in the view walk
the list's filter and order, and the list follows the view when you return.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from db.browse import GenerationFilter, ListRow, count_generations, generation_page
from db.connection import OutOfTime, Store

PAGE_SIZE = 100
# A count first stops at this many rows, so the status shows "1,000+" at once; the exact
# total follows from the same worker (a word in most rows of a big run takes a second).
QUICK_COUNT = 1_000
QUICK_COUNT_CPU_S = 0.05  # a quick count that would take longer is skipped

FilterT = TypeVar("FilterT")
RowT = TypeVar("RowT")


class KeysetPager(Generic[FilterT, RowT]):
    """Rows fetched page by page after the last row's key; rows carry `generation_id`."""

    def __init__(self, filter: FilterT, page_size: int = PAGE_SIZE) -> None:
        self.filter = filter
        self.page_size = page_size
        self.rows: list[RowT] = []
        self.exhausted = False
        self.total: int | None = None  # exact, once counted
        self.at_least = 0  # what a quick count found before the exact total
        self.version = 0  # bumped on every reset: replies for an older filter are dropped
        self._index: dict[int, int] = {}

    # --- what a subclass provides ------------------------------------------------------

    def page(self, store: Store, after: Any = None) -> list[RowT]:
        """The page after the row whose key is `after` (from the start: None)."""
        raise NotImplementedError

    def key_of(self, row: RowT) -> Any:
        raise NotImplementedError

    def count(self, store: Store) -> int:
        """How many rows the filter matches in all."""
        raise NotImplementedError

    def count_at_most(self, store: Store, cap: int) -> int | None:
        """How many rows the filter matches, counting no further than `cap`; None: not
        quickly known, only the exact count (`count`) is shown. A pager whose count can
        be slow (GenerationPager) counts to the cap first."""
        return None

    def count_key(self, filter: FilterT) -> Any:
        """What of `filter` its count depends on (a pager whose filter also holds an order
        leaves the order out)."""
        return filter

    # --- the mechanism -----------------------------------------------------------------

    def reset(self, filter: FilterT) -> int:
        """Start over under `filter`. A filter that differs from the last in order alone
        keeps the exact count (the same rows, re-sorted: a word in most rows of a big run
        is not counted again for a second); the same filter again (a refresh) counts anew."""
        same_rows = filter != self.filter and self.count_key(filter) == self.count_key(self.filter)
        kept = self.total if same_rows else None
        self.filter = filter
        self.rows, self._index = [], {}
        self.exhausted, self.total, self.at_least = False, kept, 0
        self.version += 1
        return self.version

    def shown_total(self) -> str:
        """The count as the status line shows it: exact, "1,000+" or "counting…"."""
        if self.total is not None:
            return f"{self.total:,}"
        return f"{self.at_least:,}+" if self.at_least else "counting…"

    @property
    def counting_on(self) -> bool:
        """A lower bound is shown and the exact count is still coming."""
        return self.total is None and self.at_least > 0

    @property
    def after(self) -> Any:
        return self.key_of(self.rows[-1]) if self.rows else None

    def add_page(self, rows: list[RowT]) -> list[RowT]:
        """Append a fetched page (rows already present are skipped); returns what is new."""
        new = [row for row in rows if _id(row) not in self._index]
        for row in new:
            self._index[_id(row)] = len(self.rows)
            self.rows.append(row)
        if len(rows) < self.page_size:
            self.exhausted = True
        return new

    def index_of(self, generation_id: int) -> int | None:
        return self._index.get(generation_id)

    def fetch_more(self, store: Store) -> list[RowT]:
        """Load the next page now (a view that reached the end of what is loaded)."""
        if self.exhausted:
            return []
        return self.add_page(self.page(store, self.after))

    def neighbour(self, generation_id: int, step: int, store: Store) -> int | None:
        """The generation `step` rows after (or before) this one in the list order."""
        index = self.index_of(generation_id)
        if index is None:
            return None
        target = index + step
        while target >= len(self.rows) and not self.exhausted:
            if not self.fetch_more(store):
                break
        if 0 <= target < len(self.rows):
            return _id(self.rows[target])
        return None


def _id(row: Any) -> int:
    return int(row.generation_id)


class GenerationPager(KeysetPager[GenerationFilter, ListRow]):
    """The generation list (db.browse filters, sort and keyset paging)."""

    def page(self, store: Store, after: Any = None) -> list[ListRow]:
        return generation_page(store, self.filter, after, self.page_size)

    def key_of(self, row: ListRow) -> Any:
        return row.key

    def count(self, store: Store) -> int:
        return count_generations(store, self.filter)

    def count_key(self, filter: GenerationFilter) -> Any:
        return filter.with_changes(sort=None, descending=False)

    def count_at_most(self, store: Store, cap: int) -> int | None:
        """None where even counting to `cap` takes long (a rare phrase of common words,
        where both the index and a scan read most rows): the exact count follows."""
        try:
            with store.time_limited(QUICK_COUNT_CPU_S):
                return count_generations(store, self.filter, at_most=cap)
        except OutOfTime:
            return None

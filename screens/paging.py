"""The generation list as loaded so far: the filter, the rows in order, and whether
more pages exist. Shared by the list screen and the generation view, so n/p in the view
walk the list's filter and sort, and the list follows the view when you return."""

from __future__ import annotations

from db.browse import GenerationFilter, ListRow, PageKey, generation_page
from db.connection import Store

PAGE_SIZE = 100


class GenerationPager:
    def __init__(self, filter: GenerationFilter) -> None:
        self.filter = filter
        self.rows: list[ListRow] = []
        self.exhausted = False
        self.total: int | None = None
        self.version = 0  # bumped on every reset: replies for an older filter are dropped
        self._index: dict[int, int] = {}

    def reset(self, filter: GenerationFilter) -> int:
        self.filter = filter
        self.rows, self._index = [], {}
        self.exhausted, self.total = False, None
        self.version += 1
        return self.version

    @property
    def after(self) -> PageKey | None:
        return self.rows[-1].key if self.rows else None

    def add_page(self, rows: list[ListRow], page_size: int = PAGE_SIZE) -> list[ListRow]:
        """Append a fetched page (rows already present are skipped); returns what is new."""
        new = [row for row in rows if row.generation_id not in self._index]
        for row in new:
            self._index[row.generation_id] = len(self.rows)
            self.rows.append(row)
        if len(rows) < page_size:
            self.exhausted = True
        return new

    def index_of(self, generation_id: int) -> int | None:
        return self._index.get(generation_id)

    def fetch_more(self, store: Store) -> list[ListRow]:
        """Load the next page now (the generation view at the end of what is loaded)."""
        if self.exhausted:
            return []
        return self.add_page(generation_page(store, self.filter, self.after, PAGE_SIZE))

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
            return self.rows[target].generation_id
        return None

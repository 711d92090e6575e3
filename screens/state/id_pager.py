"""A pager over a fixed list of generation ids (the agreement screen's disputed
generations, a work queue), so the generation view's n/p walk that list."""

from __future__ import annotations

from collections.abc import Sequence

from db.browse import GenerationFilter
from db.connection import Store
from screens.state.paging import GenerationPager


class IdPager(GenerationPager):
    def __init__(self, generation_ids: Sequence[int]) -> None:
        super().__init__(GenerationFilter(run_id=0))
        self.ids = list(dict.fromkeys(generation_ids))  # first occurrence keeps its place
        self._positions = {gid: i for i, gid in enumerate(self.ids)}
        self.exhausted = True
        self.total = len(self.ids)

    def index_of(self, generation_id: int) -> int | None:
        return self._positions.get(generation_id)

    def fetch_more(self, store: Store) -> list:
        return []

    def neighbour(self, generation_id: int, step: int, store: Store) -> int | None:
        index = self.index_of(generation_id)
        if index is None or not 0 <= index + step < len(self.ids):
            return None
        return self.ids[index + step]

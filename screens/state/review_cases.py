"""The reviewer queue's cases as the queue and the case view share them: the filter, the
keyset pager (severity order, db.review) whose n/p the case view walks, and how a
review status is named and styled."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, TypedDict

from rich.text import Text

from db.connection import Store
from db.review import QueueKey, QueueRow, review_queue, review_queue_count
from screens.plain import plain
from screens.state.paging import KeysetPager

PAGE_SIZE = 100
STATUS_STYLES = {
    "open": "bold",
    "cleared": "green",
    "escalated": "bold red",
    "needs_second_look": "bold yellow",
}
STATUS_NAMES = {"needs_second_look": "second look"}


def status_text(status: str) -> Text:
    return plain(STATUS_NAMES.get(status, status), STATUS_STYLES.get(status, ""))


class QueueArguments(TypedDict):
    """The filter as db.review.review_queue's keyword arguments."""

    work: str | None
    model: str | None
    run: str | None
    status: str | None


@dataclass(frozen=True)
class QueueFilter:
    work: str | None = None  # work key
    work_title: str | None = None  # shown in the status line
    model: str | None = None
    run: str | None = None
    status: str | None = None

    def arguments(self) -> QueueArguments:
        return {"work": self.work, "model": self.model, "run": self.run, "status": self.status}

    def describe(self) -> str:
        parts = [
            f"{name} {value}"
            for name, value in (
                ("work", self.work_title or self.work),
                ("model", self.model),
                ("run", self.run),
                ("status", self.status),
            )
            if value is not None
        ]
        return ", ".join(parts) if parts else "no filter"


class ReviewPager(KeysetPager[QueueFilter, QueueRow]):
    """The queue as loaded so far (rows in severity order) under one filter; shared with
    the case view, so n/p walk this order and the queue shows what the view changed."""

    def __init__(self, filter: QueueFilter | None = None) -> None:
        super().__init__(filter or QueueFilter(), page_size=PAGE_SIZE)
        self.changed: set[int] = set()  # generations whose review changed in the case view

    def reset(self, filter: QueueFilter) -> int:
        self.changed = set()
        return super().reset(filter)

    def page(self, store: Store, after: QueueKey | None = None) -> list[QueueRow]:
        return review_queue(store, **self.filter.arguments(), limit=self.page_size, after=after)

    def key_of(self, row: QueueRow) -> QueueKey:
        return row.page_key

    def count(self, store: Store) -> int:
        return review_queue_count(store, **self.filter.arguments())

    def record_review(self, generation_id: int, review: dict[str, Any]) -> None:
        """Show a new review decision in the loaded row (it keeps its place)."""
        index = self.index_of(generation_id)
        if index is None:
            return
        self.rows[index] = replace(
            self.rows[index],
            status=review["status"],
            reviewer=review["reviewer"],
            note=review["note"],
            reviewed_at=review["created_at"],
        )
        self.changed.add(generation_id)

"""Continue labelling in one key (dashboard l): the annotator's most recent unfinished
queue, at the first generation and item they have not labelled."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from db import Store
from db.events import append_label
from db.labels import label_progress
from db.queues import create_queue, queue_items, queues_by_recent_work, unfinished_queue
from screens.app import CopyauditApp
from screens.review.annotation import AnnotationScreen
from screens.runs.dashboard import DashboardScreen
from tests.label_fixtures import make_run
from tests.test_screens_data import settle

pytestmark = pytest.mark.anyio
SIZE = (120, 40)
CASES = ("lit-1", "lit-2", "lit-3")
QUEUES = ("done", "started", "fresh")  # created in this order


def _label_all(store: Store, name: str, annotator: str, count: int | None = None) -> None:
    """Label every asked item of the queue's first `count` generations (all: None)."""
    for generation in queue_items(store, name)[:count]:
        for target in ("literal", "refusal"):  # a literal case's two whole-output items
            append_label(
                store,
                generation_id=generation,
                annotator=annotator,
                target=target,
                item_index=0,
                label="yes",
            )


@pytest.fixture
def queues_db(cli: Callable[..., Any], tmp_path: Path, db_path: Path) -> Path:
    """Queues done (fully labelled by ann, her newest labels), started (one generation
    labelled by ann, earlier) and fresh (the newest queue, untouched), each of its own
    run (so that labels on one are not on another)."""
    for name in QUEUES:
        make_run(cli, tmp_path, "literal", CASES, run=name)
    with Store(db_path) as store:
        for name in QUEUES:
            create_queue(store, name, run=name, design="random", size=3, seed=1)
        _label_all(store, "started", "ann", count=1)
        _label_all(store, "done", "ann")
        done = label_progress(store, queue_items(store, "done"), "ann")
        assert all(d == t for d, t in done.values())
    return db_path


def test_the_queue_worked_in_last_comes_first_the_finished_one_is_passed(
    queues_db: Path,
) -> None:
    with Store(queues_db) as store:
        assert queues_by_recent_work(store, "ann") == ["done", "started", "fresh"]
        assert unfinished_queue(store, "ann") == "started"
        assert unfinished_queue(store, "bob") == "fresh"  # nobody's labels: the newest
        _label_all(store, "started", "ann")
        assert unfinished_queue(store, "ann") == "fresh"
        _label_all(store, "fresh", "ann")
        assert unfinished_queue(store, "ann") is None


async def test_one_key_resumes_at_the_first_generation_not_labelled(queues_db: Path) -> None:
    with Store(queues_db) as store:
        ids = queue_items(store, "started")
        # the second generation half labelled (its first item, refusal): it resumes there,
        # on the item left
        append_label(
            store, generation_id=ids[1], annotator="ann", target="refusal", item_index=0, label="no"
        )
    app = CopyauditApp(queues_db, annotator="ann")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("l")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AnnotationScreen)
        assert screen.queue == "started" and screen.generation_id == ids[1]
        left = [item for item in screen.label_items if item.asked and item.target != "refusal"]
        assert screen.query_one("#checklist").current_item == left[0]


async def test_nothing_left_to_label_says_how_to_make_a_queue(queues_db: Path) -> None:
    with Store(queues_db) as store:
        for name in ("started", "fresh"):
            _label_all(store, name, "ann")
    app = CopyauditApp(queues_db, annotator="ann")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("l")
        await settle(pilot)
        assert isinstance(app.screen, DashboardScreen)
        shown = [str(n.message) for n in app._notifications]
        assert any("no unfinished work queue for ann: w (or ctrl+p)" in m for m in shown)

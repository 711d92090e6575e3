"""A work queue created from the app (dashboard w, ctrl+p): the form's inline messages,
the queue stored as `copyaudit queue create` stores it, labelling in it at once, and
the form's snapshot."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input

from db import Store
from db.labels import current_labels
from db.queue_designs import DESIGNS
from db.queues import queue_info, queue_items
from screens.app import CopyauditApp
from screens.review.annotation import AnnotationScreen
from screens.review.queue_create import QueueFormScreen
from screens.state.queue_form import DEFAULT_SIZE, DESIGN_NOTES, SIZE_LABELS, read_form
from tests.label_fixtures import EVENTS_JUDGE, judge_rising_events, make_run
from tests.test_screens_data import settle

pytestmark = pytest.mark.anyio
SIZE = (120, 40)
CASES = ("nl-1", "nl-2", "nl-3", "nl-4")
TARGET = ("events", EVENTS_JUDGE.name)


@pytest.fixture
def judged_db(cli: Callable[..., Any], tmp_path: Path, db_path: Path) -> Path:
    """Run `r`: four nonliteral generations judged by the events judge (1-4 events)."""
    make_run(cli, tmp_path, "nonliteral", CASES)
    with Store(db_path) as store:
        judge_rising_events(store, CASES)
    return db_path


def test_every_design_has_its_words() -> None:
    assert set(SIZE_LABELS) == set(DESIGN_NOTES) == set(DEFAULT_SIZE) == set(DESIGNS)


def _form(**changes: Any) -> dict[str, Any]:
    values = {
        "name": "q",
        "run": "r",
        "design": "random",
        "target": None,
        "size": "2",
        "seed": "0",
        "bin_width": "",
    }
    return {**values, **changes}


@pytest.mark.parametrize(
    ("changes", "field", "says"),
    [
        ({"name": "  "}, "name", "a name is required"),
        ({"run": None}, "run", "choose a run"),
        ({"size": "two"}, "size", "a whole number from 1"),
        ({"size": "0"}, "size", "from 1 to 1,000,000 (got 0)"),
        ({"seed": "-1"}, "seed", "from 0 to"),
        ({"bin_width": "0.1"}, "bin_width", "a random draw has no bins"),
        ({"design": "stratified", "target": TARGET, "bin_width": "nan"}, "bin_width", "1e-06"),
        ({"design": "stratified"}, "target", "choose the judge metric"),
    ],
)
def test_each_wrong_field_is_named(changes: dict[str, Any], field: str, says: str) -> None:
    request, errors = read_form(_form(**changes), [TARGET])
    assert request is None and list(errors) == [field] and says in errors[field]


def test_a_run_without_judgments_offers_only_the_random_design() -> None:
    _, errors = read_form(_form(design="per-value", target=None), [])
    assert "judge it first, or use the random design" in errors["target"]
    request, errors = read_form(_form(), [])
    assert errors == {} and request is not None and request.target is None


async def _open_form(pilot: Any, *keys: str) -> QueueFormScreen:
    """The form, opened by `keys` (default: the dashboard's w)."""
    await settle(pilot)
    for key in keys or ("w",):
        await pilot.press(key)
        await settle(pilot)
    form = pilot.app.screen
    assert isinstance(form, QueueFormScreen)
    return form


async def test_a_queue_made_in_the_app_is_labelled_at_once(judged_db: Path) -> None:
    app = CopyauditApp(judged_db, annotator="ann")
    async with app.run_test(size=SIZE) as pilot:
        form = await _open_form(pilot)
        await pilot.press("enter")  # no name yet: said under the name, nothing stored
        await settle(pilot)
        error = form.query_one("#name-error")
        assert error.display and "a name is required" in str(error.render())
        form.query_one("#design").value = "stratified"
        await settle(pilot)
        assert form.query_one("#target").value == TARGET  # the run's events judge
        form.query_one("#size").value = "3"
        form.query_one("#seed").value = "7"
        form.query_one("#name").focus()
        await pilot.press(*"my-queue", "enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AnnotationScreen) and screen.queue == "my-queue"
        with Store(judged_db) as store:
            info = queue_info(store, "my-queue")
            ids = queue_items(store, "my-queue")
        assert (info["run"], info["design"], info["size"], info["seed"]) == (
            "r",
            "stratified",
            3,
            7,
        )
        assert (info["metric"], info["judge"]) == TARGET
        assert len(ids) == 3 and screen.generation_id == ids[0]
        item = screen.query_one("#checklist").current_item
        await pilot.press("y")
        await settle(pilot)
    with Store(judged_db) as store:
        labels = current_labels(store, annotator="ann")
    assert [(x.generation_id, x.target, x.item_index, x.label) for x in labels] == [
        (ids[0], item.target, item.index, "yes")
    ]


async def test_the_same_seed_draws_what_the_command_line_draws(
    judged_db: Path, cli: Callable[..., Any]
) -> None:
    result = cli("queue", "create", "cli-q", "--run", "r", "--design", "random", "--size", "2")
    assert result.code == 0, result.err
    app = CopyauditApp(judged_db, annotator="ann")
    async with app.run_test(size=SIZE) as pilot:
        form = await _open_form(pilot)
        form.query_one("#size").value = "2"
        form.query_one("#name").focus()
        await pilot.press(*"app-q", "enter")
        await settle(pilot)
        assert isinstance(app.screen, AnnotationScreen)
    with Store(judged_db) as store:
        assert queue_items(store, "app-q") == queue_items(store, "cli-q")


async def test_a_refused_queue_says_why_in_the_form(judged_db: Path) -> None:
    app = CopyauditApp(judged_db, annotator="ann")
    async with app.run_test(size=SIZE) as pilot:
        form = await _open_form(pilot, "ctrl+p", *"create a work queue", "enter")
        form.query_one("#name").value = "dup"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, AnnotationScreen)
        await pilot.press("escape")
        await settle(pilot)
        form = await _open_form(pilot)
        form.query_one("#name").value = "dup"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.screen is form
        error = form.query_one("#form-error")
        assert error.display and "a queue named 'dup' already exists" in str(error.render())
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, QueueFormScreen)
    with Store(judged_db) as store:
        assert len(queue_items(store, "dup")) == len(CASES)  # the first one, unchanged


def test_queue_form_snapshot(judged_db: Path, snap_compare) -> None:
    async def ready(pilot: Any) -> None:
        form = await _open_form(pilot)
        form.query_one("#design").value = "stratified"
        await pilot.press("enter")  # no name: its message shows
        for field in form.query(Input):
            field.cursor_blink = False  # the cursor shown steadily: the same picture each time
        await settle(pilot)

    assert snap_compare(
        CopyauditApp(judged_db, annotator="ann"), terminal_size=SIZE, run_before=ready
    )

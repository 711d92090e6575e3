"""Type-ahead into the generation list's search: keys typed right after `/`, faster than
the search box takes the focus, go into the box and never run list commands (issue 35:
`/curtsey` typed quickly re-sorted the list and opened the sort menu)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events
from textual.widgets import Input

from screens.app import CopyauditApp
from tests.test_screens_data import settle
from tests.test_screens_list import SIZE, _open_literal_run

pytestmark = pytest.mark.anyio

WORD = "curtsey"  # c clears, u/d toggle, r reverses, t and s open pickers: all list keys


def _type_at_once(app: CopyauditApp, text: str) -> None:
    """Post every key as the terminal driver does for one read of typed input: all at
    once, with no pause for the app to handle any of them."""
    for char in text:
        key = "slash" if char == "/" else char
        event = events.Key(key, char)
        event.set_sender(app)
        app.post_message(event)


async def test_keys_typed_right_after_slash_go_into_the_search_box(demo_db: Path) -> None:
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_literal_run(pilot)
        before = screen.pager.filter
        _type_at_once(app, "/" + WORD)
        await settle(pilot)
        search = screen.query_one("#search", Input)
        assert search.value == WORD
        assert app.focused is search
        assert isinstance(app.screen, type(screen))  # no picker (sort, work…) opened
        after = screen.pager.filter
        assert (after.sort, after.descending, after.unlabeled, after.disagreement) == (
            before.sort,
            before.descending,
            before.unlabeled,
            before.disagreement,
        )
        assert (after.work_id, after.template) == (before.work_id, before.template)
        # Enter applies the search and gives the keys back to the list
        await pilot.press("enter")
        await settle(pilot)
        assert screen.pager.filter.search == WORD and app.focused is screen.table
        await pilot.press("r")  # a list key again once the search is left
        await settle(pilot)
        assert screen.pager.filter.descending != after.descending

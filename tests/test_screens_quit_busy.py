"""The second q quits while the app is busy (issue 35: a second q ~3 s after the first
did not quit under load). The window between the two presses is measured from when each
key was read, not from when the busy app got round to it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual import events

import screens.app
from copyaudit.engine import runner
from screens.app import CopyauditApp
from screens.runs.run_dialogs import StoppingScreen
from tests.test_screens_data import wait_until
from tests.test_screens_launcher import (
    SIZE,
    _status,
    fake_execute_run,
    run_going_on_the_dashboard,
)

pytestmark = pytest.mark.anyio
DEMO_KINDS = ("literal",)  # the demo_db fixture's suites (conftest)
WINDOW_S = 0.5  # the confirmation window, shortened for the test
BUSY_S = 0.8  # the app does nothing else for this long between the two presses


def _press_q(app: CopyauditApp) -> events.Key:
    """A q as the terminal driver makes it: stamped when read, handled when the app can."""
    key = events.Key("q", "q")
    key.set_sender(app)
    app.post_message(key)
    return key


async def test_second_q_quits_while_the_app_is_busy(demo_db: Path, monkeypatch) -> None:
    monkeypatch.setattr(runner, "execute_run", fake_execute_run)
    monkeypatch.setattr(screens.app, "QUIT_CONFIRM_S", WINDOW_S)
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        run = await run_going_on_the_dashboard(pilot)
        first = _press_q(app)
        await wait_until(pilot, lambda: len(app.screen.query("Toast")) > 0)
        assert app.is_running and not run.cancel.is_set()  # the first q only warns
        app.call_later(lambda: time.sleep(BUSY_S))  # the app is stuck: the next key waits
        second = _press_q(app)
        assert second.time - first.time < WINDOW_S  # pressed within the window…
        await wait_until(pilot, lambda: run.cancel.is_set())
        handled = time.monotonic()
        assert handled - first.time > WINDOW_S  # …and handled after it
        await wait_until(
            pilot, lambda: not app.is_running or isinstance(app.screen, StoppingScreen)
        )
        await wait_until(pilot, lambda: not app.is_running)
    assert run.state == "cancelled"
    assert _status(demo_db, "literal-default-none") == "cancelled"

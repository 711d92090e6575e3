"""An app whose terminal hung up exits instead of spinning on it (screens.terminal)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from screens.app import CopyauditApp
from screens.terminal import hung_up

pytestmark = pytest.mark.anyio


def test_a_closed_terminal_reads_as_hung_up_and_an_open_one_does_not() -> None:
    master, slave = os.openpty()
    try:
        assert not hung_up(slave)
        os.write(master, b"q")  # a key waiting is not a hang-up
        assert not hung_up(slave)
        os.close(master)
        assert hung_up(slave)
    finally:
        os.close(slave)


async def test_the_app_exits_when_its_terminal_hangs_up(tmp_path: Path) -> None:
    master, slave = os.openpty()
    app = CopyauditApp(tmp_path / "audit.db", annotator="ana")
    try:
        async with app.run_test() as pilot:
            await pilot.pause()
            assert not app.exit_if_terminal_gone(slave)
            assert app.is_running
            os.close(master)
            master = -1
            assert app.exit_if_terminal_gone(slave)
            await pilot.pause()
        assert app.return_code == 1
    finally:
        os.close(slave)
        if master >= 0:
            os.close(master)

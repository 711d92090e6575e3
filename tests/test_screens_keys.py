"""The key scheme: a key that writes an audit event never moves anything on any screen,
Esc never cancels a run on any screen, the key table of docs/app.md is the bindings', and
help opens at the current screen's keys."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.binding import Binding

from screens.app import CopyauditApp
from screens.help import HelpScreen, help_table
from screens.keymap import collisions, readme_table
from screens.runs.run_control import ActiveRun
from tests.test_screens_data import settle

pytestmark = pytest.mark.anyio
SIZE = (120, 40)
KEYS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "app.md"


def test_keys_that_write_an_event_never_move_anywhere() -> None:
    assert collisions() == []
    # the check can fail: the old scheme (n "No" in annotation, "next" in the view)
    old = [
        ("Annotation", [Binding("n", "label('no')", "No")]),
        ("View", [Binding("n", "step(1)", "Next")]),
        ("Case", [Binding("c", "set_status('cleared')", "Cleared")]),
        ("View 2", [Binding("c", "focus_pane('context-pane')", "Prompt/ref")]),
        ("List", [Binding("u", "toggle('unlabeled')", "Unlabelled")]),
        ("Annotation 2", [Binding("u", "label('unsure')", "Unsure")]),
    ]
    assert collisions(old) == [
        "View: n is step(1), but writes an audit event elsewhere",
        "View 2: c is focus_pane('context-pane'), but writes an audit event elsewhere",
    ]


def test_readme_key_table_is_the_bindings() -> None:
    from screens.keymap import key_table

    shown = readme_table(KEYS_PAGE.read_text(encoding="utf-8"))
    assert shown is not None, "docs/app.md lost its key table markers"
    assert shown == key_table(), "run: python -m screens.keymap docs/app.md"
    assert "`y` Yes" in shown and "`1` Open" in shown and "`N` Next gen" in shown


async def test_help_opens_at_the_current_screen_without_binding_ids(demo_db: Path) -> None:
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")  # a generation list
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        console = Console(width=200, record=True)
        console.print(help_table(app, app.screen.current))
        lines = [line.strip() for line in console.export_text().splitlines() if line.strip()]
        assert lines[0].split() == ["Key", "Does"]
        lines = lines[1:]
        assert lines[0] == "This screen: Generation list"
        assert lines[1].startswith("Esc") and "Back" in lines[1]
        other = lines.index("Other screens")
        assert "Search" in " ".join(lines[1:other]) and "Everywhere" in lines[other:]
        assert not any("list.search" in line or "view.next" in line for line in lines)


async def _visit(pilot: Any, keys: tuple[str, ...], screen_name: str) -> None:
    await pilot.press(*keys)
    await settle(pilot)
    assert type(pilot.app.screen).__name__ == screen_name, type(pilot.app.screen).__name__


async def test_esc_never_cancels_a_run_on_any_screen(demo_db: Path) -> None:
    app = CopyauditApp(demo_db, annotator="ann")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        run = ActiveRun("a-run-in-progress")  # a fake run state, as the app holds one
        run.state = "running"
        app.active_runs[run.name] = run
        visits = [
            (("escape",), "DashboardScreen"),
            (("s",), "LauncherScreen"),
            (("escape",), "DashboardScreen"),
            (("down", "enter"), "GenerationListScreen"),
            (("enter",), "GenerationScreen"),
            (("a",), "AnnotationScreen"),
            (("question_mark",), "HelpScreen"),
            (("escape",), "AnnotationScreen"),
            (("escape",), "GenerationScreen"),
            (("escape",), "GenerationListScreen"),
            (("escape",), "DashboardScreen"),
            (("v",), "ReviewQueueScreen"),
            (("enter",), "CaseScreen"),
            (("escape",), "ReviewQueueScreen"),
            (("escape",), "DashboardScreen"),
            (("a",), "AgreementScreen"),
            (("escape",), "DashboardScreen"),
        ]
        for keys, name in visits:
            await _visit(pilot, keys, name)
            assert not run.cancel.is_set(), f"{keys} on the way to {name} cancelled the run"
        assert run.state == "running" and not run.finished

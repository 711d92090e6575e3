"""Keys: the help screen lists every binding, ids are unique, no key is bound twice on a
screen, the footer shows the current screen's keys, the command palette works."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from screens.app import CopyauditApp
from screens.generations.generation_list import GenerationListScreen
from screens.help import HelpScreen, help_sections, help_table, own_bindings
from screens.runs.launcher import LauncherScreen
from tests.test_screens_data import settle

pytestmark = pytest.mark.anyio
SIZE = (120, 40)


DEMO_KINDS = ("literal",)  # the demo_db fixture's suites (conftest)


def _ours(cls) -> list:
    return [b for b in own_bindings(cls) if b.id is not None]


def test_binding_ids_are_unique_and_keys_do_not_collide() -> None:
    named: dict[str, set[tuple[str, str]]] = {}
    for _, cls in help_sections(CopyauditApp):
        for b in _ours(cls):  # a subclass screen inherits its base's bindings, ids and all
            named.setdefault(b.id, set()).add((b.key, b.action))
        keys = [b.key for b in own_bindings(cls)]
        assert len(keys) == len(set(keys)), f"{cls.__name__} binds a key twice: {keys}"
    assert {i: found for i, found in named.items() if len(found) > 1} == {}
    assert len(named) >= 30
    app_keys = {b.key for _, cls in help_sections(CopyauditApp)[:1] for b in own_bindings(cls)}
    for title, cls in help_sections(CopyauditApp)[2:]:
        if "Help" not in title:  # the help screen closes itself with ?, on purpose
            assert not app_keys & {b.key for b in own_bindings(cls)}, title


async def test_help_lists_every_key_of_every_screen(demo_db: Path) -> None:
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        console = Console(width=200, record=True)
        console.print(help_table(app))
        text = console.export_text()
        for _, cls in help_sections(CopyauditApp):
            for binding in own_bindings(cls):
                assert binding.description in text
                if binding.id:  # developer binding ids are not shown to people
                    assert binding.id not in text
        assert "Command palette" in text
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, HelpScreen)


async def test_footer_shows_the_current_screen_keys(demo_db: Path) -> None:
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)

        def footer() -> set[str]:
            return {key.description for key in app.screen.query("FooterKey")}

        assert {"New run", "Open", "Help"} <= footer()
        await pilot.press("enter")
        await settle(pilot)
        assert {"Search", "Sort", "Flag", "Disagree", "Open"} <= footer()
        assert "New run" not in footer()


async def test_command_palette_opens_runs_and_the_launcher(demo_db: Path) -> None:
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p", *"open run demo-literal")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, GenerationListScreen)
        assert app.screen.run["name"] == "demo-literal"
        await pilot.press("ctrl+p", *"new run")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, LauncherScreen)


def test_help_snapshot(demo_db: Path, snap_compare) -> None:
    async def open_help(pilot) -> None:
        await settle(pilot)
        await pilot.press("enter")  # a run's list
        await settle(pilot)  # its rows are loaded by a worker
        await pilot.press("enter")  # its first generation
        await settle(pilot)
        await pilot.press("question_mark")  # opens at the generation view's keys
        await settle(pilot)
        assert isinstance(pilot.app.screen, HelpScreen)

    assert snap_compare(CopyauditApp(demo_db), terminal_size=SIZE, run_before=open_help)

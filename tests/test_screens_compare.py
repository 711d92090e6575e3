"""The model comparison screen: opened with c from the dashboard, one table per study
whose cells are `copyaudit compare`'s, Enter on a cell opens its run, b changes the
rows, plots below; snapshot."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable

from copyaudit.reports.compare.build import build_comparison
from copyaudit.reports.compare.render import cell_text
from db import Store
from screens.app import CopyauditApp
from screens.compare.compare_view import CompareScreen, _short
from screens.generations.generation_list import GenerationListScreen
from screens.runs.dashboard import DashboardScreen
from tests.compare_fixtures import SECOND, build_two_model_db
from tests.test_screens_data import settle

pytestmark = pytest.mark.anyio
SIZE = (160, 50)


@pytest.fixture(scope="module")
def two_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_two_model_db(tmp_path_factory.mktemp("compare-screen") / "two.db")


async def _open(pilot) -> None:
    await settle(pilot)
    await pilot.press("c")
    await settle(pilot)


async def test_c_opens_the_comparison_with_the_command_s_cells(two_models: Path) -> None:
    with Store(two_models) as store:
        expected = build_comparison(store)
    app = CopyauditApp(two_models)
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        tables = list(screen.query(DataTable))
        assert len(tables) == len(expected["tables"]) == 4
        block = expected["tables"][0]
        shown = tables[0]
        assert shown.row_count == len(block["rows"])
        for number, row in enumerate(block["rows"]):
            texts = [str(c) for c in shown.get_row(str(number))]
            assert texts[0] == row["group"]["model"]  # markup in a name shown as typed
            assert texts[1:] == [
                _short(cell_text(row["cells"][c["key"]], c["shown_as"])) for c in block["columns"]
            ]
        assert any(str(shown.get_row(str(n))[0]) == SECOND for n in range(shown.row_count))


async def test_enter_on_a_cell_opens_its_run_and_b_changes_the_rows(two_models: Path) -> None:
    app = CopyauditApp(two_models)
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        detail = str(screen.query_one("#compare-detail").render())
        assert "from run demo-literal" in detail  # the first figure: literal %, first model
        await pilot.press("down")  # the second model's literal %
        await settle(pilot)
        assert "from run second-literal" in str(screen.query_one("#compare-detail").render())
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, GenerationListScreen)
        assert app.screen.run["name"] == "second-literal"
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen
        await pilot.press("b")
        await settle(pilot)
        assert screen.comparison is not None and screen.comparison["by"] == "mitigation"
        first = screen.query(DataTable).first()
        assert [str(c.label) for c in first.ordered_columns][:2] == ["model", "mitigation"]
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, DashboardScreen)


def test_comparison_snapshot(two_models: Path, snap_compare) -> None:
    async def ready(pilot) -> None:
        await _open(pilot)
        await pilot.press("right")
        await settle(pilot)

    assert snap_compare(CopyauditApp(two_models), terminal_size=SIZE, run_before=ready)


async def test_the_command_palette_opens_the_comparison(two_models: Path) -> None:
    app = CopyauditApp(two_models)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await settle(pilot)
        await pilot.press(*"compare models")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)

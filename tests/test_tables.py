"""Tables use the width they have: flexible columns share the room the others leave,
in order, up to their widest cell."""

from __future__ import annotations

from pathlib import Path

import pytest

from screens.app import CopyauditApp
from screens.generations.generation_list import FLEXIBLE, GenerationListScreen
from screens.widgets.tables import share_width
from tests.test_screens_data import copy_demo_like_db, settle

pytestmark = pytest.mark.anyio


def test_share_width_fills_in_order_up_to_the_widest_cell() -> None:
    assert share_width(100, [(10, 14), (10, 40), (20, 200)]) == [14, 40, 46]
    assert share_width(50, [(10, 14), (10, 40), (20, 200)]) == [14, 16, 20]
    assert share_width(30, [(10, 14), (10, 40), (20, 200)]) == [10, 10, 20]  # too narrow
    assert share_width(500, [(10, 14), (10, 40)]) == [14, 40]  # never wider than needed


@pytest.fixture
def demo_db(tmp_path: Path) -> Path:
    path = tmp_path / "demo.db"
    copy_demo_like_db(path, kinds=("literal",))
    return path


async def _columns(demo_db: Path, size: tuple[int, int]) -> dict[str, int]:
    app = CopyauditApp(demo_db)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("enter")  # demo-literal
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, GenerationListScreen)
        table = screen.query_one("#generations")
        cells = {
            key: max(len(str(table.get_cell(row, key))) for row in table.rows) for key in FLEXIBLE
        }
        widths = {c.key.value: c.width for c in table.ordered_columns}
        used = sum(c.get_render_width(table) for c in table.ordered_columns)
        return {"case_cell": cells["case"], "work_cell": cells["work"], **widths, "used": used}


async def test_the_generation_list_gives_titles_the_room_a_wide_screen_has(
    demo_db: Path,
) -> None:
    narrow = await _columns(demo_db, (120, 40))
    wide = await _columns(demo_db, (200, 40))
    assert narrow["case"] >= narrow["case_cell"]  # case ids whole at 120 columns
    assert narrow["work"] > 22  # more than the old fixed cut
    assert wide["work"] >= wide["work_cell"]  # every title whole on a wide screen
    assert wide["output"] > narrow["output"]  # the preview takes the rest
    assert narrow["used"] <= 120 - 2 and wide["used"] <= 200 - 2  # no sideways scrolling

"""The memorisation map of a p_z run (Enter or m on a dashboard run): its strips and shares are
copyaudit.reports.pz's, the cursor moves over cells and works, s switches the scheme,
Enter opens the windows of the stretch under the cursor with the lowest-probability
token highlighted; snapshot. One tiny p_z run (tests.pz_fixtures), copied per test."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text

from copyaudit.reports.pz import MAP_WIDTH, map_strip, memorisation_map, pz_figures, work_shares
from db import Store
from screens.app import CopyauditApp
from screens.pz.map_view import CURSOR_STYLE, GREEDY_STYLE, MemorisationMapScreen
from screens.pz.stretch_view import LOWEST_STYLE, MapStretchScreen
from tests.pz_fixtures import RUN, copy_pz_db
from tests.test_screens_data import settle

# make test-slow: trains a tiny memorising model
pytestmark = [pytest.mark.anyio, pytest.mark.slow]
SIZE = (140, 24)


@pytest.fixture
def pz_db(tmp_path: Path) -> Path:
    return copy_pz_db(tmp_path / "pz.db")


async def _open_map(pilot: Any) -> MemorisationMapScreen:
    await settle(pilot)
    await pilot.press("m")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, MemorisationMapScreen)
    return screen


def _styles_at(text: Text, offset: int) -> set[str]:
    return {str(span.style) for span in text.spans if span.start <= offset < span.end}


def _lines(screen: MemorisationMapScreen) -> list[Text]:
    return list(screen.map_text.split("\n"))


def _windows(db: Path) -> list[dict[str, Any]]:
    """Every window of the run: its case, work, first character and p_z per judge."""
    with Store(db) as store:
        rows = store.query(
            "SELECT c.case_id, w.title, c.payload, j.judge, j.metric, j.value, j.evidence "
            "FROM judgments j JOIN generations g ON g.id = j.generation_id "
            "JOIN cases c ON c.id = g.case_pk JOIN works w ON w.id = c.work_id "
            "WHERE j.metric IN ('pz', 'log_pz') AND j.judge LIKE 'pz_%' ORDER BY c.id"
        )
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        window = json.loads(row["payload"])["window"]
        entry = out.setdefault(
            row["case_id"],
            {"case": row["case_id"], "title": row["title"], "chars": window["chars"],
             "work_chars": window["work_chars"], "pz": {}, "evidence": {}},
        )  # fmt: skip
        if row["metric"] == "log_pz":
            entry["evidence"][row["judge"]] = json.loads(row["evidence"])["extra"]
        else:
            entry["pz"][row["judge"]] = row["value"]
    return list(out.values())


async def test_the_strips_and_shares_are_the_reports(pz_db: Path) -> None:
    with Store(pz_db) as store:
        maps = memorisation_map(store, 1)
        shares = work_shares(store, 1)
        figures = pz_figures(store, 1)
    async with CopyauditApp(pz_db).run_test(size=SIZE) as pilot:
        screen = await _open_map(pilot)
        assert screen.data is not None
        assert screen.data.maps == maps and screen.data.shares == shares
        assert screen.scheme == "pz_sampling_t1"  # a sampling scheme first: greedy is 0/1
        for index, title in enumerate(maps[screen.scheme]):
            line = _lines(screen)[index]
            cells = maps[screen.scheme][title]
            assert line.plain.startswith(map_strip(cells))
            assert line.plain.endswith(title)
            work = shares[screen.scheme][title]
            assert f"{work['windows']:>5} windows" in line.plain
            for threshold, share in work["share_at_least"].items():
                assert f"≥{float(threshold):g} {share:6.1%}" in line.plain
            # greedy hits underlined: exactly the cells where greedy's p_z is 1
            greedy = maps["pz_greedy"][title]
            underlined = [GREEDY_STYLE in " ".join(_styles_at(line, c)) for c in range(MAP_WIDTH)]
            assert underlined == [v == 1.0 for v in greedy]
    # the works' shares, weighted by their windows, are the run's figures
    for judge, works in shares.items():
        total = sum(w["windows"] for w in works.values())
        assert total == figures[judge]["windows"]
        for threshold, run_share in figures[judge]["share_at_least"].items():
            weighted = sum(w["share_at_least"][threshold] * w["windows"] for w in works.values())
            assert weighted / total == pytest.approx(run_share)
    assert any(v == 1.0 for v in maps["pz_greedy"]["lighthouse"])  # the fixture has hits


async def test_the_arrows_move_the_cursor_and_s_switches_the_scheme(pz_db: Path) -> None:
    async with CopyauditApp(pz_db).run_test(size=SIZE) as pilot:
        screen = await _open_map(pilot)
        await pilot.press("left", "up")  # at the first cell of the first work: stays
        assert (screen.work_index, screen.cell) == (0, 0)
        await pilot.press("right", "right", "right", "down")
        assert (screen.work_index, screen.cell) == (1, 3)
        lines = _lines(screen)
        assert CURSOR_STYLE in " ".join(_styles_at(lines[1], 3))
        assert not any(CURSOR_STYLE in " ".join(_styles_at(lines[0], c)) for c in range(60))
        assert screen.data is not None
        before = screen.scheme
        await pilot.press("s")
        assert screen.scheme != before and screen.scheme in screen.data.maps
        title = list(screen.data.maps[screen.scheme])[1]
        assert _lines(screen)[1].plain.startswith(map_strip(screen.data.maps[screen.scheme][title]))
        for _ in range(len(screen.data.maps) - 1):
            await pilot.press("s")
        assert screen.scheme == before  # s goes round the schemes


async def test_enter_opens_the_windows_of_the_stretch(pz_db: Path) -> None:
    windows = _windows(pz_db)
    cell = 1
    expected = [
        w["case"]
        for w in windows
        if w["title"] == "lighthouse" and w["chars"][0] * MAP_WIDTH // w["work_chars"] == cell
    ]
    assert expected
    async with CopyauditApp(pz_db).run_test(size=SIZE) as pilot:
        await _open_map(pilot)
        await pilot.press("right", "enter")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, MapStretchScreen)
        assert [w.case_id for w in screen.windows] == expected
        by_case = {w["case"]: w for w in windows}
        for shown, text in zip(screen.windows, screen.texts(), strict=True):
            stored = by_case[shown.case_id]
            assert {f.judge: f.pz for f in shown.schemes} == stored["pz"]
            assert shown.reference in text.plain and shown.greedy_output in text.plain
            # the lowest-probability token of the chosen scheme, and it alone, highlighted
            evidence = stored["evidence"][screen.scheme]
            values = [-math.inf if v is None else v for v in evidence["token_log_probs"]]
            lowest = min(range(len(values)), key=values.__getitem__)
            marked = [text.plain[s.start : s.end] for s in text.spans if s.style == LOWEST_STYLE]
            assert marked == [evidence["tokens"][lowest]]
        await pilot.press("s")
        assert screen.scheme != "pz_sampling_t1"
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(pilot.app.screen, MemorisationMapScreen)


async def test_a_run_without_p_z_says_so(demo_db: Path) -> None:
    async with CopyauditApp(demo_db).run_test(size=SIZE) as pilot:
        screen = await _open_map(pilot)
        shown = str(screen.query_one("#pz-scheme").render())
        assert "no p_z judgments" in shown
        await pilot.press("enter", "right")  # nothing to open or move over
        assert pilot.app.screen is screen


def test_memorisation_map_snapshot(pz_db: Path, snap_compare: Any) -> None:
    with Store(pz_db) as store:  # the model's folder is a fresh temporary one each time
        store.conn.execute("UPDATE runs SET model = 'tiny-memoriser'")
        store.conn.commit()

    async def open_map(pilot: Any) -> None:
        await _open_map(pilot)
        await pilot.press("right")

    assert snap_compare(CopyauditApp(pz_db), terminal_size=SIZE, run_before=open_map)


async def test_the_command_palette_opens_the_map_of_a_p_z_run(pz_db: Path) -> None:
    async with CopyauditApp(pz_db).run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p", *"memorisation map")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, MemorisationMapScreen) and screen.run == RUN


async def test_enter_on_the_run_opens_its_map_and_g_its_generation_list(pz_db: Path) -> None:
    """As a DE-COP run opens in its own view, a p_z run opens on its map; g there opens
    the run's generations (one row per window)."""
    from screens.generations.generation_list import GenerationListScreen

    async with CopyauditApp(pz_db).run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, MemorisationMapScreen) and screen.run == RUN
        await pilot.press("g")
        await settle(pilot)
        listed = pilot.app.screen
        assert isinstance(listed, GenerationListScreen) and listed.run["name"] == RUN
        await pilot.press("escape")
        await settle(pilot)
        assert pilot.app.screen is screen


async def test_a_finding_opens_from_the_reviewer_queue(pz_db: Path) -> None:
    """The finding's windows are in the reviewer queue; Enter opens the case view."""
    from screens.generations.case_view import CaseScreen
    from screens.review.review_queue import ReviewQueueScreen

    async with CopyauditApp(pz_db).run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("v")
        await settle(pilot)
        queue = pilot.app.screen
        assert isinstance(queue, ReviewQueueScreen)
        await pilot.press("enter")
        await settle(pilot)
        case = pilot.app.screen
        assert isinstance(case, CaseScreen)
        assert case.case is not None and case.case.pz is not None
        assert any(j["judge"] == "sampling_not_greedy" for j in case.case.judgments)

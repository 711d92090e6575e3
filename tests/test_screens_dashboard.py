"""Runs dashboard: runs with their headline figures, opening a run, snapshot."""

from __future__ import annotations

from pathlib import Path

import pytest

from db import Store
from screens.app import CopyauditApp
from screens.generations.generation_list import GenerationListScreen
from screens.runs.dashboard import DashboardScreen
from tests.test_screens_data import cell_texts, settle

pytestmark = pytest.mark.anyio
SIZE = (120, 40)


DEMO_KINDS = ("literal", "nonliteral", "qa", "notice")  # the demo_db fixture's suites (conftest)


def _flag_share(path: Path, run: str, metric: str) -> float:
    with Store(path) as store:
        return float(
            store.scalar(
                "SELECT AVG(j.flagged) FROM judgments j JOIN generations g ON g.id = "
                "j.generation_id JOIN runs r ON r.id = g.run_id WHERE r.name = ? AND j.metric = ?",
                (run, metric),
            )
        )


async def test_dashboard_shows_every_run_with_its_figures(demo_db: Path) -> None:
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, DashboardScreen)
        runs = app.screen.query_one("#runs")
        assert runs.row_count == 5
        literal = cell_texts(runs, "demo-literal")
        assert literal[0] == "demo-literal" and literal[3] == "imported"
        assert literal[5] == f"{100 * _flag_share(demo_db, 'demo-literal', 'rougeL'):.1f}%"
        assert literal[6] == "—"  # no events judge on a literal run
        nonliteral = cell_texts(runs, "demo-nonliteral")
        assert nonliteral[6] == f"{100 * _flag_share(demo_db, 'demo-nonliteral', 'events'):.1f}%"
        assert (
            nonliteral[7] == f"{100 * _flag_share(demo_db, 'demo-nonliteral', 'characters'):.1f}%"
        )
        decop = cell_texts(runs, "decop-demo")
        assert decop[-1] == "1.000"  # suspect works always ahead of clean ones in the fixture
        assert cell_texts(runs, "demo-qa")[-1] == "—"
        suites = app.screen.query_one("#suites")
        assert suites.row_count == 5


async def test_enter_opens_the_run_under_the_cursor(demo_db: Path) -> None:
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("down", "enter")
        await settle(pilot)
        assert isinstance(app.screen, GenerationListScreen)
        assert app.screen.run["name"] == "demo-nonliteral"
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, DashboardScreen)


def test_dashboard_snapshot(demo_db: Path, snap_compare) -> None:
    async def ready(pilot) -> None:
        await settle(pilot)

    assert snap_compare(CopyauditApp(demo_db), terminal_size=SIZE, run_before=ready)


async def test_an_empty_database_says_how_to_start(tmp_path: Path, cli) -> None:
    from tests.conftest import write_jsonl
    from tests.factories import literal_record

    path = tmp_path / "empty.db"
    app = CopyauditApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        hint = app.screen.query_one("#hint")
        assert hint.display and "copyaudit import KIND FILE" in str(hint.render())
        cases = write_jsonl(tmp_path / "c.jsonl", [literal_record(1)])
        assert cli("import", "literal", str(cases), "--suite", "s", db=path).code == 0
        await pilot.press("r")
        await settle(pilot)
        assert hint.display and "No runs yet" in str(hint.render())


async def test_no_hint_once_there_are_runs(demo_db: Path) -> None:
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not app.screen.query_one("#hint").display


def test_long_run_names_are_cut_in_the_middle() -> None:
    from screens.plain import middle_cut

    name = "notice-default-none-notice-start-keyword+repeat_warning"
    cut = middle_cut(name, 32).plain
    assert len(cut) == 32 and cut.startswith("notice-default-") and cut.endswith("repeat_warning")
    assert "…" in cut and middle_cut("short-name", 32).plain == "short-name"
    assert middle_cut("[b]x[/b]" * 6, 11).plain == "[b]x[…x[/b]"  # still plain text


def _judged_as_shipped(path: Path, run: str) -> None:
    """`run`: the demo's nonliteral outputs, judged under the configuration the shipped
    validation figures were measured on (the events judge, version and threshold)."""
    from copyaudit.engine.demo import samples_dir
    from copyaudit.formats import load_generations
    from copyaudit.judges.validation_figures import shipped_figures
    from copyaudit.types import Score
    from db.runs import JudgeIdentity, import_generations, save_judgments

    measured = shipped_figures()["events"]
    rows = list(load_generations(samples_dir() / "generations" / "nonliteral.jsonl"))[:3]
    identity = JudgeIdentity(
        "events", measured["version"], {"entailment_threshold": measured["threshold"]}, "ev"
    )
    with Store(path) as store:
        import_generations(store, run=run, suite="nonliteral", model="m", rows=rows, source="x")
        ids = [r["id"] for r in store.query(
            "SELECT g.id FROM generations g JOIN runs r ON r.id = g.run_id WHERE r.name = ?",
            (run,),
        )]  # fmt: skip
        save_judgments(store, identity, [(i, [Score("events", 6.0, flagged=True)]) for i in ids])


async def test_the_highlighted_runs_judges_show_how_far_to_trust_them(demo_db: Path) -> None:
    """Where a rate is read, its judge's measured quality: with no labels of the run,
    the shipped validation set's F1 beside the always-yes baseline's, for the judge
    configuration measured there (any other is only "not verified")."""
    from copyaudit.judges.validation_figures import shipped_figures

    _judged_as_shipped(demo_db, "checked-nonliteral")
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        runs = app.screen.query_one("#runs")
        shown = {}
        for run in ("demo-nonliteral", "checked-nonliteral"):
            runs.move_cursor(row=runs.get_row_index(run))
            await pilot.pause()
            shown[run] = str(app.screen.query_one("#run-people").render())
    figures = shipped_figures()
    assert "characters: not verified against people" in shown["demo-nonliteral"]
    assert "events: not verified against people" in shown["demo-nonliteral"]  # another config
    assert (
        f"events: 0 labels of this run; F1 {figures['events']['f1']:.3f} on the shipped "
        f"validation set (always yes {figures['always yes']['f1']:.3f})"
    ) in shown["checked-nonliteral"]


def test_the_report_and_compare_read_the_shipped_figures_beside_the_rate(
    demo_db: Path, cli
) -> None:
    """The same figures where a reviewer reads the rate in a report or a comparison."""
    _judged_as_shipped(demo_db, "checked-nonliteral")
    line = "events: validated on 0 labels of this run; on the shipped validation set F1 "
    report = cli("report", "checked-nonliteral", db=demo_db)
    assert report.code == 0 and line in report.out
    compared = cli("compare", "checked-nonliteral", db=demo_db)
    assert compared.code == 0 and f"m · {line}" in compared.out
    other = cli("report", "demo-nonliteral", db=demo_db).out  # a configuration not measured
    assert "events: not verified against people (no labels)" in other and line not in other

"""Agreement & judge-quality screen: the same numbers as `copyaudit agreement`, the
disagreement list opens the generation view, adjudication from there, reachable from
the dashboard and the command palette."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from db import Store
from db.case_file import run_judges
from db.events import append_label
from db.labels import current_labels, judge_verdicts
from db.queues import create_queue, queue_items
from screens.app import CopyauditApp
from screens.generations.generation_view import GenerationScreen
from screens.review.agreement_view import (
    AgreementScreen,
    item_label,
    judge_name,
    num,
    with_interval,
)
from screens.review.annotation import AnnotationScreen
from tests.label_fixtures import label, label_like_judge, literal_copies_run
from tests.test_screens_data import copy_demo_like_db, settle, wait_until

pytestmark = pytest.mark.anyio
SIZE = (120, 40)
ANNOTATORS = ("ann", "bob", "cy")


def add_three_annotators(path: Path, generations: int = 6) -> int:
    """Labels by three annotators on the first generations of the nonliteral and literal
    runs, built from the judges' verdicts with deterministic departures (bob flips every
    third item, cy every fifth and is unsure on every seventh); returns events written."""
    written = 0
    with Store(path) as store:
        for run in ("demo-nonliteral", "demo-literal"):
            verdicts = judge_verdicts(store, run=run)
            ids = sorted({v.generation_id for v in verdicts})[:generations]
            seen: set[tuple[int, str, int]] = set()
            number = 0
            for verdict in verdicts:
                key = (verdict.generation_id, verdict.target, verdict.item_index)
                if verdict.generation_id not in ids or key in seen or verdict.verdict is None:
                    continue
                seen.add(key)
                number += 1
                truth = "yes" if verdict.verdict else "no"
                flipped = "no" if truth == "yes" else "yes"
                choices = {
                    "ann": truth,
                    "bob": flipped if number % 3 == 0 else truth,
                    "cy": "unsure" if number % 7 == 0 else flipped if number % 5 == 0 else truth,
                }
                for name in ANNOTATORS:
                    append_label(
                        store,
                        generation_id=verdict.generation_id,
                        annotator=name,
                        target=verdict.target,
                        item_index=verdict.item_index,
                        label=choices[name],
                    )
                    written += 1
    return written


@pytest.fixture
def labelled_db(tmp_path: Path) -> Path:
    path = tmp_path / "demo.db"
    copy_demo_like_db(path, kinds=("literal", "nonliteral"))
    assert add_three_annotators(path) > 100
    return path


def _cells(table: Any) -> list[list[str]]:
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


async def _open_agreement(pilot: Any) -> AgreementScreen:
    await settle(pilot)
    await pilot.press("a")  # from the dashboard
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, AgreementScreen)
    await wait_until(pilot, lambda: screen.report is not None)
    await wait_until(pilot, lambda: screen.estimates is not None, timeout=60)  # loads ppi_py
    await settle(pilot)
    return screen


async def test_screen_shows_the_numbers_of_copyaudit_agreement(
    labelled_db: Path, cli: Callable
) -> None:
    result = cli("agreement", "--format", "json", db=labelled_db)
    assert result.code == 0, result.err
    expected = json.loads(result.out)
    assert expected["judges"] and expected["agreement"] and expected["disagreements"]
    app = CopyauditApp(labelled_db)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_agreement(pilot)
        judges = _cells(screen.query_one("#agreement-judges"))
        assert len(judges) == len(expected["judges"])
        for shown, row in zip(judges, expected["judges"], strict=True):
            assert shown[:4] == [
                row["run"],
                row["target"],
                judge_name(row),
                str(row["n"]),
            ]
            for cell, metric in zip(
                shown[4:8], ("accuracy", "precision", "recall", "f1"), strict=True
            ):
                assert cell == with_interval(row[metric], row["ci"][metric])
        # the figures are real numbers, not dashes, for the judged targets
        assert any(cell[0].isdigit() for shown in judges for cell in shown[4:8])
        people = _cells(screen.query_one("#agreement-people"))
        assert len(people) == len(expected["agreement"])
        for shown, row in zip(people, expected["agreement"], strict=True):
            assert shown[:5] == [  # run, target, alpha, items, annotators
                row["run"],
                row["target"],
                num(row["alpha"]),
                str(row["items"]),
                str(row["annotators"]),
            ]
            assert row["annotators"] == 3
            for pair in row["kappa"]:
                assert f"{pair['a']}–{pair['b']}: {num(pair['kappa'])} (n={pair['n']})" in shown[9]
        disputes = _cells(screen.query_one("#agreement-disputes"))
        assert len(disputes) == len(expected["disagreements"])
        for shown, row in zip(disputes, expected["disagreements"], strict=True):
            assert shown[:3] == [row["generation"], row["target"], item_label(row)]
            assert shown[3] == row["kind"]
        # the highlighted judge's confusion matrix and paper figures
        table = screen.query_one("#agreement-judges")
        event_row = next(i for i, r in enumerate(expected["judges"]) if r["target"] == "event")
        table.move_cursor(row=event_row)
        await settle(pilot)
        confusion = expected["judges"][event_row]["confusion"]
        matrix = str(screen.query_one("#agreement-confusion").render()).split("\n")
        assert matrix[1].split()[-2:] == [str(confusion["tp"]), str(confusion["fp"])]
        assert matrix[2].split()[-2:] == [str(confusion["fn"]), str(confusion["tn"])]
        detail = str(screen.query_one("#agreement-detail").render())
        assert "CopyBench Table 3: accuracy 0.89 · precision 0.68 · recall 0.87" in detail


async def test_enter_opens_the_disputed_generation_and_next_walks_the_disputes(
    labelled_db: Path,
) -> None:
    app = CopyauditApp(labelled_db)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_agreement(pilot)
        ids = list(dict.fromkeys(row["generation_id"] for row in screen.disputes))
        assert len(ids) >= 2
        await pilot.press("enter")
        await settle(pilot)
        view = app.screen
        assert isinstance(view, GenerationScreen) and view.generation_id == ids[0]
        await pilot.press("N")
        assert view.generation_id == ids[1]
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen


async def test_adjudicating_a_dispute_settles_the_reference(labelled_db: Path) -> None:
    app = CopyauditApp(labelled_db, annotator="judy")
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_agreement(pilot)
        table = screen.query_one("#agreement-disputes")
        index = next(i for i, r in enumerate(screen.disputes) if r["kind"].startswith("people"))
        row = screen.disputes[index]
        table.move_cursor(row=index)
        await pilot.press("d")
        await settle(pilot)
        annotate = app.screen
        assert isinstance(annotate, AnnotationScreen) and annotate.adjudicate_as == "adjudicator"
        assert not annotate.blind  # an adjudicator sees the judges and everyone's labels
        checklist = annotate.query_one("#checklist")
        assert checklist.current_item.key == f"{row['target']}:{row['item']}"
        final = "no" if row["reference"] == "yes" else "yes"
        await pilot.press(final[0])
        with Store(labelled_db) as store:
            mine = current_labels(
                store, generation_ids=[row["generation_id"]], annotator="adjudicator"
            )
        assert [(m.target, m.item_index, m.label, m.note) for m in mine] == [
            (row["target"], row["item"], final, "by judy")
        ]
        await pilot.press("escape")  # to the view
        await settle(pilot)
        await pilot.press("escape")  # to the agreement screen, which reloads
        await settle(pilot)
        await wait_until(
            pilot,
            lambda: any(
                r["generation_id"] == row["generation_id"]
                and r["item"] == row["item"]
                and r["target"] == row["target"]
                and r["reference_source"] == "adjudicated"
                for r in screen.report["disagreements"]
            ),
        )
        settled = next(
            r
            for r in screen.report["disagreements"]
            if (r["generation_id"], r["target"], r["item"])
            == (row["generation_id"], row["target"], row["item"])
        )
        assert settled["reference"] == final and settled["adjudicated"] == {"adjudicator": final}


async def test_command_palette_opens_the_agreement_screen(labelled_db: Path) -> None:
    app = CopyauditApp(labelled_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p", *"agreement")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, AgreementScreen)


def _random_queue_labelled(path: Path, size: int = 12) -> None:
    """A random-sample queue on the nonliteral run, every judged item of it labelled
    by ann (the judge's verdict, every fourth item the other way)."""
    with Store(path) as store:
        create_queue(store, "sample", run="demo-nonliteral", design="random", size=size, seed=4)
        ids = set(queue_items(store, "sample"))
        label_like_judge(store, judge_verdicts(store, run="demo-nonliteral"), ids, flip_every=4)


async def test_the_estimate_line_shows_judge_and_people(labelled_db: Path) -> None:
    _random_queue_labelled(labelled_db)
    app = CopyauditApp(labelled_db, annotator="judy")
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_agreement(pilot)
        shown = str(screen.query_one("#agreement-estimates", Static).render())
        assert "demo-nonliteral: events % 22.7% → 53% [27–79%] (11 of 22 labelled)" in shown
        # the planning line of the first rate estimated
        assert "  events %: ±5 points cannot be reached with this run's 22 generations" in shown
        assert "characters % " not in shown  # people said yes on all 11: no interval
        assert "demo-literal: no estimate (6 labelled generations, none from a random" in shown


def test_agreement_estimates_snapshot(labelled_db: Path, snap_compare) -> None:
    _random_queue_labelled(labelled_db)

    async def open_agreement(pilot) -> None:
        await _open_agreement(pilot)

    app = CopyauditApp(labelled_db, annotator="judy")
    assert snap_compare(app, terminal_size=SIZE, run_before=open_agreement)


def test_agreement_snapshot(labelled_db: Path, snap_compare) -> None:
    async def open_agreement(pilot) -> None:
        await _open_agreement(pilot)

    app = CopyauditApp(labelled_db, annotator="judy")
    assert snap_compare(app, terminal_size=SIZE, run_before=open_agreement)


@pytest.fixture
def calibratable_db(tmp_path: Path, cli: Callable) -> Path:
    """A literal run judged by the literal judge, its twelve items labelled by ann."""
    path = tmp_path / "calibrate.db"
    keys = literal_copies_run(cli, tmp_path, db=path)
    assert cli("judge", "r", "--judges", "literal", db=path).code == 0
    with Store(path) as store:
        for i, key in enumerate(keys):
            label(store, key, "ann", "literal", 0, "yes" if i % 7 + 1 >= 4 else "no")
    return path


async def test_c_calibrates_the_highlighted_judge(calibratable_db: Path) -> None:
    app = CopyauditApp(calibratable_db)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_agreement(pilot)
        with Store(calibratable_db) as store:
            (before,) = {row["judge_hash"] for row in run_judges(store, "r")}
        await pilot.press("c")
        await wait_until(pilot, lambda: bool(screen.calibration_lines))
        await wait_until(
            pilot,
            lambda: (screen.report or {}).get("judges", [{}])[0].get("calibration") is not None,
        )
        await settle(pilot)
        assert screen.calibration_lines[0].startswith("literal: threshold 0.800 -> ")
        assert "calibrated on 12 labels of run r by annotators ann" in screen.calibration_lines[0]
        assert screen.calibration_lines[1].startswith("  cross-validated (held out): n 12")
        with Store(calibratable_db) as store:
            (after,) = {row["judge_hash"] for row in run_judges(store, "r")}
        assert after != before
        detail = str(screen.query_one("#agreement-detail").render())
        assert "Calibrated: calibrated on 12 labels of run r by annotators ann" in detail
        assert "figures above in-sample; cross-validated P " in detail


async def test_c_refuses_a_yes_no_judge_and_too_few_labels(labelled_db: Path) -> None:
    app = CopyauditApp(labelled_db)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await _open_agreement(pilot)
        rows = screen.report["judges"]
        table = screen.query_one("#agreement-judges")
        characters = next(i for i, r in enumerate(rows) if r["judge"] == "characters")
        table.move_cursor(row=characters)
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        notes = [str(n.message) for n in app._notifications]
        assert any("characters answers yes/no" in note for note in notes)
        literal = next(i for i, r in enumerate(rows) if r["judge"] == "literal")
        table.move_cursor(row=literal)
        await settle(pilot)
        await pilot.press("c")
        await wait_until(
            pilot, lambda: any("nothing calibrated" in str(n.message) for n in app._notifications)
        )

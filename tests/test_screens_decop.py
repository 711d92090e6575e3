"""The DE-COP screens on real DE-COP runs: a tiny (untrained) causal LM scores a small
suite through `execute_decop`, and the screens must show what `decop_report` and the
stored rows say: headline, method table, per-work rows, the ROC curve, the
label-position bias, a work's passages and one passage's 24 prompts. The launcher
starts a DE-COP run on a decop suite. The snapshot uses a scripted scorer, so that its
numbers do not hang on floating-point noise of a random model."""

from __future__ import annotations

import shutil
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from copyaudit.formats import load_cases
from copyaudit.models.hf_loading import load_causal_lm
from copyaudit.models.hf_scoring import HFChoiceScorer, HFTokenScorer
from copyaudit.studies.decop.method import ANSWER_LETTERS, DecopPassage, all_orders, roc_auc
from copyaudit.studies.decop.report import decop_report
from copyaudit.studies.decop.run import DecopRequest, execute_decop
from copyaudit.verification.roc import roc_points, trapezoid_area
from db import Store
from db.cases import import_cases
from db.decop import decop_score_rows
from screens.app import CopyauditApp
from screens.decop.passage_list import DecopPassageListScreen
from screens.decop.passage_view import DecopPassageScreen
from screens.decop.run_view import DecopScreen
from screens.runs.launcher import LauncherScreen
from screens.widgets.roc_plot import RocPlot
from tests.factories import write_decop_csv
from tests.test_decop_run import (
    AUTHOR,
    CLEAN,
    SUSPECT,
    build_works,
    letter_of_verbatim,
    suite_rows,
)
from tests.test_screens_data import settle, wait_until
from tests.tinymodels import build_tiny_causal_lm, build_tokenizer

# make test-slow: trains a tiny model for its DE-COP runs
pytestmark = [pytest.mark.anyio, pytest.mark.slow]
SIZE = (120, 40)
SUITE, RUN = "bt", "r"
AUTO_HELD_OUT = ["A Map of Quiet Roads", "The Glass Weather"]  # --calibrate-on auto
N_PASSAGES = 2 * (len(SUSPECT) + len(CLEAN))


class ScriptedScorer:
    """No model: the true letter gets extra weight (more for suspect works), letter A is
    favoured everywhere (a position bias the calibration should remove), and every
    prompt gets its own noise, fixed by its text."""

    def __init__(self, strengths: dict[str, float]) -> None:
        self.strengths = strengths  # verbatim passage -> extra weight of its letter

    def choice_probabilities(self, prompts: Sequence[str], choices: Sequence[str]) -> np.ndarray:
        rows = []
        for prompt in prompts:
            verbatim = next(v for v in self.strengths if f". {v}\n" in prompt)
            noise = np.random.default_rng(zlib.crc32(prompt.encode())).random(4)
            weights = np.array([1.6, 1.0, 0.8, 0.6]) + noise
            weights[ANSWER_LETTERS.index(letter_of_verbatim(prompt, verbatim))] += self.strengths[
                verbatim
            ]
            rows.append(weights / weights.sum())
        return np.array(rows)


class ScriptedTokens:
    """Per-token log-probabilities from word lengths (baselines without a model)."""

    def token_logprobs(self, texts: Sequence[str]) -> list[np.ndarray]:
        return [np.array([-0.5 - (len(w) % 5) / 2 for w in t.split()]) for t in texts]


@dataclass(frozen=True)
class Built:
    model_dir: Path
    works: dict[str, list[tuple[str, list[str]]]]
    empty_db: Path  # the suite imported, no run
    model_db: Path  # run RUN scored by the tiny model, calibrated on AUTO_HELD_OUT
    scripted_db: Path  # run RUN scored by ScriptedScorer


def _import(path: Path, csv: Path) -> None:
    with Store(path) as store:
        import_cases(store, SUITE, "decop", load_cases("decop", csv), source=csv.name)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    root = tmp_path_factory.mktemp("decop-screens")
    works = build_works()
    csv = write_decop_csv(root / "bt.csv", suite_rows(works))
    model_dir = root / "model"
    texts = [text for items in works.values() for v, p in items for text in (v, *p)]
    build_tiny_causal_lm(model_dir, build_tokenizer(texts, model_dir, 800))
    empty_db, model_db, scripted_db = root / "empty.db", root / "model.db", root / "scripted.db"
    for path in (empty_db, model_db, scripted_db):
        _import(path, csv)
    request = DecopRequest(suite=SUITE, name=RUN, model="tiny", calibrate_on="auto", chat=False)
    loaded = load_causal_lm(str(model_dir), device="cpu")
    outcome = execute_decop(
        model_db,
        request,
        scorer=HFChoiceScorer(loaded, batch_size=48),
        token_scorer=HFTokenScorer(loaded, batch_size=48),
    )
    assert outcome.status == "done" and outcome.scored == N_PASSAGES
    strengths = {
        verbatim: (0.5 + 0.15 * n if title in SUSPECT else 0.12 * n)
        for n, (title, items) in enumerate(works.items())
        for verbatim, _ in items
    }
    outcome = execute_decop(
        scripted_db, request, scorer=ScriptedScorer(strengths), token_scorer=ScriptedTokens()
    )
    assert outcome.status == "done" and outcome.calibration_works == AUTO_HELD_OUT
    return Built(model_dir, works, empty_db, model_db, scripted_db)


def _copy(source: Path, tmp_path: Path) -> Path:
    return Path(shutil.copy(source, tmp_path / "decop.db"))


def _report(path: Path) -> dict:
    with Store(path) as store:
        return decop_report(store, RUN)


def _text(renderable: object, width: int = 120) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


async def _open(pilot) -> DecopScreen:
    await settle(pilot)
    pilot.app.open_run(RUN)
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, DecopScreen) and screen.view is not None
    return screen


# ---------------------------------------------------------------------------


def test_roc_points_give_the_mann_whitney_auc_with_ties() -> None:
    fpr, tpr, thresholds = roc_points([0.9, 0.5, 0.5, 0.2, 0.7], [1, 1, 0, 0, 0])
    # thresholds 0.9 (one suspect), 0.7 (+ one clean), 0.5 (tie: + one of each), 0.2
    assert thresholds[1:] == [0.9, 0.7, 0.5, 0.2]
    assert fpr == pytest.approx([0, 0, 1 / 3, 2 / 3, 1])
    assert tpr == pytest.approx([0, 0.5, 0.5, 1, 1])
    rng = np.random.default_rng(3)
    for _ in range(50):
        scores = rng.integers(0, 6, size=9) / 5  # many ties
        labels = np.r_[[0, 1], rng.integers(0, 2, size=7)]
        fpr, tpr, _ = roc_points(scores, labels)
        assert trapezoid_area(fpr, tpr) == pytest.approx(roc_auc(scores, labels))
    with pytest.raises(ValueError):
        roc_points([0.1, 0.2], [1, 1])


@pytest.mark.parametrize("scorer", ["model", "scripted"])
async def test_screen_shows_the_report_figures(built: Built, tmp_path: Path, scorer: str) -> None:
    path = _copy(built.model_db if scorer == "model" else built.scripted_db, tmp_path)
    report = _report(path)
    app = CopyauditApp(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot)
        headline = str(screen.query_one("#decop-summary").render())
        assert f"ROC-AUC {report['auc']:.3f}" in headline
        low, high = report["auc_ci"]
        assert f"95% CI {low:.3f}–{high:.3f}" in headline
        assert f"calibrated AUC {report['auc_calibrated']:.3f}" in headline
        p_value = report["p_value"]
        assert f"Welch p {'—' if p_value is None else format(p_value, '.3g')}" in headline
        youden = report["balanced_accuracy_youden"]
        assert f"Youden threshold {youden:.3f}" in headline
        assert 'what the reference code printed as "AUC"' in headline
        assert f"{N_PASSAGES}/{N_PASSAGES} passages" in headline

        table = screen.query_one("#decop-works")
        evaluated = {w["work"]: w for w in report["per_work"]}
        assert len(evaluated) == 5 and table.row_count == len(SUSPECT) + len(CLEAN)
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        for name, label, _bar, accuracy, calibrated in rows:
            if name in AUTO_HELD_OUT:
                assert label == "calib." and calibrated == "—"
                continue
            work = evaluated[name]
            assert label == ("suspect" if work["label"] == 1 else "clean")
            assert accuracy == f"{work['accuracy']:.3f}"
            assert calibrated == f"{work['accuracy_calibrated']:.3f}"
        assert [r[1] for r in rows[:3]] == ["suspect"] * 3  # suspect works first
        assert {r[0] for r in rows} == {*SUSPECT, *CLEAN}

        methods = _text(screen.query_one("#decop-methods").content)
        for key, label in (("perplexity", "Perplexity"), ("min_k_20", "Min-K%-Prob (k = 20%)")):
            figures = report["baselines"][key]
            line = next(x for x in methods.splitlines() if x.strip().startswith(label))
            assert f"{figures['auc']:.3f}" in line and f"{figures['auc_ci'][0]:.3f}" in line
        decop_line = next(x for x in methods.splitlines() if x.strip().startswith("DE-COP "))
        assert f"{report['auc']:.3f}" in decop_line
        calibrated_line = next(x for x in methods.splitlines() if "DE-COP calibrated" in x)
        assert f"{report['auc_calibrated']:.3f}" in calibrated_line

        bias = _text(screen.query_one("#decop-bias").content, width=43)  # as on screen
        shares = report["label_position_bias"]
        for i, letter in enumerate(ANSWER_LETTERS):
            line = next(x for x in bias.splitlines() if x.startswith(f"{letter} "))
            before, after = (f"{100 * s[i]:3.0f}%" for s in (shares["before"], shares["after"]))
            assert line.count("%") == 2 and before in line.split("%")[0] + "%"
            assert after in line.split("%", 1)[1]
        assert "fitted on A Map of Quiet Roads, The Glass Weather" in " ".join(bias.split())

        view = screen.view
        assert view.roc is not None and view.roc_calibrated is not None
        assert trapezoid_area(view.roc.fpr, view.roc.tpr) == pytest.approx(report["auc"])
        assert trapezoid_area(view.roc_calibrated.fpr, view.roc_calibrated.tpr) == pytest.approx(
            report["auc_calibrated"]
        )
        plot = _text(screen.query_one(RocPlot).render(), width=46)
        assert f"AUC {report['auc']:.3f}" in plot and "chance" in plot


def _stored(path: Path, case_id: str) -> dict:
    with Store(path) as store:
        run_id = store.scalar("SELECT id FROM runs WHERE name = ?", (RUN,))
        return next(r for r in decop_score_rows(store, run_id) if r["case_id"] == case_id)


async def test_passages_of_a_work_and_one_passage(built: Built, tmp_path: Path) -> None:
    path = _copy(built.model_db, tmp_path)
    delta = np.asarray(_report(path)["delta"])
    title = SUSPECT[1]
    app = CopyauditApp(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot)
        table = screen.query_one("#decop-works")
        row = next(i for i in range(table.row_count) if str(table.get_row_at(i)[0]) == title)
        table.move_cursor(row=row)
        await pilot.press("enter")
        await settle(pilot)
        passages = app.screen
        assert isinstance(passages, DecopPassageListScreen)
        listed = passages.query_one("#decop-passages")
        assert listed.row_count == len(built.works[title]) == 2
        case_ids = [str(listed.get_row_at(i)[0]) for i in range(2)]
        for i, case_id in enumerate(case_ids):
            stored = _stored(path, case_id)
            probs, answers = np.asarray(stored["probs"]), np.asarray(stored["answers"])
            accuracy = np.mean(probs.argmax(axis=1) == answers)
            calibrated = np.mean((probs + delta).argmax(axis=1) == answers)
            cells = [str(c) for c in listed.get_row_at(i)]
            assert cells[1] == f"{accuracy:.3f}" and cells[2] == f"{calibrated:.3f}"
            assert cells[3] == f"{probs[np.arange(24), answers].mean():.3f}"
            assert stored["title"] == title

        await pilot.press("down", "enter")
        await settle(pilot)
        detail = app.screen
        assert isinstance(detail, DecopPassageScreen)
        verbatim, paraphrases = built.works[title][1]
        options = str(detail.query_one("#decop-options-text").render())
        assert options.index(verbatim) < min(options.index(p) for p in paraphrases)
        assert "verbatim — the true option" in options
        stored = _stored(path, case_ids[1])
        passage = DecopPassage(verbatim, tuple(paraphrases), title, AUTHOR)
        orders = detail.query_one("#decop-orders")
        assert orders.row_count == 24
        for order, ((texts, answer), probs) in enumerate(
            zip(all_orders(verbatim, paraphrases), stored["probs"], strict=True)
        ):
            cells = [str(c) for c in orders.get_row_at(order)]
            tags = cells[1].split()
            assert tags[answer] == "V" and texts[answer] == verbatim
            prompt = passage.prompts()[order][0]  # the true letter read off the prompt text
            assert cells[2] == ANSWER_LETTERS[answer] == letter_of_verbatim(prompt, verbatim)
            shown = [float(c) for c in cells[3:7]]
            assert shown == pytest.approx(probs, abs=5e-4)
            assert sum(shown) == pytest.approx(1.0, abs=3e-3)
            chosen = ANSWER_LETTERS[int(np.argmax(probs))]
            assert cells[7].startswith(chosen) and cells[7].endswith(
                "✓" if chosen == cells[2] else "✗"
            )
            adjusted = np.asarray(probs) + delta
            assert [float(c) for c in cells[8:12]] == pytest.approx(adjusted, abs=5e-4)
            assert cells[12].startswith(ANSWER_LETTERS[int(np.argmax(adjusted))])
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is passages


async def test_launcher_starts_a_decop_run(built: Built, tmp_path: Path) -> None:
    path = _copy(built.empty_db, tmp_path)
    app = CopyauditApp(path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("s")  # new run
        await settle(pilot)
        launcher = app.screen
        assert isinstance(launcher, LauncherScreen)
        await pilot.press("enter", "down", "enter")  # the suite list: blank, bt (decop)
        launcher.query_one("#model").value = str(built.model_dir)
        launcher.query_one("#calibrate_on").value = "auto"
        launcher.query_one("#name").value = "from-app"
        launcher.query_one("#limit").value = "2"  # DE-COP: the first 2 passages of each work
        request = launcher.build_request()
        assert isinstance(request, DecopRequest) and request.calibrate_on == "auto"
        assert request.passages_per_work == 2
        launcher.query_one("#limit").value = ""
        assert launcher.build_request().passages_per_work is None
        launcher.query_one("#length").value = " small "  # BookTection's Length
        assert launcher.build_request().length == "small"
        launcher.query_one("#length").value = ""
        assert launcher.build_request().length is None
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: app.active_runs["from-app"].finished, timeout=120)
        run = app.active_runs["from-app"]
        assert run.state == "done", run.error
        assert run.outcome.scored == N_PASSAGES
    with Store(path) as store:
        assert store.scalar("SELECT status FROM runs WHERE name = 'from-app'") == "done"
        assert store.scalar("SELECT COUNT(*) FROM decop_scores") == N_PASSAGES
        report = decop_report(store, "from-app")
    assert [w["work"] for w in report["calibration"]["works"]] == AUTO_HELD_OUT


def test_decop_screen_snapshot(built: Built, tmp_path: Path, snap_compare) -> None:
    path = _copy(built.scripted_db, tmp_path)

    async def open_run(pilot) -> None:
        await _open(pilot)

    assert snap_compare(CopyauditApp(path), terminal_size=SIZE, run_before=open_run)

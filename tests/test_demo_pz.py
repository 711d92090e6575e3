"""The demo's memorisation map (copyaudit.engine.demo_pz): a sample work's token windows
imported and scored for p_z once, with a tiny model standing in for the embedded one;
`copyaudit demo` builds it unless --no-pz-map: inline with --no-tui, else as a run the
app starts in the background as it opens."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable

from copyaudit.engine import demo_pz
from copyaudit.engine.demo import DemoSummary, samples_dir
from copyaudit.engine.demo_library import sample_works
from copyaudit.engine.pz_run import GAP_JUDGE, PzOutcome
from copyaudit.models.hf_loading import load_causal_lm
from copyaudit.models.pz_scoring import PzScorer
from db import Store
from screens.app import CopyauditApp
from screens.pz.map_view import MemorisationMapScreen
from screens.runs.dashboard import DashboardScreen
from tests.conftest import database_fingerprint
from tests.process_cache import scratch_folder
from tests.test_screens_data import cell_texts, settle, wait_until
from tests.tinymodels import build_tiny_causal_lm, build_tokenizer

pytestmark = pytest.mark.slow  # make test-slow: runs a tiny model through the demo


@pytest.fixture(scope="module")
def tiny_model() -> Path:
    """A tiny model whose tokenizer knows the samples' words (the embedded one's stand-in)."""
    folder = scratch_folder("demo-pz")
    texts = [text for _, _, text in sample_works(samples_dir())]
    build_tiny_causal_lm(folder, build_tokenizer(texts, folder, vocab_size=2000))
    return folder


@pytest.fixture(scope="module")
def scorer(tiny_model: Path) -> PzScorer:
    return PzScorer(load_causal_lm(str(tiny_model), device="cpu", dtype="float32"), batch_size=64)


def test_the_demo_scores_every_window_of_the_work_once(tmp_path: Path, scorer: PzScorer) -> None:
    db = tmp_path / "demo.db"
    outcome = demo_pz.build_pz_demo(db, scorer=scorer)
    assert outcome is not None and outcome.status == "done", outcome and outcome.error
    ids = scorer.loaded.tokenizer(
        dict((t, x) for t, _, x in sample_works(samples_dir()))[demo_pz.WORK],
        add_special_tokens=False,
    )["input_ids"]
    size = demo_pz.PREFIX_TOKENS + demo_pz.CONTINUATION_TOKENS
    expected = (len(ids) - size) // demo_pz.STRIDE + 1
    assert outcome.scored == expected
    with Store(db) as store:
        payloads = [
            json.loads(r[0])["window"]
            for r in store.conn.execute(
                "SELECT c.payload FROM cases c JOIN suites s ON s.id = c.suite_id "
                "WHERE s.name = ? ORDER BY c.id",
                (demo_pz.SUITE,),
            )
        ]
        judges = {
            r[0]
            for r in store.conn.execute(
                "SELECT DISTINCT j.judge FROM judgments j JOIN generations g "
                "ON g.id = j.generation_id JOIN runs r ON r.id = g.run_id WHERE r.name = ?",
                (demo_pz.REQUEST.run_name(),),
            )
        }
    assert len(payloads) == expected
    assert [p["start_token"] for p in payloads[:3]] == [0, demo_pz.STRIDE, 2 * demo_pz.STRIDE]
    assert {(p["prefix_tokens"], p["continuation_tokens"], p["stride"]) for p in payloads} == {
        (demo_pz.PREFIX_TOKENS, demo_pz.CONTINUATION_TOKENS, demo_pz.STRIDE)
    }  # the cutting is recorded with every window
    assert judges == {"pz_greedy", "pz_top40_t1", GAP_JUDGE}  # greedy and a sampling scheme
    before = database_fingerprint(db)
    assert demo_pz.build_pz_demo(db, scorer=scorer) is None  # already done: nothing loaded
    assert database_fingerprint(db) == before


@pytest.mark.parametrize(("args", "built"), [((), True), (("--no-pz-map",), False)])
def test_the_demo_command_builds_the_map_unless_told_not_to(
    cli: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, args: tuple[str, ...], built: bool
) -> None:
    calls: list[Path] = []
    monkeypatch.setattr("copyaudit.cli.demo.build_demo", lambda store, **_: DemoSummary())
    monkeypatch.setattr(demo_pz, "build_pz_demo", lambda db, **_: calls.append(db))
    result = cli("demo", "--no-tui", *args, db=tmp_path / "demo.db")
    assert result.code == 0, result.err
    assert calls == ([tmp_path / "demo.db"] if built else [])
    assert ("memorisation map: already scored" in result.out) == built


@pytest.mark.parametrize("done", [False, True])
def test_the_demo_opening_the_app_hands_it_the_map_unless_complete(
    cli: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, done: bool
) -> None:
    """Nothing is scored before the app opens; a second demo (the run done) starts nothing."""
    handed: list[list[Any]] = []
    monkeypatch.setattr("copyaudit.cli.demo.build_demo", lambda store, **_: DemoSummary())
    monkeypatch.setattr(demo_pz, "build_pz_demo", lambda *_, **__: pytest.fail("scored inline"))
    monkeypatch.setattr(demo_pz, "is_done", lambda db, *_: done)
    monkeypatch.setattr(
        "copyaudit.cli.demo.open_app", lambda obj, start_runs: handed.append(list(start_runs))
    )
    result = cli("demo", db=tmp_path / "demo.db")
    assert result.code == 0, result.err
    assert handed == [[] if done else [demo_pz.DemoMapRequest()]]
    shown = "already scored" if done else f"run {demo_pz.REQUEST.run_name()} starts in the app"
    assert shown in result.out


@dataclass(frozen=True)
class GatedRequest:
    """The map's request, held until `gate` is set: the app is seen open before it runs."""

    inner: demo_pz.DemoMapRequest
    gate: threading.Event

    def run_name(self) -> str:
        return self.inner.run_name()

    def execute(self, db_path: Path, **options: Any) -> PzOutcome:
        assert self.gate.wait(30), "the test never opened the gate"
        return self.inner.execute(db_path, **options)


@pytest.mark.anyio
async def test_the_app_opens_at_once_and_scores_the_map_in_the_background(
    tmp_path: Path, tiny_model: Path
) -> None:
    db = tmp_path / "demo.db"
    gate = threading.Event()
    pz = replace(demo_pz.REQUEST, model=str(tiny_model))
    request = GatedRequest(demo_pz.DemoMapRequest(pz), gate)
    app = CopyauditApp(db, start_runs=[request])
    async with app.run_test(size=(140, 30)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen)  # open while the run waits
        run = app.active_runs[request.run_name()]
        table = app.screen.query_one("#runs", DataTable)
        await wait_until(pilot, lambda: table.row_count == 1)  # the dashboard loaded
        assert cell_texts(table, run.name)[3:5] == ["running", "starting"]  # not stored yet
        gate.set()
        await wait_until(pilot, lambda: run.finished, timeout=60)
        assert run.state == "done", run.error
        assert isinstance(run.outcome, PzOutcome) and run.outcome.scored > 300
        await settle(pilot)
        assert cell_texts(table, request.run_name())[3] == "done"
        await pilot.press("m")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, MemorisationMapScreen) and screen.data is not None
        cells = screen.data.maps["pz_greedy"][demo_pz.WORK]
        assert cells and all(value is not None for value in cells)  # every window scored
    assert demo_pz.is_done(db, pz)

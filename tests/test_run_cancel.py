"""Prompt cancel and live progress on a real (tiny) model: the worker stops within a
decoding step of the cancel, complete generations stay, the rest resumes; the keys that
cancel ask first and Esc never cancels.

Decoding steps are counted by wrapping the tiny model's forward; nothing is timed."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from typing import Any

import pytest

from copyaudit.engine import runner
from copyaudit.engine.runner import RunRequest, execute_run
from copyaudit.judges.options import JudgeOptions
from copyaudit.runs.progress import ProgressMeter
from db import Store
from screens.app import CopyauditApp
from screens.runs.dashboard import DashboardScreen
from screens.runs.run_dialogs import ChooseRunScreen, ConfirmCancelScreen
from tests.test_screens_data import cell_texts, settle, wait_until
from tests.test_screens_launcher import fake_execute_run

pytestmark = pytest.mark.anyio
SIZE = (120, 40)
CASES, BATCH = 6, 2


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.tinymodels import build_tiny_causal_lm, build_tokenizer

    directory = tmp_path_factory.mktemp("tiny")
    tokenizer = build_tokenizer(["a tiny corpus of tiny words"], directory)
    build_tiny_causal_lm(directory, tokenizer, max_position_embeddings=8192)  # long prompts
    return directory


DEMO_KINDS = ("literal",)  # the demo_db fixture's suites (conftest)


class ForwardCounter:
    """Wraps LlamaForCausalLM.forward: counts prefills (one per batch) and decoding
    steps, notes the forward calls begun after the cancel flag was set, and can hold the
    `hold_at`-th step of batch 2 until `release` is set."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, hold_at: int | None = None) -> None:
        from transformers import LlamaForCausalLM

        self.batches = self.steps_in_batch = 0
        self.after_cancel = 0
        self.cancel: threading.Event | None = None
        self.hold_at = hold_at
        self.holding, self.release = threading.Event(), threading.Event()
        real = LlamaForCausalLM.forward
        counter = self

        def forward(model: Any, *args: Any, **kwargs: Any) -> Any:
            counter.count(kwargs.get("input_ids", args[0] if args else None))
            return real(model, *args, **kwargs)

        monkeypatch.setattr(LlamaForCausalLM, "forward", forward)

    def count(self, input_ids: Any) -> None:
        if self.cancel is not None and self.cancel.is_set():
            self.after_cancel += 1
        prefill = input_ids is not None and input_ids.shape[1] > 1
        self.batches += prefill
        self.steps_in_batch = 1 if prefill else self.steps_in_batch + 1
        if self.batches == 2 and self.steps_in_batch == self.hold_at:
            self.holding.set()
            self.release.wait(timeout=120)


def _request(model: Path, name: str) -> RunRequest:
    return RunRequest(
        suite="literal", name=name, model=str(model), device="cpu", shots=0, limit=CASES,
        batch_size=BATCH, judging=JudgeOptions("literal"), max_new_tokens=24,
    )  # fmt: skip


def _generations(path: Path, run: str) -> list[tuple[int, int]]:
    with Store(path) as store:
        rows = store.query(
            "SELECT g.case_pk, COUNT(*) FROM generations g JOIN runs r ON r.id = g.run_id "
            "WHERE r.name = ? AND g.error IS NULL GROUP BY g.case_pk",
            (run,),
        )
    return [(row[0], row[1]) for row in rows]


def test_a_cancel_in_the_engine_stops_at_the_next_step(
    demo_db: Path, tiny_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Progress reports each decoding step (tokens/s, a moving percentage); a cancel
    set from that report ends the batch before another forward pass."""
    counter = ForwardCounter(monkeypatch)
    cancel = threading.Event()
    counter.cancel = cancel
    seen: list[Any] = []

    def on_progress(event: Any) -> None:
        seen.append(event)
        if counter.batches == 2 and counter.steps_in_batch == 3:
            cancel.set()

    request = _request(tiny_model, "c")
    outcome = execute_run(demo_db, request, on_progress=on_progress, cancel=cancel)
    assert outcome.status == "cancelled" and outcome.generated == BATCH
    assert counter.after_cancel == 0
    first_batch = [e for e in seen if e.phase == "generate" and e.done == 0 and e.tokens_per_s]
    assert first_batch and first_batch[-1].fraction > 0 and first_batch[-1].eta_s is not None
    assert "tok/s" in first_batch[-1].describe() and "ETA" in first_batch[-1].describe()
    resumed = execute_run(demo_db, _request(tiny_model, "c"))
    assert (resumed.status, resumed.generated) == ("done", CASES - BATCH)
    assert _generations(demo_db, "c") == [(pk, 1) for pk, _ in _generations(demo_db, "c")]
    assert len(_generations(demo_db, "c")) == CASES


def test_a_cancel_on_a_run_smaller_than_its_batch_keeps_the_finished_generation(
    demo_db: Path, tiny_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two cases, batch 8: the run is cut in batches of at most half of it, so the
    cancel drops only the generation in flight."""
    counter = ForwardCounter(monkeypatch)
    cancel = threading.Event()

    def on_progress(event: Any) -> None:
        if counter.batches == 2 and counter.steps_in_batch == 3:
            cancel.set()

    request = _request(tiny_model, "small")
    request = dataclasses.replace(request, limit=2, batch_size=8)
    outcome = execute_run(demo_db, request, on_progress=on_progress, cancel=cancel)
    assert (outcome.status, outcome.generated) == ("cancelled", 1)
    assert len(_generations(demo_db, "small")) == 1
    assert [runner.batch_step(8, n) for n in (1, 2, 5, 16, 100)] == [1, 1, 3, 8, 8]


async def test_x_cancels_the_running_run_within_a_step_of_the_confirmation(
    demo_db: Path, tiny_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run on the tiny model from the app; while batch 2 decodes: Esc (nothing), x,
    y. No decoding step begins after the cancel; batch 1 is stored, the rest resumes."""
    counter = ForwardCounter(monkeypatch, hold_at=3)
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        run = app.start_run(_request(tiny_model, "tiny-cancel"))
        counter.cancel = run.cancel
        await wait_until(pilot, counter.holding.is_set, timeout=240)
        await wait_until(pilot, lambda: run.progress is not None and run.progress.tokens_per_s)
        table = app.screen.query_one("#runs")
        await wait_until(pilot, lambda: "tok/s" in cell_texts(table, "tiny-cancel")[4])
        await pilot.press("escape")  # Esc is back, never cancel
        await pilot.pause()
        assert not run.cancel.is_set()
        await pilot.press("x")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmCancelScreen))
        assert not run.cancel.is_set()
        await pilot.press("y")
        await wait_until(pilot, run.cancel.is_set)
        counter.release.set()
        await wait_until(pilot, lambda: run.finished, timeout=120)
        assert run.state == "cancelled" and run.outcome.generated == BATCH
        assert counter.after_cancel == 0  # stopped before another decoding step
        await wait_until(pilot, lambda: cell_texts(table, "tiny-cancel")[3] == "cancelled")
    assert len(_generations(demo_db, "tiny-cancel")) == BATCH
    resumed = execute_run(demo_db, _request(tiny_model, "tiny-cancel"))
    assert (resumed.status, resumed.generated) == ("done", CASES - BATCH)


async def test_with_several_runs_x_asks_which(demo_db: Path, monkeypatch) -> None:
    monkeypatch.setattr(runner, "execute_run", fake_execute_run)
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        first = app.start_run(RunRequest(suite="literal", name="first"))
        second = app.start_run(RunRequest(suite="literal", name="second"))
        await wait_until(pilot, lambda: first.progress is not None and second.progress)
        assert isinstance(app.screen, DashboardScreen)
        await pilot.press("x")
        await wait_until(pilot, lambda: isinstance(app.screen, ChooseRunScreen))
        await pilot.press("escape")  # none
        await wait_until(pilot, lambda: isinstance(app.screen, DashboardScreen))
        assert not first.cancel.is_set() and not second.cancel.is_set()
        await pilot.press("x")
        await wait_until(pilot, lambda: isinstance(app.screen, ChooseRunScreen))
        await pilot.press("down", "enter")  # the second in the list
        await wait_until(pilot, lambda: second.finished)
        assert second.state == "cancelled" and not first.cancel.is_set()
        await pilot.press("x")  # one left: confirm that one
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmCancelScreen))
        assert app.screen.run_name == "first"
        await pilot.press("enter")
        await wait_until(pilot, lambda: first.finished)
        await pilot.press("x")  # nothing running: says so
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen)


def test_progress_counts_tokens_of_the_batch_in_flight() -> None:
    events: list[Any] = []
    meter = ProgressMeter("r", "generate", 10, 0, events.append)
    meter.start_batch(4, token_budget=50)
    for _ in range(25):
        meter.tokens(4)  # 25 steps of a batch of 4: half its budget
    live = events[-1]
    assert live.done == 0 and live.partial == pytest.approx(2.0)
    assert live.fraction == pytest.approx(0.2) and live.tokens_per_s and live.eta_s is not None
    meter.advance(4)  # the batch ended after 25 steps: 25 tokens an item from now on
    meter.start_batch(4)
    meter.tokens(4)
    assert events[-1].partial == pytest.approx(4 / 25)


def test_cancel_confirmation_snapshot(demo_db: Path, snap_compare) -> None:
    async def ask(pilot: Any) -> None:
        await settle(pilot)
        pilot.app.push_screen(ConfirmCancelScreen("literal-default-none"))
        await settle(pilot)

    assert snap_compare(CopyauditApp(demo_db), terminal_size=SIZE, run_before=ask)


async def test_a_run_held_by_another_process_is_not_started(demo_db: Path, monkeypatch) -> None:
    from db.run_owner import acquire, release

    monkeypatch.setattr(runner, "execute_run", fake_execute_run)
    with Store(demo_db) as store:
        holder = acquire(store, "held", "run")
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        assert app.start_run(RunRequest(suite="literal", name="held")) is None
        await wait_until(pilot, lambda: len(app.screen.query("Toast")) > 0)
        toasts = " ".join(str(toast.render()) for toast in app.screen.query("Toast"))
        assert "already being run by pid" in toasts and "held" in toasts
        assert "held" not in app.active_runs
    with Store(demo_db) as store:
        release(store, holder)

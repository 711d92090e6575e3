"""The run lifecycle every study shares (copyaudit.runs.lifecycle): how a run's end is
stored, the user's interrupt as a cancel, and one end-of-run line whatever the study."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest

from copyaudit.engine.runner import GenerationOutcome, RunRequest, execute_run
from copyaudit.judges.options import JudgeOptions
from copyaudit.models.base import GenerationResult
from copyaudit.runs.lifecycle import RunOutcome, start_run, tracked
from copyaudit.studies.decop.run import DecopOutcome
from db import Store
from db.runs import RunSpec
from tests.conftest import write_jsonl


def _suite(cli, tmp_path: Path, cases: int = 4) -> None:
    records = [
        {"id": f"c{i}", "title": "T", "input": f"case {i}", "reference": f"text {i}"}
        for i in range(cases)
    ]
    path = write_jsonl(tmp_path / "cases.jsonl", records)
    assert cli("import", "literal", str(path), "--suite", "s").code == 0


def _stored(db_path: Path, name: str) -> tuple[str, str | None]:
    with Store(db_path) as store:
        row = store.conn.execute("SELECT status, error FROM runs WHERE name = ?", (name,))
        status, error = row.fetchone()
    return status, error


class InterruptedGenerator:
    """Answers the first `answered` batches, then the user presses Ctrl-C (None: never)."""

    def __init__(self, answered: int | None = 1) -> None:
        self.batches = 0
        self.answered = answered

    def generate(self, requests: Sequence[Any], *_: Any) -> list[GenerationResult]:
        self.batches += 1
        if self.answered is not None and self.batches > self.answered:
            raise KeyboardInterrupt
        return [GenerationResult("an answer", 2, 0.1) for _ in requests]

    def provenance(self) -> dict[str, Any]:
        return {"model": "scripted"}


def test_ctrl_c_in_a_generation_run_stores_it_cancelled_and_it_resumes(
    cli, db_path: Path, tmp_path: Path
) -> None:
    """The same rule as DE-COP: the user's interrupt cancels (it used to mark a
    generation run failed); the batch answered stays stored."""
    _suite(cli, tmp_path)
    request = RunRequest(suite="s", name="r", batch_size=2, judging=JudgeOptions(judges="literal"))
    with pytest.raises(KeyboardInterrupt):
        execute_run(db_path, request, generator=InterruptedGenerator())
    assert _stored(db_path, "r") == ("cancelled", None)
    resumed = execute_run(db_path, request, generator=InterruptedGenerator(answered=None))
    assert (resumed.status, resumed.generated, resumed.kind) == ("done", 2, "literal")
    assert _stored(db_path, "r") == ("done", None)


@pytest.mark.parametrize(
    ("action", "status", "error"),
    [
        ("finish", "done", None),
        ("cancel", "cancelled", None),
        ("report failure", "failed", "2 passage(s) could not be scored"),
        ("raise", "failed", "RuntimeError: disk full"),
        ("interrupt", "cancelled", None),
    ],
)
def test_tracked_stores_how_the_work_ended(
    cli, db_path: Path, tmp_path: Path, action: str, status: str, error: str | None
) -> None:
    _suite(cli, tmp_path)
    cancel = threading.Event()
    outcome = RunOutcome(run="r", kind="literal")
    with Store(db_path) as store:
        run_id = start_run(store, RunSpec("r", "s", "hf", "m"))
        assert _stored(db_path, "r") == ("running", None)
        raising = action in ("raise", "interrupt")
        expected = pytest.raises((RuntimeError, KeyboardInterrupt)) if raising else nullcontext()
        with expected, tracked(store, run_id, outcome, cancel):
            if action == "cancel":
                cancel.set()
            elif action == "report failure":
                outcome.status, outcome.error = "failed", "2 passage(s) could not be scored"
            elif action == "raise":
                raise RuntimeError("disk full")
            elif action == "interrupt":
                raise KeyboardInterrupt
    assert outcome.status == status
    assert _stored(db_path, "r") == (status, error)


def test_the_end_of_run_line_is_the_outcomes_whatever_the_study() -> None:
    generation = GenerationOutcome(
        run="g", kind="notice", status="done", generated=3, judged=12,
        skipped_judges=[("events", "needs --event-model"), ("fluency", "no judge model")],
    )  # fmt: skip
    decop = DecopOutcome(run="d", kind="decop", status="cancelled", scored=5)
    assert generation.summary() == (
        "run g: done; 3 generated, 0 failed, 12 scores; skipped judges: events, fluency"
    )
    assert decop.summary() == "run d: cancelled; 5 passages scored"
    assert RunOutcome(run="x", kind="qa", status="failed").summary() == "run x: failed"

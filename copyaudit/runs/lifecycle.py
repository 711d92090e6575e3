"""One lifecycle for every run, whatever its study. The generation runner
(copyaudit.engine.runner) and DE-COP (copyaudit.studies.decop.run) both

1. hold the run for the call (db.run_owner: one process per run; a run whose process
   died shows as interrupted) and look up its suite: `open_run`;
2. refuse a configuration conflict before the model loads (copyaudit.runs.launch_plan) and
   load the model (copyaudit.runs.loading: a failure is stored on a run that exists
   already);
3. create the run, or resume it when its configuration hash is the same, and mark it
   running: `start_run`;
4. do the study's work inside `tracked`, which stores how it ended: cancelled when the
   cancel flag is set or the user interrupts (Ctrl-C), failed with the error when the
   work raises or reports a failure (status "failed" on the outcome), else done.

Every run returns a RunOutcome (the run's name, the study's kind, the status, the
figures to show, the error), so that the App and the CLI report any run without
knowing its study.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from copyaudit import __version__
from copyaudit.generation_keys import check_run_name
from copyaudit.runs.progress import ProgressCallback
from db import Store
from db.run_owner import owned
from db.runs import (
    RunSpec,
    create_or_resume_run,
    set_run_status,
    suite_id,
    suite_kind,
)

FINISHED = ("done", "cancelled", "failed")


@dataclass
class RunOutcome:
    """How a call that ran a run ended. Each study adds its figures (counts, notes)."""

    run: str
    kind: str  # the suite's kind: the study (literal | qa | nonliteral | notice | decop)
    status: str = "running"  # done | cancelled | failed once the call returns
    error: str | None = None

    def counts(self) -> dict[str, int]:
        """The figures shown when the run ends, label -> value, in order."""
        return {}

    def notes(self) -> list[str]:
        """What else the end-of-run line says (judges skipped, say)."""
        return []

    def shown_status(self) -> str:
        """The status as people read it (a study may qualify 'done')."""
        return self.status

    def summary(self) -> str:
        """'run NAME: done; 3 generated, 0 failed, 12 scores; skipped judges: events'."""
        figures = ", ".join(f"{value} {label}" for label, value in self.counts().items())
        parts = [f"run {self.run}: {self.shown_status()}", figures, *self.notes()]
        return "; ".join(part for part in parts if part)


class RunnableRequest(Protocol):
    """A run request of any study: it names its run and runs it (what the App starts)."""

    def run_name(self) -> str: ...

    def execute(
        self,
        db_path: Path,
        *,
        on_progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> RunOutcome: ...


def code_version() -> str:
    """The package version, plus the git commit (and '+dirty') when run from a checkout."""
    root = Path(__file__).resolve().parent.parent.parent
    version = f"copyaudit {__version__}"
    if not (root / ".git").exists():
        return version
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return version
    return f"{version} ({commit.stdout.strip()})"


@contextmanager
def open_run(
    db_path: Path, name: str, suite: str, purpose: str
) -> Iterator[tuple[Store, int, str]]:
    """The database with run `name` held by this process for the block (`purpose`: run |
    decop, shown while it runs; RunBusyError if another process holds it), and the
    suite's (id, kind). A run name with '/' is refused first."""
    check_run_name(name)
    with Store(db_path) as store, owned(store, name, purpose):
        sid = suite_id(store, suite)
        kind = suite_kind(store, sid)
        assert kind is not None  # suite_id found it
        yield store, sid, kind


def start_run(store: Store, spec: RunSpec) -> int:
    """Create the run, or resume it when its configuration hash is the same (UserError
    otherwise), and mark it running. Returns its id."""
    run_id = create_or_resume_run(store, spec)
    set_run_status(store, run_id, "running")
    return run_id


@contextmanager
def tracked(
    store: Store, run_id: int, outcome: RunOutcome, cancel: threading.Event
) -> Iterator[RunOutcome]:
    """The run's work: on leaving, store (and set on `outcome`) how it ended — cancelled
    when `cancel` is set or on KeyboardInterrupt, failed when the block raises (the
    error stored) or set outcome.status to "failed", else done."""
    outcome.status = "running"
    try:
        yield outcome
    except KeyboardInterrupt:  # the user's interrupt cancels, as the cancel flag does
        _end(store, run_id, outcome, "cancelled", None)
        raise
    except BaseException as exc:
        outcome.error = f"{type(exc).__name__}: {exc}"
        _end(store, run_id, outcome, "failed", outcome.error)
        raise
    ended = "failed" if outcome.status == "failed" else "done"
    _end(store, run_id, outcome, "cancelled" if cancel.is_set() else ended, outcome.error)


def _end(store: Store, run_id: int, outcome: RunOutcome, status: str, error: str | None) -> None:
    outcome.status = status
    set_run_status(store, run_id, status, error)

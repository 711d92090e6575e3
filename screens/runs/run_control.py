"""Runs started from the app: their cancel events and latest progress.

The run itself executes in a thread worker owned by the App (so it survives leaving the
launcher); the worker only posts RunProgressed messages, the App updates this registry
on its own thread and publishes the change to the screens that subscribed.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from textual.message import Message

from copyaudit.runs.lifecycle import FINISHED, RunOutcome
from copyaudit.runs.progress import Progress


@dataclass
class ActiveRun:
    name: str
    cancel: threading.Event = field(default_factory=threading.Event)
    progress: Progress | None = None
    state: str = "running"  # running | cancelling | done | cancelled | failed
    outcome: RunOutcome | None = None  # once finished, whatever the study
    error: str | None = None

    @property
    def finished(self) -> bool:
        return self.state in FINISHED

    def describe(self) -> str:
        """The live progress line: Progress.describe(), or the state once finished."""
        if self.finished:
            return self.state
        if self.progress is None:
            return "starting"
        text = self.progress.describe()
        if self.state == "cancelling":
            text += " · cancelling"
        return text


class RunProgressed(Message):
    """Posted from a run's worker thread for every progress report."""

    def __init__(self, name: str, progress: Progress) -> None:
        super().__init__()
        self.name = name
        self.progress = progress

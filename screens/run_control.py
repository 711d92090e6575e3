"""Runs started from the app: their cancel events and latest progress.

The run itself executes in a thread worker owned by the App (so it survives leaving the
launcher); the worker only posts RunProgressed messages, the App updates this registry
on its own thread and publishes the change to the screens that subscribed.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from textual.message import Message

from copyaudit.progress import Progress


@dataclass
class ActiveRun:
    name: str
    cancel: threading.Event = field(default_factory=threading.Event)
    progress: Progress | None = None
    state: str = "running"  # running | cancelling | done | cancelled | failed
    outcome: Any = None  # copyaudit.runner.RunOutcome once finished
    error: str | None = None

    @property
    def finished(self) -> bool:
        return self.state in ("done", "cancelled", "failed")

    def describe(self) -> str:
        """'generate 12/40 (30%) · 3.1/s · ETA 9 s' — the live progress line."""
        if self.finished:
            return self.state
        p = self.progress
        if p is None:
            return "starting"
        if p.total == 0:
            text = f"{p.phase}"
        else:
            text = f"{p.phase} {p.done}/{p.total} ({100 * p.fraction:.0f}%)"
        if p.total and p.rate > 0:
            text += f" · {p.rate:.1f}/s"
        if p.eta_s is not None and p.done < p.total:
            text += f" · ETA {format_seconds(p.eta_s)}"
        if self.state == "cancelling":
            text += " · cancelling"
        return text


def format_seconds(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


class RunProgressed(Message):
    """Posted from a run's worker thread for every progress report."""

    def __init__(self, name: str, progress: Progress) -> None:
        super().__init__()
        self.name = name
        self.progress = progress

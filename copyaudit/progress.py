"""Progress events a run reports, and the rate/ETA arithmetic behind them."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Progress:
    """One progress report. `phase` is 'generate' or 'judge'; `eta_s` is None until
    there is a rate to extrapolate from."""

    run: str
    phase: str
    done: int
    total: int
    rate: float  # items per second in this phase so far
    eta_s: float | None
    message: str = ""

    @property
    def fraction(self) -> float:
        return 1.0 if self.total == 0 else self.done / self.total

    def describe(self, label: str | None = None) -> str:
        """'generate 12/40 (30%) · 3.10/s · ETA 9 s' — one line for a person; `label`
        replaces the phase's name."""
        if self.total == 0:
            return self.message or self.phase
        text = f"{label or self.phase} {self.done}/{self.total} ({100 * self.fraction:.0f}%)"
        if self.rate > 0:
            text += f" · {self.rate:.1f}/s" if self.rate >= 10 else f" · {self.rate:.2f}/s"
        if self.eta_s is not None and self.done < self.total:
            text += f" · ETA {format_seconds(self.eta_s)}"
        return text


ProgressCallback = Callable[[Progress], None]


def format_seconds(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


class ProgressMeter:
    """Turns 'n more items done' into Progress events with rate and ETA."""

    def __init__(
        self,
        run: str,
        phase: str,
        total: int,
        already_done: int = 0,
        callback: ProgressCallback | None = None,
    ) -> None:
        self.run = run
        self.phase = phase
        self.total = total
        self.done = already_done
        self._start_done = already_done
        self._start = time.monotonic()
        self._callback = callback

    def advance(self, n: int, message: str = "") -> Progress:
        self.done += n
        elapsed = max(time.monotonic() - self._start, 1e-9)
        rate = (self.done - self._start_done) / elapsed
        remaining = self.total - self.done
        eta = remaining / rate if rate > 0 else None
        event = Progress(self.run, self.phase, self.done, self.total, rate, eta, message)
        if self._callback is not None:
            self._callback(event)
        return event


def announce(callback: ProgressCallback | None, run: str, phase: str, message: str) -> None:
    """Report a phase with no items to count yet (loading a model, say)."""
    if callback is not None:
        ProgressMeter(run, phase, 0, 0, callback).advance(0, message)

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
    tokens_per_s: float | None = None  # tokens decoded per second (generation only)
    partial: float = 0.0  # estimated items' worth of the batch in flight (from its tokens)

    @property
    def fraction(self) -> float:
        return 1.0 if self.total == 0 else min(1.0, (self.done + self.partial) / self.total)

    def describe(self, label: str | None = None) -> str:
        """'generate 12/40 (31%) · 3.10/s · 41.5 tok/s · ETA 9 s' — one line for a person;
        `label` replaces the phase's name. The percentage counts the batch in flight by
        its tokens, so it moves during the first batch."""
        if self.total == 0:
            return self.message or self.phase
        text = f"{label or self.phase} {self.done}/{self.total} ({100 * self.fraction:.0f}%)"
        figures = self.figures()
        return f"{text} · {figures}" if figures else text

    def figures(self) -> str:
        """'3.10/s · 41.5 tok/s · ETA 9 s': the rates and the ETA known so far."""
        parts = []
        if self.rate > 0:
            parts.append(f"{self.rate:.1f}/s" if self.rate >= 10 else f"{self.rate:.2f}/s")
        if self.tokens_per_s:
            parts.append(f"{self.tokens_per_s:.1f} tok/s")
        if self.eta_s is not None and self.done < self.total:
            parts.append(f"ETA {format_seconds(self.eta_s)}")
        return " · ".join(parts)


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
    """Turns 'n more items done' (and, while a batch decodes, 'n more tokens') into
    Progress events with rate and ETA.

    With tokens, the ETA is the tokens still to decode / tokens per second: each item
    left is expected to take the tokens per item measured so far (the token budget,
    the most a request may generate, before the first batch ends) and the batch in
    flight counts what it has decoded (see start_batch)."""

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
        self._budget: float | None = None
        self._tokens_done = 0  # tokens of the batches finished in this session
        self._in_flight = 0  # tokens of the batch decoding now
        self._batch = 0  # items in that batch

    def start_batch(self, items: int, token_budget: float | None = None) -> None:
        """A batch of `items` starts decoding; `token_budget`: the most tokens one of
        them may decode (the estimate until a batch has finished)."""
        self._batch, self._in_flight = items, 0
        if token_budget:
            self._budget = token_budget

    def tokens(self, n: int) -> Progress:
        """`n` more tokens decoded in the batch in flight."""
        self._in_flight += n
        return self._emit("")

    def advance(self, n: int, message: str = "") -> Progress:
        self.done += n
        self._tokens_done += self._in_flight
        self._in_flight = self._batch = 0
        return self._emit(message)

    def _emit(self, message: str) -> Progress:
        elapsed = max(time.monotonic() - self._start, 1e-9)
        rate = (self.done - self._start_done) / elapsed
        remaining = self.total - self.done
        eta = remaining / rate if rate > 0 else None
        decoded = self._tokens_done + self._in_flight
        token_rate = decoded / elapsed if decoded else None
        partial = 0.0
        per_item = self._tokens_per_item()
        if token_rate and per_item:
            partial = min(self._batch * 0.99, self._in_flight / per_item)
            eta = max(0.0, remaining * per_item - self._in_flight) / token_rate
        event = Progress(
            self.run, self.phase, self.done, self.total, rate, eta, message, token_rate, partial
        )
        if self._callback is not None:
            self._callback(event)
        return event

    def _tokens_per_item(self) -> float | None:
        finished = self.done - self._start_done
        if finished and self._tokens_done:
            return self._tokens_done / finished
        return self._budget


def announce(callback: ProgressCallback | None, run: str, phase: str, message: str) -> None:
    """Report a phase with no items to count yet (loading a model, say)."""
    if callback is not None:
        ProgressMeter(run, phase, 0, 0, callback).advance(0, message)

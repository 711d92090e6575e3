"""The new-queue form (screens.review.queue_create) read into db.queues.create_queue's
arguments, with one message per wrong field (shown under that field) before anything is
written. The designs, their limits and what they mean come from db.queue_designs."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from copyaudit.records import MAX_INT
from db.connection import Store
from db.queue_designs import (
    DESIGNS,
    MAX_PER_VALUE,
    MAX_SIZE,
    MIN_BIN_WIDTH,
    NOT_FOR_ESTIMATES,
)
from db.queues import QueueSummary, create_queue

DEFAULT_DESIGN = "random"  # valid for the people-level estimates
# what the size field counts, per design
SIZE_LABELS: dict[str, str] = {
    "random": "Size (generations drawn)",
    "stratified": "Size (split over the strata)",
    "per-value": "Per value (drawn per value)",
}
DESIGN_NOTES: dict[str, str] = {
    "random": "random: every generation of the run equally likely; valid for estimates",
    "stratified": "stratified: the size split equally over the target judge's verdicts (or "
    "its value's bins), weighted back; valid for estimates",
    "per-value": f"per-value: judge quality over every level of the target; {NOT_FOR_ESTIMATES}",
}
DEFAULT_SIZE = {"random": "50", "stratified": "50", "per-value": "10"}

Target = tuple[str, str]  # (metric, judge)


def run_targets(judges: Iterable[Mapping[str, Any]]) -> list[Target]:
    """(metric, judge) of every metric a judge gave on the run, from db.case_file.run_judges
    (a judge judged under two configurations is named once)."""
    return sorted({(metric, j["judge"]) for j in judges for metric in j["metrics"] if metric})


@dataclass(frozen=True)
class QueueRequest:
    name: str
    run: str
    design: str
    target: Target | None  # None: random
    size: int  # generations drawn (random, stratified) or per value (per-value)
    seed: int
    bin_width: float | None

    def create(self, store: Store) -> QueueSummary:
        """Draw and store the queue (db.queues.create_queue; a UserError says why not)."""
        drawn: dict[str, Any] = (
            {"per_value": self.size} if self.design == "per-value" else {"size": self.size}
        )
        if self.target is not None:
            drawn["metric"], drawn["judge"] = self.target
        return create_queue(
            store,
            self.name,
            run=self.run,
            design=self.design,
            seed=self.seed,
            bin_width=self.bin_width,
            **drawn,
        )


def _whole(text: str, low: int, high: int) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise ValueError(f"a whole number from {low} to {high:,}") from None
    if not low <= value <= high:
        raise ValueError(f"from {low} to {high:,} (got {value:,})")
    return value


def _bin_width(text: str) -> float | None:
    if not text.strip():
        return None
    try:
        value = float(text)
    except ValueError:
        raise ValueError("a number such as 0.1, or empty for no bins") from None
    if not math.isfinite(value) or value < MIN_BIN_WIDTH:
        raise ValueError(f"a number of at least {MIN_BIN_WIDTH:g}, or empty for no bins")
    return value


def read_form(
    values: Mapping[str, Any], targets: Iterable[Target]
) -> tuple[QueueRequest | None, dict[str, str]]:
    """The request from the fields' values (name, run, design, target, size, seed,
    bin_width; a Select without a choice gives None), or None and field -> message."""
    targets = list(targets)
    errors: dict[str, str] = {}
    name = " ".join(str(values.get("name") or "").split())
    if not name:
        errors["name"] = "a name is required"
    run = values.get("run")
    if not run:
        errors["run"] = "choose a run"
    design = values.get("design")
    if design not in DESIGNS:
        errors["design"] = f"one of {', '.join(DESIGNS)}"
    target = values.get("target") if design != "random" else None
    if design != "random" and run and target not in targets:
        errors["target"] = (
            "this run has no judged metric to draw by: judge it first, or use the random design"
            if not targets
            else "choose the judge metric to draw by"
        )
    high = MAX_PER_VALUE if design == "per-value" else MAX_SIZE
    parsed: dict[str, Any] = {}
    readers = {
        "size": lambda text: _whole(text, 1, high),
        "seed": lambda text: _whole(text, 0, MAX_INT),
        "bin_width": _bin_width,
    }
    for field, reader in readers.items():
        try:
            parsed[field] = reader(str(values.get(field) or ""))
        except ValueError as error:
            errors[field] = str(error)
    if design == "random" and parsed.get("bin_width") is not None:
        errors["bin_width"] = "a random draw has no bins: leave it empty"
    if errors:
        return None, errors
    request = QueueRequest(
        name, str(run), str(design), target, parsed["size"], parsed["seed"], parsed["bin_width"]
    )
    return request, {}

"""Sampling designs of a work queue with known inclusion probabilities (for estimates).

- random: `size` generations of the run drawn uniformly without replacement; every
  generation's inclusion probability is size / N (N: the run's generations).
- stratified: the run's generations grouped by a judge metric (its flagged verdict:
  stratum 1 flagged, 0 not flagged; with a bin width, its value's bin) and generations
  without a verdict (or value) in stratum NO_VERDICT, so every generation can be drawn;
  `size` is split equally over the strata (a stratum smaller than its share gives the
  rest to the others), and a generation of stratum h is drawn with probability
  n_h / N_h. Equal allocation draws the rare stratum (often the flagged one) more often
  than its share, which narrows the interval of a rare rate.

Both draws use `random.Random(seed)` over keys sorted, so a seed on the same run draws
the same sample, and the order drawn is the order shown (a random order).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from copyaudit.errors import UserError

DESIGNS: tuple[str, ...] = ("per-value", "random", "stratified")
ESTIMATE_DESIGNS: frozenset[str] = frozenset({"random", "stratified"})  # known probabilities
NO_VERDICT = -1.0  # the stratum of generations the stratifying judge gave no verdict on
MAX_PER_VALUE = 1_000_000  # generations drawn per metric value: a queue people label
MAX_SIZE = 1_000_000  # generations drawn by a random or stratified design
# a narrower bin gives every value its own stratum anyway; far narrower ones overflow
MIN_BIN_WIDTH = 1e-6
NOT_FOR_ESTIMATES = "not valid for estimates: drawn per value, not with known probabilities"


@dataclass(frozen=True)
class Drawn:
    key: str  # generation key
    stratum: float
    inclusion_prob: float | None  # None: per-value (not a design over the whole run)


def check_size(size: int | None) -> int:
    if size is None:
        raise UserError("--size is required for --design random and --design stratified")
    if size < 1:
        raise UserError(f"--size must be at least 1 (got {size})")
    return size


def random_sample(keys: list[str], size: int, seed: int) -> list[Drawn]:
    """min(size, N) of the keys, uniformly without replacement, in the order drawn."""
    size = check_size(size)
    frame = sorted(keys)
    chosen = random.Random(seed).sample(frame, min(size, len(frame)))
    prob = len(chosen) / len(frame) if frame else 0.0
    return [Drawn(key, 0.0, prob) for key in chosen]


def equal_allocation(sizes: Mapping[float, int], size: int) -> dict[float, int]:
    """`size` split as equally as the strata's sizes allow (strata in sorted order take
    the remainder one each; a full stratum passes its share on)."""
    alloc = dict.fromkeys(sizes, 0)
    remaining = min(size, sum(sizes.values()))
    while remaining > 0:
        room = [h for h in sorted(sizes) if alloc[h] < sizes[h]]
        share, extra = divmod(remaining, len(room))
        for i, h in enumerate(room):
            add = min(share + (i < extra), sizes[h] - alloc[h])
            alloc[h] += add
            remaining -= add
    return alloc


def stratified_design(strata_of: Mapping[str, float], size: int, seed: int) -> list[Drawn]:
    """Equal allocation over the strata of `strata_of` (key -> stratum), each stratum
    drawn uniformly; returns the sample shuffled with its inclusion probabilities."""
    size = check_size(size)
    members: dict[float, list[str]] = defaultdict(list)
    for key in sorted(strata_of):
        members[strata_of[key]].append(key)
    alloc = equal_allocation({h: len(keys) for h, keys in members.items()}, size)
    rng = random.Random(seed)
    chosen: list[Drawn] = []
    for h in sorted(members):
        prob = alloc[h] / len(members[h])
        chosen.extend(Drawn(key, h, prob) for key in rng.sample(members[h], alloc[h]))
    rng.shuffle(chosen)
    return chosen

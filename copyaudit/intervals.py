"""95% intervals of a run's figures, shared by the comparison tables and any layer above
the foundation: the Wilson score interval of a rate (a share of flagged verdicts) and
the normal-approximation interval of a mean. A foundation module: the standard library only."""

from __future__ import annotations

import math
from collections.abc import Sequence

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval of `successes` out of `n`; None for n = 0. Unlike the
    normal interval it stays inside [0, 1] and is not empty at 0% or 100%, where
    copying rates often are."""
    if n <= 0:
        return None
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_interval(values: Sequence[float], z: float = Z95) -> tuple[float, float] | None:
    """mean ± z·s/√n (s: the sample standard deviation); None below two values."""
    n = len(values)
    if n < 2:
        return None
    mean = math.fsum(values) / n
    variance = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    half = z * math.sqrt(variance / n)
    return mean - half, mean + half


def interval(values: Sequence[float], rate: bool, unit: bool = False) -> tuple[float, float] | None:
    """The interval of a rate (values are 0/1 verdicts) or of a mean; `unit`: the
    values are scores in [0, 1], and so is the interval."""
    if rate:
        return wilson(sum(1 for v in values if v), len(values))
    bounds = mean_interval(values)
    if bounds is None or not unit:
        return bounds
    return max(0.0, bounds[0]), min(1.0, bounds[1])

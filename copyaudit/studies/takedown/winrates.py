"""Win rates of takedown methods, exactly as CoTaEval computes them
(boyiwei/CoTaEval winrate_compute.py: `compute_win_rate`, `win_rate_memorization`).

For each example and metric, a method's win rate is the share of the *other* methods
whose value is strictly worse than its own — larger, for a metric where lower means less
copying; smaller, for Levenshtein distance, where higher does — so ties win nothing:
wins / (methods - 1). A method's win rate on a metric is the mean over the examples;
its average is the sum over metrics and examples over (metrics x examples), which is the
mean of its per-metric win rates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

Example = Mapping[str, Mapping[str, float]]  # method -> metric -> value, one example


@dataclass(frozen=True)
class WinRates:
    per_metric: dict[str, dict[str, float]]  # method -> metric -> win rate
    average: dict[str, float]  # method -> mean over metrics and examples
    examples: int


def example_win_rates(values: Mapping[str, float], higher_is_better: bool) -> dict[str, float]:
    """One example, one metric: method -> wins / (methods - 1)."""
    others = len(values) - 1
    if others < 1:
        raise ValueError("win rates compare at least two methods")
    return {
        method: sum(
            (value > other) if higher_is_better else (value < other) for other in values.values()
        )
        / others
        for method, value in values.items()
    }


def win_rates(
    examples: Sequence[Example], metrics: Sequence[str], higher_is_better: frozenset[str]
) -> WinRates:
    """Win rates of each method over `examples` (each with every method and metric)."""
    if not examples:
        raise ValueError("win rates need at least one example")
    methods = list(examples[0])
    totals = {method: dict.fromkeys(metrics, 0.0) for method in methods}
    for example in examples:
        for metric in metrics:
            values = {method: example[method][metric] for method in methods}
            for method, rate in example_win_rates(values, metric in higher_is_better).items():
                totals[method][metric] += rate
    n = len(examples)
    per_metric = {m: {k: v / n for k, v in rates.items()} for m, rates in totals.items()}
    average = {m: sum(totals[m].values()) / (len(metrics) * n) for m in methods}
    return WinRates(per_metric, average, n)

"""A run's scores as counts: per metric (and per prompt template) how many judgments, how
many with a value and their sum, how many with a verdict and how many flagged, and the
values per histogram bin. Read from the totals the database keeps (a few rows at any
size), or counted from judgment rows (the same figures; tests hold the two equal)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from copyaudit.judges.metric_facts import fraction_metrics
from db.fraction_metrics import binned_metrics
from db.run_totals import judgment_tallies, metric_values, value_counts

if TYPE_CHECKING:
    from db.connection import Store

FRACTION_EDGES = np.linspace(0.0, 1.0, 11)  # ten bins over [0, 1]


@dataclass
class Tally:
    """Judgments of one metric (in one template): counted, summed and flagged."""

    judged: int = 0
    valued: int = 0
    value_sum: float = 0.0
    verdicts: int = 0
    flagged: int = 0

    def add(self, value: float | None, flagged: bool | int | None) -> None:
        self.judged += 1
        if value is not None:
            self.valued += 1
            self.value_sum += float(value)
        if flagged is not None:
            self.verdicts += 1
            self.flagged += int(flagged)

    def merge(self, other: Tally) -> None:
        self.judged += other.judged
        self.valued += other.valued
        self.value_sum += other.value_sum
        self.verdicts += other.verdicts
        self.flagged += other.flagged

    @property
    def mean(self) -> float | None:
        return self.value_sum / self.valued if self.valued else None

    @property
    def rate(self) -> float | None:
        """The share of verdicts that are flagged."""
        return self.flagged / self.verdicts if self.verdicts else None

    def figure(self, summary: str) -> float | None:
        """The headline figure: the flagged share ("flagged") or the mean of the values."""
        return self.rate if summary == "flagged" else self.mean


def value_bin(metric: str, value: float) -> float:
    """The key a value is counted under: a fraction metric's histogram bin (0-9, as
    numpy.histogram bins it; -1 outside [0, 1]), any other metric's value itself
    (db.migrations.value_bin_sql computes the same in the database)."""
    if metric not in fraction_metrics():
        return float(value)
    if value < 0 or value > 1:
        return -1.0
    return float(sum(value >= edge for edge in FRACTION_EDGES[1:-1]))


@dataclass
class MetricScores:
    """One metric of a run: its tally, per template, its values per bin and a way to read
    every value (only a median or max of a binned metric needs them)."""

    metric: str
    total: Tally = field(default_factory=Tally)
    by_template: dict[int, Tally] = field(default_factory=dict)
    bins: dict[float, int] = field(default_factory=dict)
    read_values: Callable[[], Sequence[float]] = list

    @property
    def binned(self) -> bool:
        """Counted per histogram bin (a fraction), not per value."""
        return self.metric in fraction_metrics()

    def histogram(self) -> dict[str, list[float] | list[int]]:
        """Ten bins over [0, 1] for unit scores; one bin per integer for counts and
        ratings (twenty over [0, max] from a max of 40)."""
        if self.binned:
            edges = FRACTION_EDGES
            counts = np.array([self.bins.get(float(b), 0) for b in range(10)])
        else:
            keys = np.fromiter(self.bins.keys(), dtype=float, count=len(self.bins))
            weights = np.fromiter(self.bins.values(), dtype=np.int64, count=len(self.bins))
            low = float(np.nanmin(keys)) if keys.size else 0.0
            high = float(np.nanmax(keys)) if keys.size else 0.0
            if low < 0 or high > 1e9:  # log-probabilities, tries (p_z): 20 bins over the range
                edges = (
                    np.linspace(low, high, 21) if high > low else np.array([low - 0.5, low + 0.5])
                )
            else:
                top = int(high)
                edges = (
                    np.arange(0, top + 2, dtype=float) - 0.5
                    if top < 40
                    else np.linspace(0, top, 21)
                )
            counts, edges = np.histogram(keys, bins=edges, weights=weights)
        return {"edges": [round(float(e), 4) for e in edges], "counts": [int(c) for c in counts]}

    def median(self) -> float | None:
        if not self.total.valued:
            return None
        if self.binned:
            return float(np.median(np.asarray(self.read_values(), dtype=float)))
        keys = sorted(self.bins)
        counts = np.cumsum([self.bins[k] for k in keys])
        n = int(counts[-1])

        def at(position: int) -> float:  # the value at a 0-based sorted position
            return keys[int(np.searchsorted(counts, position, side="right"))]

        low, high = at((n - 1) // 2), at(n // 2)
        return float(np.mean([low, high]))

    def max(self) -> float | None:
        if not self.total.valued:
            return None
        if self.binned:
            return max(self.read_values())
        return max(self.bins)


def histogram(metric: str, values: Iterable[float]) -> dict[str, list[float] | list[int]]:
    """The histogram of `values` as a run report draws it (see MetricScores.histogram)."""
    rows = ({"metric": metric, "value": v, "flagged": None} for v in values)
    return scores_from_rows(rows).get(metric, MetricScores(metric)).histogram()


def scores_from_rows(rows: Iterable[Mapping[str, Any]]) -> dict[str, MetricScores]:
    """metric -> its scores counted from judgment rows (metric, value, flagged and,
    optionally, template), in metric name order."""
    scores: dict[str, MetricScores] = {}
    values: dict[str, list[float]] = {}
    for row in rows:
        metric, value = row["metric"], row["value"]
        entry = scores.get(metric)
        if entry is None:
            entry = scores[metric] = MetricScores(metric)
            values[metric] = []
            entry.read_values = functools.partial(values.__getitem__, metric)
        entry.total.add(value, row["flagged"])
        template = row.get("template")
        if template is not None:
            entry.by_template.setdefault(int(template), Tally()).add(value, row["flagged"])
        if value is not None:
            key = value_bin(metric, value)
            entry.bins[key] = entry.bins.get(key, 0) + 1
            values[metric].append(float(value))
    return dict(sorted(scores.items()))


def scores_from_store(store: Store, run_id: int) -> dict[str, MetricScores]:
    """metric -> the run's scores read from the database's totals, in metric name order."""
    scores: dict[str, MetricScores] = {}
    for row in judgment_tallies(store, run_id):
        metric = row["metric"]
        entry = scores.get(metric)
        if entry is None:
            entry = scores[metric] = MetricScores(
                metric, read_values=functools.partial(metric_values, store, run_id, metric)
            )
        tally = Tally(
            row["judged"], row["valued"], row["value_sum"], row["verdicts"], row["flagged"]
        )
        entry.by_template[int(row["template"])] = tally
        entry.total.merge(tally)
    for metric, bins in value_counts(store, run_id).items():
        if metric in scores:
            scores[metric].bins = bins
    # a database opened read-only keeps the fraction set it was last written with: a
    # metric it counts the other way than the code is recounted from its values
    stale = binned_metrics(store.conn).symmetric_difference(fraction_metrics())
    for metric in stale.intersection(scores):
        entry = scores[metric]
        entry.bins = {}
        for value in entry.read_values():
            key = value_bin(metric, value)
            entry.bins[key] = entry.bins.get(key, 0) + 1
    return scores

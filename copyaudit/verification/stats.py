"""Statistics for human verification: judge quality against people, agreement between people.

Conventions:
- a metric that is undefined (a zero denominator) is None, never 0 or nan;
- human labels are "yes" / "no" / "unsure" (case-insensitive); "unsure" is an
  abstention: it does not vote in a majority and counts as a missing value in
  Krippendorff's alpha and Cohen's kappa.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from itertools import combinations
from typing import Any, TypeVar

import krippendorff
import numpy as np

METRICS: tuple[str, ...] = ("accuracy", "precision", "recall", "f1")
YES, NO, UNSURE = "yes", "no", "unsure"
HUMAN_LABELS: tuple[str, ...] = (YES, NO, UNSURE)


_Unit = TypeVar("_Unit", bound=Hashable)  # an item the annotators labelled
_Coder = TypeVar("_Coder", bound=Hashable)  # an annotator


def _counts(pred: np.ndarray, gold: np.ndarray) -> tuple[Any, Any, Any, Any]:
    """tp, fp, fn, tn along the last axis (works for one sample or a batch)."""
    tp = np.sum(pred & gold, axis=-1)
    fp = np.sum(pred & ~gold, axis=-1)
    fn = np.sum(~pred & gold, axis=-1)
    tn = np.sum(~pred & ~gold, axis=-1)
    return tp, fp, fn, tn


def _ratio(numerator: int, denominator: int) -> float | None:
    return None if denominator == 0 else numerator / denominator


def _as_bool_arrays(
    pred: Sequence[bool] | np.ndarray, gold: Sequence[bool] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    if len(pred) != len(gold):
        raise ValueError("pred and gold must have the same length")
    return np.asarray(pred, dtype=bool), np.asarray(gold, dtype=bool)


def binary_metrics(
    pred: Sequence[bool] | np.ndarray, gold: Sequence[bool] | np.ndarray
) -> dict[str, Any]:
    """Confusion counts, accuracy, precision, recall and F1 of `pred` against `gold`.

    F1 is 2TP / (2TP + FP + FN), which equals the harmonic mean of precision and
    recall when both exist and is 0 (not undefined) when there are positives but no
    true positive; it is None only when neither side has a positive.
    """
    p, g = _as_bool_arrays(pred, gold)
    tp, fp, fn, tn = (int(c) for c in _counts(p, g))
    return {
        "n": len(p),
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
        "accuracy": _ratio(tp + tn, len(p)),
        "precision": _ratio(tp, tp + fp),
        "recall": _ratio(tp, tp + fn),
        "f1": _ratio(2 * tp, 2 * tp + fp + fn),
    }


def _metric_batch(metric: str, pred: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """The metric for each row of (n_resamples, n_items) boolean arrays; nan where undefined."""
    tp, fp, fn, tn = (c.astype(float) for c in _counts(pred, gold))
    numerator, denominator = {
        "accuracy": (tp + tn, tp + fp + fn + tn),
        "precision": (tp, tp + fp),
        "recall": (tp, tp + fn),
        "f1": (2 * tp, 2 * tp + fp + fn),
    }[metric]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, numerator / denominator, np.nan)


def bootstrap_ci(
    pred: Sequence[bool],
    gold: Sequence[bool],
    metric: str,
    n: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of `metric`, resampling items with replacement.

    Resamples in which the metric is undefined are dropped; None when there are no
    items or no resample defines the metric.
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}")
    p, g = _as_bool_arrays(pred, gold)
    if len(p) == 0:
        return None
    rng = np.random.default_rng(seed)
    index = rng.integers(0, len(p), size=(n, len(p)))
    values = _metric_batch(metric, p[index], g[index])
    values = values[~np.isnan(values)]
    if values.size == 0:
        return None
    low, high = np.quantile(values, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


# ---------------------------------------------------------------------------
# Reference labels from several annotators
# ---------------------------------------------------------------------------


def _normalise(label: str | None) -> str | None:
    if label is None:
        return None
    value = str(label).strip().lower()
    if value not in HUMAN_LABELS:
        raise ValueError(f"unknown label {label!r}; expected one of {HUMAN_LABELS}")
    return value


def reference_label(labels: Sequence[str | None]) -> str | None:
    """Majority of "yes"/"no" votes, ignoring "unsure"; a tie or no vote gives None."""
    votes = Counter(v for v in map(_normalise, labels) if v in (YES, NO))
    if votes[YES] == votes[NO]:
        return None
    return YES if votes[YES] > votes[NO] else NO


def reference_labels(
    items: Mapping[Hashable, Sequence[str | None]],
) -> dict[str, Any]:
    """Reference label per item and the items left out, with the reason.

    Returns {"labels": {item: "yes"|"no"}, "ties": [items], "no_votes": [items],
    "n_items", "n_used", "n_ties", "n_no_votes"}; "no_votes" are items whose every
    label was "unsure" (or that have no labels).
    """
    labels: dict[Hashable, str] = {}
    ties: list[Hashable] = []
    no_votes: list[Hashable] = []
    for item, item_labels in items.items():
        decided = reference_label(item_labels)
        if decided is not None:
            labels[item] = decided
        elif any(_normalise(v) in (YES, NO) for v in item_labels):
            ties.append(item)
        else:
            no_votes.append(item)
    return {
        "labels": labels,
        "ties": ties,
        "no_votes": no_votes,
        "n_items": len(items),
        "n_used": len(labels),
        "n_ties": len(ties),
        "n_no_votes": len(no_votes),
    }


# ---------------------------------------------------------------------------
# Agreement between annotators
# ---------------------------------------------------------------------------


def _usable(label: object) -> bool:
    """A label that counts as an observed value (not missing and not "unsure")."""
    return label is not None and str(label).strip().lower() != UNSURE


def reliability_matrix(
    units: Mapping[_Unit, Mapping[_Coder, object]],
) -> tuple[np.ndarray, list[_Coder], list[_Unit], list[Any]]:
    """Annotators x items matrix of label codes with np.nan for missing or "unsure".

    Returns (matrix, annotators, items, values) where code i stands for values[i].
    Labels are compared after lower-casing strings.
    """
    items = list(units)
    annotators = sorted({a for labels in units.values() for a in labels}, key=str)
    observed = {
        _key(label) for labels in units.values() for label in labels.values() if _usable(label)
    }
    values = sorted(observed, key=str)
    code = {value: i for i, value in enumerate(values)}
    matrix = np.full((len(annotators), len(items)), np.nan)
    for col, item in enumerate(items):
        for row, annotator in enumerate(annotators):
            label = units[item].get(annotator)
            if _usable(label):
                matrix[row, col] = code[_key(label)]
    return matrix, annotators, items, values


def _key(label: object) -> Any:
    return label.strip().lower() if isinstance(label, str) else label


def krippendorff_alpha(units: Mapping[_Unit, Mapping[_Coder, object]]) -> float | None:
    """Krippendorff's alpha, nominal level, via the `krippendorff` package.

    `units[item][annotator] = label`; "unsure" and None count as missing. None when
    fewer than two annotators, no item has two observed values, or alpha is
    undefined: every pairable value is the same label, so the expected
    disagreement is 0 (alpha = 1 − 0/0).
    """
    matrix, annotators, _, values = reliability_matrix(units)
    if len(annotators) < 2:
        return None
    matrix = matrix[:, np.sum(~np.isnan(matrix), axis=0) >= 2]  # pairable items only
    if np.unique(matrix[~np.isnan(matrix)]).size < 2:
        return None
    alpha = krippendorff.alpha(
        reliability_data=matrix,
        level_of_measurement="nominal",
        value_domain=list(range(len(values))),
    )
    return None if np.isnan(alpha) else float(alpha)


def cohen_kappa(a: Sequence[Any], b: Sequence[Any]) -> float | None:
    """Cohen's kappa for two annotators over aligned items.

    Positions where either label is missing (None) or "unsure" are dropped.
    kappa = (p_o − p_e) / (1 − p_e), p_e from each annotator's own label shares;
    None with no common items or when p_e = 1 (both always use one same label).
    """
    if len(a) != len(b):
        raise ValueError("a and b must have the same length")
    pairs = [(_key(x), _key(y)) for x, y in zip(a, b, strict=True) if _usable(x) and _usable(y)]
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(x == y for x, y in pairs) / n
    shares_a = Counter(x for x, _ in pairs)
    shares_b = Counter(y for _, y in pairs)
    expected = sum(shares_a[v] * shares_b[v] for v in shares_a) / (n * n)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def pairwise_kappa(units: Mapping[_Unit, Mapping[_Coder, object]]) -> list[dict[str, Any]]:
    """Cohen's kappa for every pair of annotators on the items both labelled
    (usable labels only); n is the number of those items."""
    annotators = sorted({a for labels in units.values() for a in labels}, key=str)
    out = []
    for first, second in combinations(annotators, 2):
        common = [
            labels
            for labels in units.values()
            if _usable(labels.get(first)) and _usable(labels.get(second))
        ]
        kappa = cohen_kappa([c[first] for c in common], [c[second] for c in common])
        out.append({"a": first, "b": second, "n": len(common), "kappa": kappa})
    return out


# ---------------------------------------------------------------------------
# Thresholds
# ---------------------------------------------------------------------------


def best_threshold(scores: Sequence[float], gold: Sequence[bool]) -> dict[str, float] | None:
    """The threshold (one of the scores; positive = score >= threshold) with the highest
    F1 against `gold`. Ties go to the higher threshold (fewer flags). None when there
    are no items or no positive gold item."""
    values = np.asarray(scores, dtype=float)
    truth = np.asarray(gold, dtype=bool)
    if values.shape != truth.shape:
        raise ValueError("scores and gold must have the same length")
    if values.size == 0 or not truth.any():
        return None
    best: dict[str, float] | None = None
    for threshold in np.unique(values)[::-1]:  # high to low: strict > keeps the higher one
        metrics = binary_metrics(values >= threshold, truth)
        f1 = metrics["f1"]
        if f1 is not None and (best is None or f1 > best["f1"]):
            best = {
                "threshold": float(threshold),
                "f1": float(f1),
                "precision": float(metrics["precision"]),
                "recall": float(metrics["recall"]),
            }
    return best

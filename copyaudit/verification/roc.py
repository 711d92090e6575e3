"""ROC curve points from scores and binary labels (numpy only; no scikit-learn).

One point per distinct score, from the highest threshold down: at threshold t a work is
called positive when its score >= t. Tied scores move the curve up and right at once (a
diagonal segment), so the trapezoid area under the points equals the Mann-Whitney AUC
with ties counted half (`copyaudit.studies.decop.method.roc_auc`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def roc_points(
    scores: Sequence[float], labels: Sequence[int]
) -> tuple[list[float], list[float], list[float]]:
    """(false positive rates, true positive rates, thresholds), starting at (0, 0) with
    threshold +inf and ending at (1, 1). Labels: 1 positive, 0 negative. Raises
    ValueError without both classes or when lengths differ."""
    values = np.asarray(scores, dtype=float)
    classes = np.asarray(labels, dtype=int)
    if values.shape != classes.shape:
        raise ValueError("scores and labels must have the same length")
    n_pos, n_neg = int((classes == 1).sum()), int((classes == 0).sum())
    if n_pos == 0 or n_neg == 0 or n_pos + n_neg != len(classes):
        raise ValueError("ROC needs labels 0 and 1, both present")
    order = np.argsort(-values, kind="stable")
    values, classes = values[order], classes[order]
    last_of_run = np.r_[np.flatnonzero(np.diff(values) != 0), len(values) - 1]
    true_pos = np.cumsum(classes == 1)[last_of_run]
    false_pos = np.cumsum(classes == 0)[last_of_run]
    fpr = np.r_[0.0, false_pos / n_neg]
    tpr = np.r_[0.0, true_pos / n_pos]
    thresholds = np.r_[np.inf, values[last_of_run]]
    return fpr.tolist(), tpr.tolist(), thresholds.tolist()


def trapezoid_area(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Area under the polyline through (xs, ys) (xs ascending)."""
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    return float(np.sum(np.diff(x) * (y[1:] + y[:-1]) / 2.0))

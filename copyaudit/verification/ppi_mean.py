"""A mean people would give, from a judge on every unit and people on a random sample:
prediction-powered inference with power tuning (PPI++; Angelopoulos, Duchi and Zrnic,
2023), computed by `ppi_py.ppi_mean_ci` with its defaults (alpha 0.05 here).

With labels Y_i and judge values f_i on the n labelled units, the judge's values f_j
on all N units, and weights w_i (1 for a uniform sample; 1 / inclusion probability for
a stratified one, normalised by ppi_py to sum n), the estimate is

    theta = lam * mean_N(f) + (1/n) * sum_i w_i * (Y_i - lam * f_i)

(with w_i = 1/pi_i normalised to sum n, the second term is sum_i (Y_i - lam f_i)/pi_i
divided by sum_i 1/pi_i: the Hajek-weighted difference estimator), and the 95% interval
theta +- 1.96 * sqrt(var_N(lam * f) / N + var_n(w * (Y - lam * f)) / n), variances
with divisor N and n. lam is PPI++'s power tuning, as ppi_py computes it at the
untuned (lam = 1) estimate t: clip(c / ((1 + n/N) * v), 0, 1), c the covariance (divisor
n) of w_i(Y_i - t) and w_i(f_i - t), v the variance (divisor n + N - 1) of the n + N
values w_i(f_i - t) and f_j - t; lam = 0 is the labels alone, so the interval is never
much wider than theirs. The weighted variance treats the weighted terms as independent draws (the
with-replacement approximation, not using the strata). Measured (tests/test_estimates.py):
with 100 + 100 drawn from the judge's flagged and unflagged generations, the interval
covers the run's own people rate in about 95% of draws, the rate of the process that
made the run somewhat less (91-94%): the unflagged stratum's few, heavily weighted
positives make the normal approximation rough.

The judge's values on all N units include the labelled ones: the estimate is the
difference estimator of the rate over the run's generations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

Z95 = 1.959963984540054  # two-sided 95% normal quantile, as ppi_py's interval uses
ALPHA = 0.05


@dataclass(frozen=True)
class PPIResult:
    estimate: float
    ci: tuple[float, float]  # ppi_py's interval, clipped to [0, 1] (a rate's range)
    lam: float
    imputed_var: float  # var_N(lam * f): the judge's own spread
    rectifier_var: float  # var_n(w * (Y - lam * f)): what labelling more narrows
    n: int
    big_n: int


def _arrays(*values: object) -> list[np.ndarray]:
    return [np.asarray(v, dtype=float) for v in values]


def ppi_estimate(
    labels: object, judged: object, judged_all: object, weights: object | None = None
) -> PPIResult:
    """PPI++ on labels Y (n), the judge on those units (n) and on all units (N)."""
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
    from ppi_py.ppi import _calc_lam_glm  # the tuning ppi_mean_ci applies, for planning

    y, f, f_all = _arrays(labels, judged, judged_all)
    w = None if weights is None else np.asarray(weights, dtype=float)
    n, big_n = len(y), len(f_all)
    wn = np.ones(n) if w is None else w / w.sum() * n  # as ppi_py normalises them
    untuned = ppi_mean_pointestimate(y, f, f_all, lam=1, w=w)
    lam = float(
        _calc_lam_glm(
            (wn * (y - untuned))[:, None],
            (wn * (f - untuned))[:, None],
            (f_all - untuned)[:, None],
            np.eye(1),
            coord=None,
            clip=True,
            optim_mode="overall",
        )
    )
    low, high = ppi_mean_ci(y, f, f_all, alpha=ALPHA, w=w)
    estimate = float(np.squeeze(ppi_mean_pointestimate(y, f, f_all, lam=lam, w=w)))
    return PPIResult(
        estimate=estimate,
        ci=(max(0.0, float(np.squeeze(low))), min(1.0, float(np.squeeze(high)))),
        lam=lam,
        imputed_var=float(np.var(lam * f_all)),
        rectifier_var=float(np.var(wn * (y - lam * f))),
        n=n,
        big_n=big_n,
    )


def labels_for_half_width(result: PPIResult, half_width: float) -> float | None:
    """Labelled units for a 95% half-width of `half_width` at the current variances
    (solving Z95^2 (imputed/N + rectifier/n) = half_width^2 for n); None when the
    judge's own spread alone is wider."""
    room = (half_width / Z95) ** 2 - result.imputed_var / result.big_n
    if room <= 0:
        return None
    return result.rectifier_var / room


def rogan_gladen(
    labels: object, judged: object, judged_all: object, weights: object | None = None
) -> dict[str, float] | None:
    """The judge's rate corrected by its sensitivity and specificity on the labelled
    sample: (p + spec - 1) / (sens + spec - 1), clipped to [0, 1]; None when the sample
    has no positive or no negative, or the judge is no better than chance."""
    y, f, f_all = _arrays(labels, judged, judged_all)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)
    positives, negatives = float(w @ y), float(w @ (1 - y))
    if positives == 0 or negatives == 0:
        return None
    sensitivity = float(w @ (y * f)) / positives
    specificity = float(w @ ((1 - y) * (1 - f))) / negatives
    if sensitivity + specificity - 1 <= 0:
        return None
    raw = float(f_all.mean())
    corrected = (raw + specificity - 1) / (sensitivity + specificity - 1)
    return {
        "estimate": min(1.0, max(0.0, corrected)),
        "sensitivity": sensitivity,
        "specificity": specificity,
    }


def more_labels(needed: float | None, labelled: int) -> int | None:
    """Labels to add to reach `needed` labelled units (None: not reachable)."""
    return None if needed is None else max(0, math.ceil(needed) - labelled)

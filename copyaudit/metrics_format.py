"""The one table of judge metrics' scales, and how each metric's number is written.

Every screen and report formats a stored metric value through `format_metric`, so one
metric reads the same everywhere: a score in [0, 1] with three decimals (1.0 is
"1.000", never "1"), a count or a rating as a whole number.
"""

from __future__ import annotations

from typing import Literal

from copyaudit.studies.notice.metrics import NOTICE_METRICS

Scale = Literal["unit", "count", "rating"]
DASH = "—"  # no value

METRIC_SCALES: dict[str, Scale] = {
    "rougeL": "unit",  # literal: ROUGE-L F-measure of the first 50 tokens
    "rouge1": "unit",
    "lcs_tokens": "count",  # literal: tokens in the longest common subsequence
    "events": "count",  # reference events supported by the story
    "characters": "count",  # reference characters named in the story
    "qa_f1": "unit",
    "qa_em": "unit",
    "refusal": "unit",  # refusal score (a classifier's probability, or 0 / 1)
    "fluency": "rating",  # 1-5 rubric grade
    **{metric: "unit" for metric in NOTICE_METRICS},  # precisions, ratios, similarities
}
UNIT_METRICS = frozenset(m for m, scale in METRIC_SCALES.items() if scale == "unit")
UNIT_DIGITS = 3


def format_figure(value: object) -> str:
    """A derived figure (accuracy, precision, alpha, kappa: floats) with three
    decimals, a count whole, None a dash: as the agreement command and screen write them."""
    if value is None:
        return DASH
    if isinstance(value, float):
        return f"{value:.{UNIT_DIGITS}f}"
    return str(value)


def format_metric(metric: str, value: float | None) -> str:
    """`value` as `metric` is written everywhere: unit scores with three decimals, counts
    and ratings whole (a fractional one, e.g. a mean, with two decimals); a metric not
    in the table, whole when whole, else three decimals. None is a dash."""
    if value is None:
        return DASH
    scale = METRIC_SCALES.get(metric)
    if scale == "unit":
        return f"{value:.{UNIT_DIGITS}f}"
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.2f}" if scale is not None else f"{value:.{UNIT_DIGITS}f}"

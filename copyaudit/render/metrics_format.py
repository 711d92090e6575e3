"""How each metric's number is written (its scale is copyaudit.vocabulary's unit).

Every screen and report formats a stored metric value through `format_metric`, so one
metric reads the same everywhere: a score in [0, 1] with three decimals (1.0 is
"1.000", never "1"), a count or a rating as a whole number.
"""

from __future__ import annotations

from copyaudit.vocabulary import METRIC

DASH = "—"  # no value
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
    """`value` as `metric` is written everywhere: fractions (copyaudit.vocabulary) with
    three decimals, counts and ratings whole (a fractional one, e.g. a mean, with two
    decimals); a metric not in the table, whole when whole, else three decimals. None
    is a dash."""
    if value is None:
        return DASH
    known = METRIC.get(metric)
    if known is not None and known.unit == "fraction":
        return f"{value:.{UNIT_DIGITS}f}"
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.2f}" if known is not None else f"{value:.{UNIT_DIGITS}f}"

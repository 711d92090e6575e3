"""How each metric's number is written (its scale is its declared unit).

Every screen and report formats a stored metric value through `format_metric`
(copyaudit.judges.metric_facts: the metric's declared unit, written here), so one
metric reads the same everywhere: a score in [0, 1] with three decimals (1.0 is
"1.000", never "1"), a count or a rating as a whole number.
"""

from __future__ import annotations

from copyaudit.metrics_spec import Unit

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


def format_value(value: float | None, unit: Unit | None) -> str:
    """`value` of a metric of `unit` as it is written everywhere: a fraction with three
    decimals, a count or a rating whole (a fractional one, e.g. a mean, with two
    decimals); a metric of no declared unit (None), whole when whole, else three
    decimals. None is a dash."""
    if value is None:
        return DASH
    if unit == "fraction":
        return f"{value:.{UNIT_DIGITS}f}"
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.2f}" if unit is not None else f"{value:.{UNIT_DIGITS}f}"

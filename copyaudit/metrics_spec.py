"""What a metric and a headline figure are: the types a judge (or study) declares the
metrics it emits with, next to its code (its module's METRICS and HEADLINES, as
inspect_ai's `@scorer(metrics=[...])` or an lm-eval task's `metric_list`).

A foundation module of types only: it imports nothing from copyaudit, so the judges,
the studies, the renderers and the store read the same definitions. The facts are
collected from the judges' registry by copyaudit.judges.metric_facts (every metric)
and copyaudit.studies.registry.headlines (every headline, the studies' own included).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

Unit = Literal["fraction", "count", "rating"]  # fraction: a score in [0, 1]
Summary = Literal["flagged", "mean"]  # share of flagged judgments, or mean value


@dataclass(frozen=True)
class Metric:
    """One metric a judge stores: its label as printed, its unit, how a run summarises
    it, whether a lower value means less copying or a better output (False: a higher
    value is the better one), and the human label target its flagged verdict is checked
    against (None: not checked against a label)."""

    name: str
    label: str
    unit: Unit
    summary: Summary = "mean"
    lower_is_better: bool = True
    target: str | None = None


@dataclass(frozen=True)
class Headline:
    """One headline figure of a run report: the report key it is stored under, the
    metric it summarises (`of`, as the metric's `summary` says), its column title, its
    short title on the dashboard, whether it is also given per prompt template, the
    task kinds whose runs it describes (a report shows it for those kinds, and for any
    run that has judgments of its metric), its place among the report's headline
    columns (None: after the placed ones, in registry order) and its column's place
    among the dashboard's headline columns (None: not on the dashboard)."""

    key: str
    of: Metric
    column: str
    short: str
    by_template: bool = True
    kinds: tuple[str, ...] = ()
    place: int | None = None
    dashboard: int | None = None

    @property
    def metric(self) -> str:
        """The name of the metric it summarises."""
        return self.of.name

    @property
    def summary(self) -> Summary:
        return self.of.summary

    @property
    def shown_as(self) -> Literal["percent", "x100", "plain"]:
        """A rate as a percentage, a mean fraction times 100, a rating as it is."""
        if self.summary == "flagged":
            return "percent"
        return "x100" if self.of.unit == "fraction" else "plain"


def in_report_order(headlines: Sequence[Headline]) -> tuple[Headline, ...]:
    """`headlines` in the report's column order: the placed ones by place, then the
    others as given (the sort is stable)."""
    return tuple(sorted(headlines, key=lambda h: (h.place is None, h.place or 0)))


def dashboard_headlines(headlines: Sequence[Headline]) -> tuple[Headline, ...]:
    """The headlines of `headlines` the dashboard's runs table shows, in its column order."""
    shown = [h for h in headlines if h.dashboard is not None]
    return tuple(sorted(shown, key=lambda h: h.dashboard or 0))


def report_headlines(
    kind: str, judged: Mapping[str, int], headlines: Sequence[Headline]
) -> tuple[Headline, ...]:
    """The headline columns of a `kind` run's report: those of `headlines` (every one:
    copyaudit.studies.registry.headlines) describing the kind and those whose metric
    the run has judgments of (`judged`: metric -> count), so a notice run's report
    prints no empty CopyBench columns."""
    return tuple(h for h in headlines if kind in h.kinds or judged.get(h.metric))

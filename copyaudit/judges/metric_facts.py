"""Every metric the registered judges emit, collected from the modules that declare
them (each JudgeSpec's `declared_in`: its METRICS and HEADLINES), never listed here.

What reads a metric's facts reads them here: its label, its unit (how it is written,
whether the store bins it as a fraction), how a run summarises it, its label target.
The headline figures of a report, the dashboard and the comparison are these judges'
HEADLINES with each study's own: copyaudit.studies.registry.headlines.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from types import ModuleType

from copyaudit.judges.registry import JUDGES
from copyaudit.metrics_spec import Headline, Metric
from copyaudit.render.metrics_format import format_value


@dataclass(frozen=True)
class _Collected:
    metrics: tuple[Metric, ...]
    table: dict[str, Metric]
    headlines: tuple[Headline, ...]
    fractions: frozenset[str]


def _collected() -> _Collected:
    """What the registered judges' modules declare, collected once per set of modules (a
    judge registered later, or a module replaced, as tests do, is read then)."""
    names = dict.fromkeys(spec.declared_in for spec in JUDGES.values())
    return _collect(tuple(importlib.import_module(name) for name in names))


@cache
def _collect(modules: tuple[ModuleType, ...]) -> _Collected:
    """The declarations of `modules`, in order. A metric name declared twice with other
    facts is a programming error (ValueError): two judges would disagree on one metric."""
    seen: dict[str, Metric] = {}
    for module in modules:
        for declared in module.METRICS:
            known = seen.setdefault(declared.name, declared)
            if known != declared:
                raise ValueError(f"metric {declared.name!r} declared twice: {known} / {declared}")
    headlines = tuple(h for module in modules for h in getattr(module, "HEADLINES", ()))
    fractions = frozenset(m.name for m in seen.values() if m.unit == "fraction")
    return _Collected(tuple(seen.values()), seen, headlines, fractions)


def metrics() -> tuple[Metric, ...]:
    """Every declared metric, in registry order."""
    return _collected().metrics


def judge_headlines() -> tuple[Headline, ...]:
    """The headline figures the judges' modules declare, in registry order."""
    return _collected().headlines


def fraction_metrics() -> frozenset[str]:
    """The metrics whose values are scores in [0, 1] (the store bins them for histograms)."""
    return _collected().fractions


def metric(name: str) -> Metric | None:
    """The declaration of metric `name`; None for a metric no judge declares (stored by
    a judge imported under another name)."""
    return _collected().table.get(name)


def judged_kinds(name: str) -> frozenset[str]:
    """The task kinds scored by some registered judge that declares metric `name` (the
    refusal metric: every generation kind)."""
    return frozenset(
        kind
        for spec in JUDGES.values()
        if any(m.name == name for m in importlib.import_module(spec.declared_in).METRICS)
        for kind in spec.kinds
    )


def metric_label(name: str) -> str:
    """The metric's printed label; its stored name for a metric not declared."""
    known = metric(name)
    return known.label if known else name


def format_metric(name: str, value: float | None) -> str:
    """`value` as metric `name` is written everywhere (copyaudit.render.metrics_format)."""
    known = metric(name)
    return format_value(value, known.unit if known else None)

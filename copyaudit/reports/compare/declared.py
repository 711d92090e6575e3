"""The comparison tables a study gets from its own headlines (StudySpec.headlines): one
table per study, one column per headline and kind, its cells the run reports' figures.
A study with a paper table of its own adds a ComparisonTable to COMPARISONS instead."""

from __future__ import annotations

from copyaudit.metrics_spec import Headline
from copyaudit.reports.compare.tables import (
    COMPARISONS,
    Column,
    ComparisonTable,
    ShownAs,
    headline_samples,
)
from copyaudit.studies.registry import STUDIES
from copyaudit.studies.spec import StudySpec

_SHOWN: dict[str, ShownAs] = {"percent": "percent", "x100": "x100", "plain": "rating"}


def _column(headline: Headline, kind: str) -> Column:
    return Column(
        headline.key if len(headline.kinds) == 1 else f"{headline.key}_{kind}",
        headline.column,
        kind,
        (headline.key,),
        _SHOWN[headline.shown_as],
        metric=headline.metric,
        rate=headline.summary == "flagged",
    )


def headline_table(spec: StudySpec) -> ComparisonTable | None:
    """The comparison of a study's own headlines; None for a study that declares none."""
    columns = tuple(_column(h, kind) for h in spec.headlines for kind in h.kinds)
    if not columns:
        return None
    return ComparisonTable(
        spec.name,
        spec.title,
        f"{spec.title} headlines",
        columns,
        sampler=headline_samples,
        note="the study's own headline figures, as its run reports give them. Interval: "
        "Wilson for rates, mean ± 1.96 s/√n for means.",
    )


def comparisons() -> tuple[ComparisonTable, ...]:
    """Every comparison table: the papers' (COMPARISONS), then each study's headlines."""
    studies = {id(spec): spec for spec in STUDIES.values()}
    declared = (headline_table(spec) for spec in studies.values())
    return (*COMPARISONS, *(t for t in declared if t is not None))

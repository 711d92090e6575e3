"""The comparison tables a study gets from its own headlines (StudySpec.headlines): one
table per study, one column per headline and kind, its cells the run reports' figures.
A study with a paper table of its own adds a ComparisonTable to COMPARISONS instead.
A headline of every kind (no `kinds`: the refusal rate) gets a column in every table,
per kind of the table its metric is judged on, unless the table has one of that metric
and kind already (the notice table's refusal by task)."""

from __future__ import annotations

from dataclasses import replace

from copyaudit.judges.metric_facts import judged_kinds
from copyaudit.metrics_spec import Headline
from copyaudit.reports.compare.tables import (
    COMPARISONS,
    Column,
    ComparisonTable,
    ShownAs,
    headline_samples,
)
from copyaudit.studies.registry import STUDIES, headlines
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


def with_every_kind_headlines(table: ComparisonTable) -> ComparisonTable:
    """`table` with a column per kind for each headline of every kind (its run's figure,
    as the run report gives it), where that kind's metric is judged and the table has
    no column of it yet."""
    added, notes = [], []
    for headline in headlines():
        if headline.kinds:
            continue
        taken = {c.kind for c in table.columns if c.metric == headline.metric}
        kinds = [k for k in table.kinds if k in judged_kinds(headline.metric) and k not in taken]
        for kind in kinds:
            label = f"{headline.column} ({kind})" if len(table.kinds) > 1 else headline.column
            added.append(
                replace(_column(headline, kind), key=f"{headline.key}_{kind}", label=label)
            )
        if kinds:
            notes.append(
                f"{headline.column}: the run report's {headline.key}, over all its outputs."
            )
    if not added:
        return table
    return replace(table, columns=(*table.columns, *added), note=" ".join([table.note, *notes]))


def comparisons() -> tuple[ComparisonTable, ...]:
    """Every comparison table: the papers' (COMPARISONS), then each study's headlines,
    each with the columns of the headlines of every kind."""
    studies = {id(spec): spec for spec in STUDIES.values()}
    declared = (headline_table(spec) for spec in studies.values())
    tables = (*COMPARISONS, *(t for t in declared if t is not None))
    return tuple(with_every_kind_headlines(t) for t in tables)

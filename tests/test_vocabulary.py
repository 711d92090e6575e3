"""The vocabulary is the one table of metric facts: the study modules, the reports and
the dashboard agree with it, and the older import places still answer."""

from __future__ import annotations

from copyaudit import items, types, vocabulary
from copyaudit.render.text import headline_text
from copyaudit.studies.notice.metrics import (
    DEFAULT_THRESHOLDS,
    HEADLINE,
    LABEL_TARGETS,
    NOTICE_METRICS,
)
from copyaudit.vocabulary import HEADLINES, METRIC, TASK_KINDS, metric_label
from screens.runs.dashboard import run_columns, shown_headlines


def test_every_notice_metric_is_described_and_its_headlines_agree() -> None:
    assert set(METRIC) >= NOTICE_METRICS
    headline = {m for metrics in HEADLINE.values() for m in metrics}
    assert headline == {m for m in NOTICE_METRICS if METRIC[m].headline}
    assert set(LABEL_TARGETS) == set(DEFAULT_THRESHOLDS)  # each flagged metric has a target


def test_headlines_read_headline_metrics_and_their_summary() -> None:
    for h in HEADLINES:
        assert METRIC[h.metric].headline, h
    assert {h.metric for h in HEADLINES} == {
        m.name for m in METRIC.values() if m.headline and m.name not in NOTICE_METRICS
    }
    assert vocabulary.HEADLINE["literal_rate"].summary == "flagged"
    assert headline_text(vocabulary.HEADLINE["literal_rate"], 0.5) == "50.0%"
    assert headline_text(vocabulary.HEADLINE["qa_f1"], 0.5) == "50.0"
    assert headline_text(vocabulary.HEADLINE["fluency"], 3.5) == "3.50"


def test_targets_are_label_targets_and_kinds_answer_from_types() -> None:
    assert {m.target for m in METRIC.values() if m.target} <= set(vocabulary.LABEL_TARGETS)
    assert items.LABEL_TARGETS is vocabulary.LABEL_TARGETS and types.TASK_KINDS is TASK_KINDS


def test_labels_come_from_the_table() -> None:
    assert metric_label("notice_xling_cosine") == "CosSim"
    assert metric_label("not_a_metric") == "not_a_metric"


def test_the_dashboard_shows_each_headline_that_declares_a_place() -> None:
    declared = sorted((h for h in HEADLINES if h.dashboard is not None), key=lambda h: h.dashboard)
    assert declared and shown_headlines() == tuple(declared)
    places = [h.dashboard for h in declared]
    assert len(set(places)) == len(places)  # no two claim one place
    columns = run_columns()
    assert [t for k, t in columns if k in {h.key for h in declared}] == [h.short for h in declared]

"""The metric facts are declared beside the judges that emit them and collected from the
registry: the study modules, the reports and the dashboard read the collection, and the
older import places of the shared vocabulary still answer."""

from __future__ import annotations

from copyaudit import items, types, vocabulary
from copyaudit.judges.metric_facts import judge_headlines, metric, metric_label, metrics
from copyaudit.render.text import headline_text
from copyaudit.studies.notice.metrics import DEFAULT_THRESHOLDS, LABEL_TARGETS, NOTICE_METRICS
from copyaudit.studies.registry import headlines
from copyaudit.vocabulary import TASK_KINDS
from screens.runs.dashboard import run_columns, shown_headlines


def test_every_notice_metric_is_declared_and_each_flagged_one_has_a_target() -> None:
    assert {m.name for m in metrics()} >= NOTICE_METRICS
    assert set(LABEL_TARGETS) == set(DEFAULT_THRESHOLDS)  # each flagged metric has a target


def test_headlines_read_their_metric_s_summary_and_unit() -> None:
    by_key = {h.key: h for h in headlines()}
    assert by_key["literal_rate"].summary == "flagged"
    assert headline_text(by_key["literal_rate"], 0.5) == "50.0%"
    assert headline_text(by_key["qa_f1"], 0.5) == "50.0"
    assert headline_text(by_key["fluency"], 3.5) == "3.50"
    for h in judge_headlines():  # a headline summarises a declared metric
        assert metric(h.metric) is h.of


def test_targets_are_label_targets_and_kinds_answer_from_types() -> None:
    assert {m.target for m in metrics() if m.target} <= set(vocabulary.LABEL_TARGETS)
    assert items.LABEL_TARGETS is vocabulary.LABEL_TARGETS and types.TASK_KINDS is TASK_KINDS


def test_labels_come_from_the_declarations() -> None:
    assert metric_label("notice_xling_cosine") == "CosSim"
    assert metric_label("not_a_metric") == "not_a_metric"


def test_the_dashboard_shows_each_headline_that_declares_a_place() -> None:
    declared = sorted(
        (h for h in headlines() if h.dashboard is not None), key=lambda h: h.dashboard
    )
    assert declared and shown_headlines() == tuple(declared)
    places = [h.dashboard for h in declared]
    assert len(set(places)) == len(places)  # no two claim one place
    columns = run_columns()
    assert [t for k, t in columns if k in {h.key for h in declared}] == [h.short for h in declared]

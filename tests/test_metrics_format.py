"""One format per metric: the screens and reports write one value of one metric the same
way (that every metric a judge emits is declared and formatted by its unit:
tests/test_registry_properties.py)."""

from __future__ import annotations

from rich.text import Text

from copyaudit.judges.metric_facts import format_metric, fraction_metrics
from copyaudit.render.metrics_format import DASH
from copyaudit.reports.run_report import histogram
from copyaudit.studies.notice.metrics import NOTICE_METRICS
from db.browse import JudgmentView
from screens.plain import metric_cell
from screens.widgets.scores import scores_text


def test_unit_scores_keep_their_decimals_counts_and_ratings_do_not() -> None:
    assert format_metric("notice_rouge", 1.0) == format_metric("rougeL", 1.0) == "1.000"
    assert format_metric("notice_lcs_ratio", 0.5) == "0.500"
    assert format_metric("events", 5.0) == "5"
    assert format_metric("fluency", 4.0) == "4"
    assert format_metric("fluency", 3.5) == "3.50"
    assert format_metric("qa_em", 0.0) == "0.000"
    assert format_metric("unknown_metric", 2.0) == "2"
    assert format_metric("rougeL", None) == DASH
    assert fraction_metrics() >= NOTICE_METRICS


def test_the_list_cell_and_the_score_line_write_one_value_alike() -> None:
    for metric, value in (("notice_rouge", 1.0), ("rougeL", 1.0), ("characters", 3.0)):
        written = format_metric(metric, value)
        cell = metric_cell(metric, value)
        assert isinstance(cell, Text) and cell.plain == written and cell.justify == "right"
        line = scores_text([JudgmentView(metric, "1", metric, value, None, {})]).plain
        assert line == f"{metric} {written}"


def test_the_report_histogram_bins_unit_metrics_over_zero_to_one() -> None:
    assert histogram("notice_cosine", [0.2, 0.95])["edges"][-1] == 1.0
    assert histogram("events", [0.0, 3.0])["edges"][-1] == 3.5

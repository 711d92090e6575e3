"""Run reports: CopyBench's columns and the distribution of every score."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from copyaudit.metrics_spec import report_headlines
from copyaudit.render.markdown import table
from copyaudit.render.text import headline_text, judged_caption, suite_note_lines
from copyaudit.reports.copying import copying_blocks, copying_markdown, with_statuses
from copyaudit.reports.people import people_markdown
from copyaudit.reports.pz import pz_figures, pz_markdown
from copyaudit.reports.scores import MetricScores, histogram, scores_from_store
from copyaudit.reports.unreadable import unreadable_counts, unreadable_warnings
from copyaudit.studies.notice.report import notice_markdown, notice_report
from copyaudit.studies.registry import headlines as all_headlines
from copyaudit.verification.estimates import people_estimates
from copyaudit.verification.quality import judge_quality, quality_line
from db.cases import run_import_note, suite_import_note
from db.queries import run_overview
from db.run_totals import thresholds as run_thresholds
from db.runs import run_row
from db.tracing import traced_statuses

if TYPE_CHECKING:
    from db.connection import Store

__all__ = ["build_report", "histogram", "report_markdown", "summarize_scores"]


def summarize_scores(
    scores: Mapping[str, MetricScores], thresholds: dict[str, list[float]] | None = None
) -> dict[str, Any]:
    """Headline figures, per-template figures and histograms from a run's scores (metric
    -> MetricScores, in name order), and the verbatim / extraction sections
    (`thresholds`: metric -> its flagging thresholds)."""

    def headline(metric: str, how: str, template: int | None = None) -> float | None:
        entry = scores.get(metric)
        if entry is None:
            return None
        tally = entry.total if template is None else entry.by_template.get(template)
        return None if tally is None else tally.figure(how)

    figures = {h.key: headline(h.metric, h.summary) for h in all_headlines()}
    fluency = scores.get("fluency")
    unparseable = fluency.total.judged - fluency.total.valued if fluency else 0
    templates = sorted({t for entry in scores.values() for t in entry.by_template})
    per_template = {
        str(t): {h.key: headline(h.metric, h.summary, t) for h in all_headlines()}
        for t in templates
    }
    return {
        **figures,
        "fluency_unparseable": unparseable,
        "by_template": per_template,
        "histograms": {metric: entry.histogram() for metric, entry in scores.items()},
        "judged": {metric: entry.total.judged for metric, entry in scores.items()},
        # judged but with no value (a metric not computed, with its reason stored)
        "no_value": {m: e.total.judged - e.total.valued for m, e in scores.items()},
        **copying_blocks(scores, thresholds or {}),
    }


def build_report(
    store: Store, run: str, notice_thresholds: dict[str, tuple[float, float]] | None = None
) -> dict[str, Any]:
    row = run_row(store, run)  # a clear error for an unknown run
    overview = run_overview(store, run)
    run_id = int(row["id"])
    summary = summarize_scores(scores_from_store(store, run_id), run_thresholds(store, run_id))
    report = {
        "run": run,
        "suite": overview["suite"],
        "kind": overview["kind"],
        "model": overview["model"],
        "status": overview["status"],
        "n": overview["generations"] - overview["failed"],
        "failed": overview["failed"],
        "import_note": suite_import_note(store, int(row["suite_id"])),
        "generations_note": run_import_note(store, int(row["id"])),
        **summary,
        # each judge figure's precision / recall / F1 against people, or "not verified"
        "judge_quality": judge_quality(store, run),
    }
    # each headline rate as people would give it, or why that cannot be estimated
    if "trace" in report:  # the reproduction rate by kind of work
        report["trace"] = with_statuses(report["trace"], traced_statuses(store, run_id))
    report["people_estimates"] = people_estimates(store, run, report["kind"], report["judged"])
    report["unreadable"] = unreadable_counts(store, run_id)
    report["warnings"] = unreadable_warnings(report["unreadable"], report["judged"])
    if report["kind"] == "decop":
        from copyaudit.studies.decop.report import decop_report  # deferred: loads scipy

        report["decop"] = decop_report(store, run)
    if report["kind"] == "notice":
        report["notice"] = notice_report(store, run, notice_thresholds)
    if report["kind"] == "extraction" and (figures := pz_figures(store, run_id)):
        report["pz"] = figures  # a p_z run (copyaudit pz) only
    return report


def quality_markdown(report: dict[str, Any]) -> list[str]:
    """The judges' measured quality against people (a section; none for an unjudged run)."""
    entries = report.get("judge_quality") or []
    if not entries:
        return []
    return ["", "## Judges against people", "", *(f"- {quality_line(e)}" for e in entries)]


def _bar(count: int, top: int, width: int = 30) -> str:
    return "█" * (0 if top == 0 else round(width * count / top))


def report_markdown(report: dict[str, Any]) -> str:
    if report.get("decop") is not None:
        from copyaudit.studies.decop.report import decop_markdown  # deferred: loads scipy

        return decop_markdown(report)
    headlines = report_headlines(report["kind"], report["judged"], all_headlines())
    lines = [
        f"# Run {report['run']}",
        "",
        f"suite {report['suite']} ({report['kind']}), model {report['model']}, "
        f"status {report['status']}; {report['n']} generations"
        + (f", {report['failed']} failed" if report["failed"] else ""),
        *suite_note_lines(report),
        *(f"\n**Warning:** {warning}" for warning in report.get("warnings", ())),
        "",
        *(
            table(
                [h.column for h in headlines],
                [[headline_text(h, report[h.key]) for h in headlines]],
            )
            if headlines
            else []
        ),
    ]
    if report["fluency_unparseable"]:
        lines.append(
            f"\n{report['fluency_unparseable']} fluency answers could not be parsed "
            "and are left out of the mean."
        )
    lines += quality_markdown(report)
    lines += people_markdown(report)
    columns = [h for h in headlines if h.by_template]
    if len(report["by_template"]) > 1 and columns:
        lines += ["", "## By prompt template", ""]
        lines += table(
            ["template", *(h.column for h in columns)],
            [
                [template, *(headline_text(h, fig[h.key]) for h in columns)]
                for template, fig in report["by_template"].items()
            ],
        )
    if report.get("notice") is not None:
        lines += ["", *notice_markdown(report["notice"])]
    if report.get("pz"):
        lines += ["", "## Extraction probability (p_z)", "", pz_markdown(report["pz"]).rstrip()]
    copying = copying_markdown(report)
    if copying:
        lines += ["", *copying]
    lines += ["", "## Score distributions", ""]
    for metric, hist in report["histograms"].items():
        lines += [f"### {metric} ({judged_caption(report, metric)})", ""]
        if not sum(hist["counts"]):
            continue
        lines.append("```")
        edges, counts = hist["edges"], hist["counts"]
        top = max(counts, default=0)
        for i, count in enumerate(counts):
            lines.append(f"{edges[i]:>7.2f} – {edges[i + 1]:<7.2f} {count:>6} {_bar(count, top)}")
        lines += ["```", ""]
    return "\n".join(lines).rstrip() + "\n"

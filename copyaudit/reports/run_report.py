"""Run reports: CopyBench's columns and the distribution of every score."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from copyaudit.render.markdown import table
from copyaudit.render.text import headline_text, judged_caption, suite_note_lines
from copyaudit.reports.copying import copying_blocks, copying_markdown
from copyaudit.studies.notice.report import notice_markdown, notice_report
from copyaudit.verification.quality import judge_quality, quality_line
from copyaudit.vocabulary import FRACTION_METRICS, HEADLINES, report_headlines
from db.cases import run_import_note, suite_import_note
from db.queries import iter_scores, metric_thresholds, run_overview
from db.runs import run_row


def histogram(metric: str, values: Sequence[float]) -> dict[str, list[float] | list[int]]:
    """Ten bins over [0, 1] for unit scores; one bin per integer for counts and ratings."""
    data = np.asarray(values, dtype=float)
    if metric in FRACTION_METRICS:
        edges = np.linspace(0.0, 1.0, 11)
    else:
        top = int(np.nanmax(data)) if data.size else 0
        edges = np.arange(0, top + 2, dtype=float) - 0.5 if top < 40 else np.linspace(0, top, 21)
    counts, edges = np.histogram(data, bins=edges)
    return {"edges": [round(float(e), 4) for e in edges], "counts": [int(c) for c in counts]}


def summarize_scores(
    rows: Iterable[dict[str, Any]], thresholds: dict[str, list[float]] | None = None
) -> dict[str, Any]:
    """Headline figures, per-template figures and histograms from judgment rows, and the
    verbatim / extraction sections (`thresholds`: metric -> its flagging thresholds)."""
    by_metric: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_metric[row["metric"]].append(row)

    def headline(metric: str, how: str, subset: list[dict[str, Any]]) -> float | None:
        if how == "flagged":
            verdicts = [r["flagged"] for r in subset if r["flagged"] is not None]
            return float(np.mean(verdicts)) if verdicts else None
        values = [r["value"] for r in subset if r["value"] is not None]
        return float(np.mean(values)) if values else None

    figures: dict[str, Any] = {}
    for h in HEADLINES:
        figures[h.key] = headline(h.metric, h.summary, by_metric.get(h.metric, []))
    unparseable = sum(r["value"] is None for r in by_metric.get("fluency", []))
    templates = sorted({r["template"] for rs in by_metric.values() for r in rs})
    per_template = {
        str(t): {
            h.key: headline(
                h.metric, h.summary, [r for r in by_metric.get(h.metric, []) if r["template"] == t]
            )
            for h in HEADLINES
        }
        for t in templates
    }
    histograms = {
        metric: histogram(metric, [r["value"] for r in rs if r["value"] is not None])
        for metric, rs in sorted(by_metric.items())
    }
    return {
        **figures,
        "fluency_unparseable": unparseable,
        "by_template": per_template,
        "histograms": histograms,
        "judged": {m: len(rs) for m, rs in sorted(by_metric.items())},
        # judged but with no value (a metric not computed, with its reason stored)
        "no_value": {m: sum(r["value"] is None for r in rs) for m, rs in sorted(by_metric.items())},
        **copying_blocks(by_metric, thresholds or {}),
    }


def build_report(
    store: Any, run: str, notice_thresholds: dict[str, tuple[float, float]] | None = None
) -> dict[str, Any]:
    row = run_row(store, run)  # a clear error for an unknown run
    overview = run_overview(store, run)
    summary = summarize_scores(iter_scores(store, run), metric_thresholds(store, run))
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
    if report["kind"] == "decop":
        from copyaudit.studies.decop.report import decop_report  # deferred: loads scipy

        report["decop"] = decop_report(store, run)
    if report["kind"] == "notice":
        report["notice"] = notice_report(store, run, notice_thresholds)
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
    headlines = report_headlines(report["kind"], report["judged"])
    lines = [
        f"# Run {report['run']}",
        "",
        f"suite {report['suite']} ({report['kind']}), model {report['model']}, "
        f"status {report['status']}; {report['n']} generations"
        + (f", {report['failed']} failed" if report["failed"] else ""),
        *suite_note_lines(report),
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

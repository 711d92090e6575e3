"""A run report as one self-contained HTML page: the summary tables of
copyaudit.reports.run_report and one histogram image per metric, with its threshold line.

The figures and histogram bins are build_report's (nothing is recomputed); the
images are PNGs drawn with matplotlib's Agg renderer (no display, no network) and
embedded as base64 data URIs.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from typing import Any

from copyaudit.metrics_spec import report_headlines
from copyaudit.render.html import (
    code,
    esc,
    folded_json,
    integrity_html,
    markdown_html,
    page,
    run_provenance,
    table,
)
from copyaudit.render.text import headline_text, import_notes, judged_caption
from copyaudit.reports.copying import copying_markdown
from copyaudit.reports.people import people_markdown
from copyaudit.studies.notice.report import notice_markdown
from copyaudit.studies.registry import headlines as all_headlines
from copyaudit.timestamps import utc_text
from copyaudit.verification.quality import quality_line

CSS = """
body { max-width: 70em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
td:first-child, th:first-child { text-align: left; }
figure { display: inline-block; margin: 0.5em 1em 1em 0; vertical-align: top; }
figcaption { font-size: 0.9em; color: #444; }
pre { white-space: pre-wrap; }
section.facts th, section.facts td { text-align: left; vertical-align: top; }
pre.text { font-size: 0.85em; margin: 0; }
"""


def histogram_png(
    metric: str, edges: Sequence[float], counts: Sequence[int], thresholds: Sequence[float]
) -> bytes:
    """One histogram (the report's bins) with a dashed line at each threshold."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # deferred: loads matplotlib
    from matplotlib.figure import Figure  # deferred: loads matplotlib
    from matplotlib.ticker import MaxNLocator  # deferred: loads matplotlib

    figure = Figure(figsize=(4.8, 2.8), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    axes.stairs(counts, edges, fill=True, color="#6a8fc7", edgecolor="#2f4f7f")
    middle = (edges[0] + edges[-1]) / 2 if len(edges) else 0.0
    for threshold in thresholds:
        axes.axvline(threshold, color="#c0392b", linestyle="--", linewidth=1.5)
        left = threshold > middle  # keep the label inside the plot
        axes.annotate(
            f"threshold {threshold:g}",
            (threshold, 1),
            xycoords=("data", "axes fraction"),
            xytext=(-3 if left else 3, -12),
            textcoords="offset points",
            ha="right" if left else "left",
            color="#c0392b",
            fontsize=8,
            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1},
        )
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_title(metric, fontsize=10)
    axes.set_xlabel("score")
    axes.set_ylabel("generations")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def _headline_table(report: dict[str, Any]) -> str:
    headlines = report_headlines(report["kind"], report["judged"], all_headlines())
    if not headlines:
        return ""
    return table(
        [h.column for h in headlines], [[esc(headline_text(h, report[h.key])) for h in headlines]]
    )


def _quality(report: dict[str, Any]) -> str:
    entries = report.get("judge_quality") or []
    if not entries:
        return ""
    items = "".join(f"<li>{esc(quality_line(e))}</li>" for e in entries)
    return f"<h2>Judges against people</h2><ul>{items}</ul>"


def _people(report: dict[str, Any]) -> str:
    lines = people_markdown(report)
    if not lines:
        return ""
    items = "".join(f"<li>{esc(line[2:])}</li>" for line in lines if line.startswith("- "))
    notes = "".join(f"<p>{esc(line)}</p>" for line in lines[4:] if line and line[0] != "-")
    return f"<h2>{esc(lines[1][3:])}</h2><ul>{items}</ul>{notes}"


def _template_table(report: dict[str, Any]) -> str:
    columns = [
        h
        for h in report_headlines(report["kind"], report["judged"], all_headlines())
        if h.by_template
    ]
    if not columns:
        return ""
    rows = [
        [esc(template), *(esc(headline_text(h, figures[h.key])) for h in columns)]
        for template, figures in report["by_template"].items()
    ]
    return "<h2>By prompt template</h2>" + table(["template", *(h.column for h in columns)], rows)


def _histograms(report: dict[str, Any], thresholds: dict[str, list[float]]) -> str:
    figures = []
    for metric, hist in report["histograms"].items():
        lines = thresholds.get(metric, [])
        caption = f"{metric}: {judged_caption(report, metric)}"
        if not sum(hist["counts"]):
            figures.append(f"<p>{esc(caption)}</p>")
            continue
        png = histogram_png(metric, hist["edges"], hist["counts"], lines)
        data = base64.b64encode(png).decode("ascii")
        if lines:
            caption += "; threshold " + ", ".join(f"{t:g}" for t in lines)
        bins = ", ".join(
            f"[{hist['edges'][i]:g}, {hist['edges'][i + 1]:g}): {count}"
            for i, count in enumerate(hist["counts"])
        )
        figures.append(
            f'<figure><img src="data:image/png;base64,{data}" alt="{esc(caption)}">'
            f"<figcaption>{esc(caption)}<details><summary>bins</summary>{esc(bins)}</details>"
            "</figcaption></figure>"
        )
    return "<h2>Score distributions</h2>" + "".join(figures)


def _provenance(run: dict[str, Any], judges: list[dict[str, Any]]) -> str:
    status = (
        f"{esc(run['status'])}; created {esc(utc_text(run['created_at']))}, started "
        f"{esc(utc_text(run['started_at']))}, finished {esc(utc_text(run['finished_at']))}"
        + (f"; error: {esc(run['error'])}" if run["error"] else "")
    )
    rows = run_provenance(run, [("prompt templates", esc(run["templates"]))], ("status", status))
    if not judges:
        return rows + "<h3>Judges</h3><p>Not judged.</p>"
    judge_table = table(
        ["judge", "version", "config hash", "metrics", "judgments", "config"],
        [
            [
                esc(j["judge"]),
                esc(j["version"]),
                code(j["judge_hash"]),
                esc(", ".join(j["metrics"])),
                esc(j["judgments"]),
                folded_json(j["config"]),
            ]
            for j in judges
        ],
    )
    return rows + "<h3>Judges</h3>" + judge_table


def report_html(
    report: dict[str, Any],
    thresholds: dict[str, list[float]],
    provenance: tuple[dict[str, Any], list[dict[str, Any]]] | None = None,
    integrity: dict[str, Any] | None = None,
) -> str:
    """The whole page for a build_report() dict; `thresholds`: metric -> its thresholds;
    `provenance`: (db.case_file.run_record, run_judges); `integrity`:
    dossier.integrity_figures (the database hash and audit chain heads at export)."""
    title = f"Run {report['run']}"
    summary = (
        f"suite {report['suite']} ({report['kind']}), model {report['model']}, "
        f"status {report['status']}; {report['n']} generations"
        + (f", {report['failed']} failed" if report["failed"] else "")
    )
    # a DE-COP body (its Markdown) carries the notes itself
    notes = "" if report.get("decop") else "".join(f"<p>{esc(n)}</p>" for n in import_notes(report))
    notes += "".join(
        f"<p><strong>Warning:</strong> {esc(w)}</p>" for w in report.get("warnings", ())
    )
    if report.get("decop") is not None:
        from copyaudit.studies.decop.report import decop_markdown  # deferred: loads scipy

        body = markdown_html(decop_markdown(report))
    else:
        body = _headline_table(report)
        if report["fluency_unparseable"]:
            body += (
                f"<p>{report['fluency_unparseable']} fluency answers could not be parsed "
                "and are left out of the mean.</p>"
            )
        body += _quality(report)
        body += _people(report)
        if len(report["by_template"]) > 1:
            body += _template_table(report)
        if report.get("notice") is not None:
            notice = "\n".join(notice_markdown(report["notice"]))
            body += f"<h2>Notice study</h2>{markdown_html(notice)}"
        copying = copying_markdown(report)
        if copying:
            body += f"<h2>Copying</h2>{markdown_html(chr(10).join(copying))}"
        body += _histograms(report, thresholds)
    if provenance is not None:
        body += f'<section class="facts"><h2>Provenance</h2>{_provenance(*provenance)}</section>'
    if integrity is not None:
        body += f'<section class="facts"><h2>Integrity</h2>{integrity_html(integrity)}</section>'
    return page(title, CSS, f"<h1>{esc(title)}</h1><p>{esc(summary)}</p>{notes}{body}")

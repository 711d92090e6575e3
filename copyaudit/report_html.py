"""A run report as one self-contained HTML page: the summary tables of
copyaudit.report and one histogram image per metric, with its threshold line.

The figures and histogram bins are build_report's (nothing is recomputed); the
images are PNGs drawn with matplotlib's Agg renderer (no display, no network) and
embedded as base64 data URIs.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from html import escape
from typing import Any

from copyaudit.report import import_notes, judged_caption

CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #1b1b1b; max-width: 70em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
figure { display: inline-block; margin: 0.5em 1em 1em 0; vertical-align: top; }
figcaption { font-size: 0.9em; color: #444; }
pre { white-space: pre-wrap; }
section.facts th, section.facts td { text-align: left; vertical-align: top; }
code, .hash { font-family: ui-monospace, monospace; font-size: 0.85em; word-break: break-all; }
pre.text { font-size: 0.85em; margin: 0; }
.bad { color: #a00000; font-weight: bold; }
"""

# (report key, column title, how to show it) of the headline table.
COLUMNS = (
    ("literal_rate", "literal %", "percent"),
    ("event_rate", "events %", "percent"),
    ("character_rate", "characters %", "percent"),
    ("qa_f1", "fact recall F1", "x100"),
    ("fluency", "fluency", "plain"),
    ("refusal_rate", "refusal %", "percent"),
)


def _e(value: Any) -> str:
    return escape(str(value), quote=True)


def _figure(value: float | None, how: str) -> str:
    if value is None:
        return "—"
    if how == "percent":
        return f"{100 * value:.1f}%"
    if how == "x100":
        return f"{100 * value:.1f}"
    return f"{value:.2f}"


def histogram_png(
    metric: str, edges: Sequence[float], counts: Sequence[int], thresholds: Sequence[float]
) -> bytes:
    """One histogram (the report's bins) with a dashed line at each threshold."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

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
    head = "".join(f"<th>{_e(title)}</th>" for _, title, _ in COLUMNS)
    cells = "".join(f"<td>{_e(_figure(report[key], how))}</td>" for key, _, how in COLUMNS)
    return f"<table><tr>{head}</tr><tr>{cells}</tr></table>"


def _template_table(report: dict[str, Any]) -> str:
    columns = COLUMNS[:4]
    head = "<th>template</th>" + "".join(f"<th>{_e(t)}</th>" for _, t, _ in columns)
    rows = "".join(
        f"<tr><td>{_e(template)}</td>"
        + "".join(f"<td>{_e(_figure(figures[key], how))}</td>" for key, _, how in columns)
        + "</tr>"
        for template, figures in report["by_template"].items()
    )
    return f"<h2>By prompt template</h2><table>{head}{rows}</table>"


def _histograms(report: dict[str, Any], thresholds: dict[str, list[float]]) -> str:
    figures = []
    for metric, hist in report["histograms"].items():
        lines = thresholds.get(metric, [])
        caption = f"{metric}: {judged_caption(report, metric)}"
        if not sum(hist["counts"]):
            figures.append(f"<p>{_e(caption)}</p>")
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
            f'<figure><img src="data:image/png;base64,{data}" alt="{_e(caption)}">'
            f"<figcaption>{_e(caption)}<details><summary>bins</summary>{_e(bins)}</details>"
            "</figcaption></figure>"
        )
    return "<h2>Score distributions</h2>" + "".join(figures)


def _provenance(run: dict[str, Any], judges: list[dict[str, Any]]) -> str:
    from copyaudit.dossier_html import folded_json, html_table, json_block, kv_table

    rows = kv_table(
        [
            ("backend", _e(run["backend"])),
            ("model", f"<code>{_e(run['model'])}</code>"),
            ("model revision", f"<code>{_e(run['model_revision'] or '—')}</code>"),
            ("prompt templates", _e(run["templates"])),
            ("decoding", json_block(run["decoding"])),
            ("mitigation", _e(run["mitigation"])),
            ("run config hash", f"<code>{_e(run['config_hash'])}</code>"),
            (
                "run config",
                folded_json(run["config"]),
            ),
            ("code version (run)", _e(run["code_version"] or "—")),
            (
                "status",
                f"{_e(run['status'])}; created {_e(run['created_at'])}, started "
                f"{_e(run['started_at'] or '—')}, finished {_e(run['finished_at'] or '—')}"
                + (f"; error: {_e(run['error'])}" if run["error"] else ""),
            ),
        ]
    )
    if not judges:
        return rows + "<h3>Judges</h3><p>Not judged.</p>"
    table = html_table(
        ["judge", "version", "config hash", "metrics", "judgments", "config"],
        [
            [
                _e(j["judge"]),
                _e(j["version"]),
                f"<code>{_e(j['judge_hash'])}</code>",
                _e(", ".join(j["metrics"])),
                _e(j["judgments"]),
                folded_json(j["config"]),
            ]
            for j in judges
        ],
    )
    return rows + "<h3>Judges</h3>" + table


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
    notes = "" if report.get("decop") else "".join(f"<p>{_e(n)}</p>" for n in import_notes(report))
    if report.get("decop") is not None:
        from copyaudit.studies.decop.report import decop_markdown

        body = f"<pre>{_e(decop_markdown(report))}</pre>"
    else:
        body = _headline_table(report)
        if report["fluency_unparseable"]:
            body += (
                f"<p>{report['fluency_unparseable']} fluency answers could not be parsed "
                "and are left out of the mean.</p>"
            )
        if len(report["by_template"]) > 1:
            body += _template_table(report)
        if report.get("notice") is not None:
            from copyaudit.studies.notice.report import notice_markdown

            notice = "\n".join(notice_markdown(report["notice"]))
            body += f"<h2>Notice study</h2><pre>{_e(notice)}</pre>"
        body += _histograms(report, thresholds)
    if provenance is not None:
        body += f'<section class="facts"><h2>Provenance</h2>{_provenance(*provenance)}</section>'
    if integrity is not None:
        from copyaudit.dossier_html import integrity_html

        body += f'<section class="facts"><h2>Integrity</h2>{integrity_html(integrity)}</section>'
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>"
        f"<h1>{_e(title)}</h1><p>{_e(summary)}</p>{notes}{body}</body></html>\n"
    )

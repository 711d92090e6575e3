"""The comparison as one self-contained HTML page: each study's table (every cell a link
to the section of the run it came from), per-model bars with their 95% intervals, and
each metric's score distributions side by side (matplotlib Agg PNGs, base64-embedded)."""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from copyaudit.render.html import anchor_html, esc, page, table
from copyaudit.reports.compare.render import (
    flag_notes,
    footnote_lines,
    footnoted_text,
    group_text,
    missing_notes,
    people_lines,
    quality_lines,
    row_runs,
)
from copyaudit.reports.compare.takedown import from_dict
from copyaudit.reports.compare.traced import TRACE_HEADER, TRACE_NOTE, TRACE_TITLE, trace_cells
from copyaudit.studies.takedown.render import cells
from db.compare import comparison_runs

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from db.connection import Store

CSS = """
body { max-width: 90em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; vertical-align: top; }
td:first-child, th:first-child { text-align: left; }
.missing { color: #6b6b6b; font-style: italic; }
figure { display: inline-block; margin: 0.5em 1em 1em 0; vertical-align: top; }
figcaption { font-size: 0.9em; color: #444; }
"""


def anchor(run: str) -> str:
    """The id of a run's section (escaped at use)."""
    return "run-" + "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in run)


def _png(figure: Figure) -> str:
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _figure(data: str, caption: str) -> str:
    return (
        f'<figure><img src="data:image/png;base64,{data}" alt="{esc(caption)}">'
        f"<figcaption>{esc(caption)}</figcaption></figure>"
    )


def _scale(shown_as: str) -> float:
    return 100.0 if shown_as in ("percent", "x100") else 1.0


def bars_png(
    label: str,
    names: Sequence[str],
    values: Sequence[float],
    bounds: Sequence[Sequence[float] | None],
    scale: float,
) -> str:
    """One column's figure per row as bars, its 95% interval as error bars."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # deferred: loads matplotlib
    from matplotlib.figure import Figure  # deferred: loads matplotlib

    figure = Figure(figsize=(max(3.2, 0.9 * len(names) + 1.6), 2.8), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    heights = [scale * v for v in values]
    low = [scale * (v - b[0]) if b else 0.0 for v, b in zip(values, bounds, strict=True)]
    high = [scale * (b[1] - v) if b else 0.0 for v, b in zip(values, bounds, strict=True)]
    positions = range(len(names))
    axes.bar(positions, heights, color="#6a8fc7", edgecolor="#2f4f7f")
    axes.errorbar(positions, heights, yerr=[low, high], fmt="none", ecolor="#1b1b1b", capsize=4)
    axes.set_xticks(list(positions), [n if len(n) <= 18 else n[:17] + "…" for n in names])
    axes.tick_params(axis="x", labelsize=7)
    axes.set_title(label, fontsize=10)
    return _png(figure)


def distributions_png(label: str, runs: Sequence[Mapping[str, Any]]) -> str:
    """One histogram per run, side by side on a shared x axis."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # deferred: loads matplotlib
    from matplotlib.figure import Figure  # deferred: loads matplotlib

    figure = Figure(figsize=(2.6 * len(runs) + 0.8, 2.6), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.subplots(1, len(runs), sharex=True, squeeze=False)[0]
    for ax, run in zip(axes, runs, strict=True):
        ax.stairs(run["counts"], run["edges"], fill=True, color="#6a8fc7", edgecolor="#2f4f7f")
        name = str(run["model"])
        ax.set_title(name if len(name) <= 28 else name[:27] + "…", fontsize=8)
        ax.set_xlabel(label, fontsize=8)
    axes[0].set_ylabel("generations", fontsize=8)
    return _png(figure)


def _cell_html(cell: Mapping[str, Any], shown_as: str, notes: Mapping[str, int]) -> str:
    """The cell's text as a link to its run's entry; an empty cell's n/a in grey, with
    the number of its reason's footnote (missing_notes)."""
    text = esc(footnoted_text(cell, shown_as, notes))
    run = cell.get("run")
    link = "" if run is None else f'<a href="#{esc(anchor(run))}" title="{esc(run)}">'
    if cell["value"] is None:
        source = "" if run is None else f" ({link}{esc(run)}</a>)"
        return f'<span class="missing">{text}</span>{source}'
    return f"{link}{text}</a>"


def _block(block: Mapping[str, Any]) -> str:
    columns = block["columns"]
    missing = missing_notes(block)
    rows = [
        [
            *(esc(v) for v in row["group"].values()),
            *(_cell_html(row["cells"][c["key"]], c["shown_as"], missing) for c in columns),
        ]
        for row in block["rows"]
    ]
    html = f"<h2>{esc(block['title'])} ({esc(block['paper'])})</h2><p>{esc(block['note'])}</p>"
    html += table([*block["group"], *(c["label"] for c in columns)], rows)
    if missing:
        notes = "<br>".join(esc(line) for line in footnote_lines(missing))
        html += f'<p class="missing">{notes}</p>'

    flags = "".join(f"<li>{esc(note)}</li>" for note in flag_notes(block))
    html += f"<ul>{flags}</ul>" if flags else ""
    for lines in (people_lines(block), quality_lines(block)):
        if lines:
            items = "".join(f"<li>{esc(line[2:])}</li>" for line in lines[2:])
            html += f"<p>{esc(lines[1])}</p><ul>{items}</ul>"
    figures = []
    for column in columns:
        filled = [r for r in block["rows"] if r["cells"][column["key"]]["value"] is not None]
        if not filled or column["shown_as"] in ("mean_std", "p"):
            continue
        cells = [r["cells"][column["key"]] for r in filled]
        data = bars_png(
            column["label"],
            [group_text(r["group"]) for r in filled],
            [c["value"] for c in cells],
            [c.get("interval") for c in cells],
            _scale(column["shown_as"]),
        )
        figures.append(_figure(data, f"{column['label']} per row, 95% interval"))
    for dist in block["distributions"]:
        data = distributions_png(dist["label"], dist["runs"])
        caption = (
            f"{dist['label']}: score distribution per run ("
            + ", ".join(r["run"] for r in dist["runs"])
            + ")"
        )
        figures.append(_figure(data, caption))
    if figures:
        html += "<h3>Per-model figures and score distributions</h3>" + "".join(figures)
    return html


def _runs_section(store: Store, comparison: Mapping[str, Any]) -> str:
    used = {run for block in comparison["tables"] for row in block["rows"] for run in row_runs(row)}
    rows = (
        [
            [
                f'<span id="{esc(anchor(r["name"]))}">{esc(r["name"])}</span>',
                esc(r["model"]),
                esc(r["suite"]),
                esc(r["kind"]),
                esc(r["mitigation"]),
                esc(r["status"]),
                f"<code>copyaudit report {esc(r['name'])} --format html</code>",
            ]
            for r in comparison_runs(store, [name for name in comparison["runs"] if name in used])
        ]
        if used
        else []
    )
    return "<h2>Runs</h2>" + table(
        ["run", "model", "suite", "kind", "mitigation", "status", "its report"], rows
    )


def _takedown_block(data: Mapping[str, Any]) -> str:
    """A takedown table: one row per method (CoTaEval's win rates, utility, speed)."""
    takedown = from_dict(data)
    head, rows = cells(takedown)
    notes = "".join(f"<li>{esc(note)}</li>" for note in takedown.notes)
    return (
        f"<h2>{esc(f'Takedown comparison: {takedown.suite} x {takedown.model}')}</h2><p>"
        + esc(
            "Win rates (CoTaEval): % of the other methods each method beats per generation, "
            f"over {takedown.examples} generations every method has."
        )
        + "</p>"
        + table(head, ([esc(cell) for cell in row] for row in rows))
        + (f"<ul>{notes}</ul>" if notes else "")
    )


def comparison_html(store: Store, comparison: Mapping[str, Any]) -> str:
    """The whole page for a build_comparison() dict."""
    body = (
        "<h1>Model comparison</h1><p>"
        + esc(
            f"One row per {comparison['by']}. Each cell: the figure of the run's own report, "
            "[95% interval], n; it links to the run it came from (below)."
        )
        + "</p>"
    )
    body += "".join(_block(block) for block in comparison["tables"])
    body += "".join(_takedown_block(data) for data in comparison.get("takedown", ()))
    if comparison.get("trace"):
        rows = [[esc(c) for c in trace_cells(row)] for row in comparison["trace"]]
        body += f"<h2>{esc(TRACE_TITLE)}</h2><p>{esc(TRACE_NOTE)}</p>"
        body += table(list(TRACE_HEADER), rows)
    if comparison["not_shown"]:
        body += "<p>" + esc("Not shown: " + "; ".join(comparison["not_shown"]) + ".") + "</p>"
    body += _runs_section(store, comparison)
    if comparison.get("anchor"):  # the audit chains' heads (verify --against reads it)
        body += "<h2>Integrity</h2><p>" + anchor_html(comparison["anchor"]) + "</p>"
    return page("Model comparison", CSS, body)

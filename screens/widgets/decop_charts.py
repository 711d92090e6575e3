"""Text charts of the DE-COP screen: per-work accuracy bars with the chance line, the
label-position bias before and after calibration, and the method table (the DE-COP
paper's Table 2: the baselines and DE-COP, AUC with its interval and p-value).

Every string from the database goes through `plain()`; the rest is built as Text."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from copyaudit.studies.decop.method import ANSWER_LETTERS
from screens.plain import DASH, plain
from screens.state.decop_view_data import WorkRow

CHANCE = 0.25
SUSPECT_STYLE = "#e07a5f"
CLEAN_STYLE = "#6a9fd8"
UNKNOWN_STYLE = "#a0a0a0"
CHANCE_STYLE = "bold #f2cc60"
CHANCE_MARK = "┃"
EIGHTHS = " ▏▎▍▌▋▊▉█"
FLAG = "⚑"
FLAG_STYLE = "bold #e07a5f"
LABELS = {1: "suspect", 0: "clean", None: "unknown"}


def label_style(label: int | None) -> str:
    return {1: SUSPECT_STYLE, 0: CLEAN_STYLE}.get(label, UNKNOWN_STYLE)  # type: ignore[arg-type]


def chance_cell(width: int, chance: float = CHANCE) -> int:
    """The cell the chance line is drawn in: the cell that holds `chance` of the width."""
    return min(width - 1, int(chance * width))


def bar(
    value: float | None,
    width: int,
    style: str,
    chance: float | None = CHANCE,
    scale: float = 1.0,
) -> Text:
    """A horizontal bar of `value` over `width` cells spanning 0..`scale` (eighth-cell
    precision; a value beyond the scale ends in "▸"), the chance line drawn over it."""
    cells = [" "] * width
    if value is not None and math.isfinite(value):
        eighths = round(max(0.0, min(1.0, value / scale)) * width * 8)
        full, rest = divmod(eighths, 8)
        cells[:full] = "█" * full
        if rest and full < width:
            cells[full] = EIGHTHS[rest]
        if value > scale:
            cells[-1] = "▸"
    text = Text(no_wrap=True, end="")
    mark = chance_cell(width, chance / scale) if chance is not None else -1
    for i, cell in enumerate(cells):
        text.append(CHANCE_MARK if i == mark else cell, CHANCE_STYLE if i == mark else style)
    return text


def fixed(value: float | None, digits: int = 3) -> str:
    return DASH if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def p_text(value: float | None) -> str:
    return DASH if value is None else f"{value:.3g}"


def ci_text(interval: Sequence[float] | None) -> str:
    return DASH if not interval else f"{interval[0]:.3f}–{interval[1]:.3f}"


def methods_table(report: Mapping[str, Any]) -> Group:
    """Method x (continuous AUC, 95% CI, the paper's Table 2 thresholded AUC mean ± std,
    Welch p): the four baselines, DE-COP before and after calibration, and the blind
    baseline (the passages alone, no model); a ⚑ on each AUC it flags, then the flags."""
    from copyaudit.studies.decop.report import (  # deferred: loads scipy
        BASELINE_LABELS,
        RESULT_LABELS,
        mean_std,
        membership_results,
    )

    table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
    table.add_column("Method")
    for name in ("AUC", "95% CI", "Table 2 (thr.)", "p (Welch)"):
        table.add_column(name, justify="right")
    results = membership_results(report, report.get("baselines"))
    blind = report.get("blind_baseline") or {}
    flags = blind.get("flags") or {}
    labels = {**BASELINE_LABELS, "decop": "DE-COP", "decop_calibrated": "DE-COP calibrated"}
    for key, name in labels.items():
        figures = results[key]
        style = "bold" if key in RESULT_LABELS else ""
        if key == "decop_calibrated" and figures is None:
            continue
        if figures is None:
            table.add_row(Text(name, style="dim"), DASH, DASH, DASH, DASH)
            continue
        auc = Text(fixed(figures.get("auc")), style=style)
        if flags.get(key):
            auc = Text.assemble((f"{FLAG} ", FLAG_STYLE), auc)
        table.add_row(
            Text(name, style=style),
            auc,
            ci_text(figures.get("auc_ci")),
            mean_std(figures.get("auc_thresholded_bootstrap")),
            p_text(figures.get("p_value")),
        )
    table.add_row(
        Text("Blind (passages only)", style="italic"),
        fixed(blind.get("auc")),
        ci_text(blind.get("ci")),
        DASH,
        DASH,
    )
    return Group(table, blind_text(blind, labels))


def blind_text(blind: Mapping[str, Any], labels: Mapping[str, str]) -> Text:
    """One line under the method table: why there is no blind baseline, that it is at
    chance (no flag), or which AUCs it flags (⚑) or that none is flagged."""
    text = Text()
    if not blind:
        return text
    if blind.get("reason"):
        text.append("Blind baseline: ", "bold")
        text.append(blind["reason"], "dim")
    elif not blind["separates"]:
        text.append("Blind baseline at chance (interval reaches 0.5): no flag", "dim")
    else:
        flagged = [labels[k] for k, flag in (blind.get("flags") or {}).items() if flag]
        if flagged:
            text.append(
                f"{FLAG} the passages alone separate suspect from clean this well: ", FLAG_STYLE
            )
            text.append(", ".join(flagged))
        else:
            text.append("Blind baseline separates the works; every AUC above is clear of it")
    return text


def bias_text(
    before: Sequence[float] | None,
    after: Sequence[float] | None,
    delta: Sequence[float] | None,
    fitted_on: Sequence[str],
    width: int = 10,
) -> Text:
    """Share of prompts answered A..D before and after calibration, as bars over 0..0.5
    with the unbiased share (0.25, mid-bar) marked, then Δ and the works it was fitted
    on."""
    text = Text(end="")
    text.append("Label-position bias", "bold")
    text.append(" · ┃ = 0.25 (unbiased)\n", "dim")
    text.append(f"  {'before':<{width + 7}}{'after calibration' if after else ''}\n", "bold")
    for i, letter in enumerate(ANSWER_LETTERS):
        text.append(f"{letter} ")
        for shares in (before, after) if after else (before,):
            share = None if shares is None else shares[i]
            text.append_text(bar(share, width, "#9aa5b1", scale=2 * CHANCE))
            text.append(f" {DASH:>4}  " if share is None else f" {100 * share:3.0f}%  ")
        text.append("\n")
    if delta is None:
        text.append("no calibration (no held-out clean works)", "dim")
        return text
    text.append("Δ ", "bold")
    text.append(" ".join(f"{lt}{d:+.3f}" for lt, d in zip(ANSWER_LETTERS, delta, strict=True)))
    text.append("\nfitted on ", "dim")
    text.append_text(plain(", ".join(fitted_on) or DASH))
    return text


def work_title(work: WorkRow) -> Text:
    """The work's name and what it is: suspect, clean, or held out for calibration."""
    text = plain(work.name, "bold")
    label = "clean, held out for calibration" if work.held_out else LABELS.get(work.label, "?")
    text.append(f" ({label})", label_style(work.label))
    return text

"""The takedown table as cells (shared by Markdown and the app's screen) and as Markdown.

A figure that cannot be computed is never a bare dash: the cell says why in a word
("no runs to compare", "not judged", "no timing"), and the table's notes say more.
"""

from __future__ import annotations

from copyaudit.judges.metric_facts import metric_label
from copyaudit.render.markdown import table as markdown_table
from copyaudit.studies.takedown.table import BASELINE, TakedownRow, TakedownTable
from copyaudit.vocabulary import MITIGATIONS as METHOD_NAMES


def header(table: TakedownTable) -> list[str]:
    utility = (
        f"utility ({metric_label(table.utility_metric)})" if table.utility_metric else "utility"
    )
    return [
        "method",
        *(metric_label(m) for m in table.metrics),
        "avg win",
        utility,
        "Δ utility",
        "tokens/s",
        "speed/none",
        "run",
    ]


def row_cells(table: TakedownTable, row: TakedownRow) -> list[str]:
    """One row's cells: win rates in percent (of the other methods beaten)."""
    rates = [_percent(row.win_rates.get(m)) if row.win_rates else "n/a" for m in table.metrics]
    baseline = next((r for r in table.rows if r.method == BASELINE), None)
    return [
        METHOD_NAMES.get(row.method, row.method),
        *rates,
        _percent(row.average) if row.average is not None else "n/a",
        _utility(row.utility, row.utility_n),
        _delta(row.utility, baseline.utility if baseline else None),
        f"{row.tokens_per_s:.1f}" if row.tokens_per_s is not None else "no timing",
        f"{row.speed_ratio:.2f}x" if row.speed_ratio is not None else "no baseline",
        row.run if row.status == "done" else f"{row.run} ({row.status})",
    ]


def cells(table: TakedownTable) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the table."""
    return header(table), [row_cells(table, row) for row in table.rows]


def takedown_markdown(table: TakedownTable) -> str:
    """The table as Markdown, with what it compares and why any figure is missing."""
    head, rows = cells(table)
    lines = [
        f"## Takedown comparison: {table.suite} x {table.model}",
        "",
        f"Win rates (CoTaEval): % of the other methods each method beats per generation "
        f"(less copying; for Levenshtein a larger distance), over {table.examples} "
        "generations every method has; utility and speed beside the method-less run's.",
        "",
        *markdown_table(head, rows),
    ]
    if table.notes:
        lines += ["", *(f"- {note}" for note in table.notes)]
    return "\n".join(lines) + "\n"


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}"


def _utility(value: float | None, n: int) -> str:
    return "not judged" if value is None else f"{value:.3f} (n={n})"


def _delta(value: float | None, baseline: float | None) -> str:
    if value is None or baseline is None:
        return "n/a"
    return f"{value - baseline:+.3f}"

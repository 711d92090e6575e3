"""The comparison as text: each cell's figure as the paper prints it with its 95%
interval and n, or the reason it is empty; Markdown tables and a long CSV."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import Any

from copyaudit.render.markdown import table
from copyaudit.reports.compare.takedown import from_dict
from copyaudit.reports.compare.traced import TRACE_HEADER, TRACE_NOTE, TRACE_TITLE, trace_cells
from copyaudit.reports.people import estimate_text
from copyaudit.studies.takedown.render import takedown_markdown
from copyaudit.untrusted import csv_row

CSV_FIELDS = (
    "study",
    "group",
    "column",
    "label",
    "value",
    "low",
    "high",
    "n",
    "run",
    "reason",
    "flag",
)


FLAG = "⚑"


def figure_text(value: Any, shown_as: str) -> str:
    """A figure as its column prints it (a rate as 12.5%, an AUC with three decimals...)."""
    if shown_as == "mean_std":
        return f"{value['mean']:.3f} ± {value['std']:.3f}"
    if shown_as == "percent":
        return f"{100 * value:.1f}%"
    if shown_as == "x100":
        return f"{100 * value:.1f}"
    if shown_as == "auc":
        return f"{value:.3f}"
    if shown_as == "p":
        return f"{value:.3g}"
    return f"{value:.2f}"


def _bound(value: float, shown_as: str) -> str:
    return figure_text(value, "x100" if shown_as == "percent" else shown_as)


def missing_reason(cell: Mapping[str, Any]) -> str:
    """Why an empty cell has no figure."""
    return cell.get("reason") or "no value"


def cell_text(cell: Mapping[str, Any], shown_as: str, with_n: bool = True) -> str:
    """'38.1% [20.8–59.1] n=21', or 'n/a: <reason>' for an empty cell."""
    if cell["value"] is None:
        return f"n/a: {missing_reason(cell)}"
    text = figure_text(cell["value"], shown_as)
    bounds = cell.get("interval")
    if bounds:
        text += f" [{_bound(bounds[0], shown_as)}–{_bound(bounds[1], shown_as)}]"
    if with_n and cell.get("n") is not None:
        text += f" n={cell['n']}"
    if cell.get("flag"):
        text += f" {FLAG}"
    return text


SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def missing_notes(block: Mapping[str, Any]) -> dict[str, int]:
    """Each distinct reason of a table's empty cells, numbered from 1 in reading order:
    a table's cells say "n/a¹" and the reason is written once, below it."""
    notes: dict[str, int] = {}
    for row in block["rows"]:
        for column in block["columns"]:
            cell = row["cells"][column["key"]]
            if cell["value"] is None:
                notes.setdefault(missing_reason(cell), len(notes) + 1)
    return notes


def footnoted_text(cell: Mapping[str, Any], shown_as: str, notes: Mapping[str, int]) -> str:
    """cell_text, an empty cell as 'n/a' with its reason's footnote number."""
    if cell["value"] is None:
        return "n/a" + str(notes[missing_reason(cell)]).translate(SUPERSCRIPT)
    return cell_text(cell, shown_as)


def footnote_lines(notes: Mapping[str, int]) -> list[str]:
    """'¹ n/a: <reason>', once per reason."""
    return [f"{str(n).translate(SUPERSCRIPT)} n/a: {reason}" for reason, n in notes.items()]


def flag_notes(block: Mapping[str, Any]) -> list[str]:
    """One line per flagged cell of a table: '⚑ model · column: why'."""
    return [
        f"{FLAG} {group_text(row['group'])} · {column['label']}: {cell['flag']}"
        for row in block["rows"]
        for column in block["columns"]
        if (cell := row["cells"][column["key"]]).get("flag")
    ]


def group_text(group: Mapping[str, Any]) -> str:
    """A row's label: its model, then its mitigation or part."""
    return " · ".join(str(v) for v in group.values())


def row_runs(row: Mapping[str, Any]) -> list[str]:
    """The runs a row's cells come from, in column order."""
    return list(dict.fromkeys(c["run"] for c in row["cells"].values() if c.get("run")))


def people_lines(block: Mapping[str, Any]) -> list[str]:
    """Per model and rate, the judge's figure and people's estimate (the second line of
    a Table 2 cell), or why there is none."""
    lines = []
    for row in block["rows"]:
        for column in block["columns"]:
            cell = row["cells"][column["key"]]
            if "people" in cell:
                value = cell["value"]
                judge = "—" if value is None else figure_text(value, column["shown_as"])
                text = estimate_text(judge, cell["people"])
                lines.append(f"- {group_text(row['group'])} · {column['label']}: {text}")
    if not lines:
        return []
    return ["", "People-level estimates (PPI++ on a random sample of labels):", *lines]


QUALITY_TITLE = "How far to trust each judge (this run's labels, else the shipped validation set):"


def quality_lines(block: Mapping[str, Any]) -> list[str]:
    """Per model, the measured quality of each judge behind the table's figures."""
    lines = [
        f"- {group_text(row['group'])} · {line}"
        for row in block["rows"]
        for cell in row["cells"].values()
        for line in cell.get("judge_quality", ())
    ]
    lines = list(dict.fromkeys(lines))
    return ["", QUALITY_TITLE, *lines] if lines else []


def comparison_markdown(comparison: Mapping[str, Any]) -> str:
    lines = [
        "# Model comparison",
        "",
        f"One row per {comparison['by']}; each cell: the figure of that run's report, "
        "[95% interval], n; the runs column "
        "names the runs the row's cells come from (`copyaudit report RUN`).",
    ]
    if not comparison["tables"]:
        lines += ["", "No run to compare."]
    for block in comparison["tables"]:
        columns = block["columns"]
        missing = missing_notes(block)
        lines += ["", f"## {block['title']} ({block['paper']})", "", block["note"], ""]
        lines += table(
            [*block["group"], *(c["label"] for c in columns), "runs"],
            [
                [
                    *row["group"].values(),
                    *(
                        footnoted_text(row["cells"][c["key"]], c["shown_as"], missing)
                        for c in columns
                    ),
                    ", ".join(row_runs(row)),
                ]
                for row in block["rows"]
            ],
        )
        lines += ["", *(f"{line}  " for line in footnote_lines(missing))] if missing else []
        lines += people_lines(block)
        lines += quality_lines(block)
        notes = sorted(
            {c["note"] for row in block["rows"] for c in row["cells"].values() if c.get("note")}
        ) + flag_notes(block)
        lines += [""] + [f"- {note}" for note in notes] if notes else []
    for data in comparison.get("takedown", ()):
        lines += ["", takedown_markdown(from_dict(data)).rstrip()]
    if comparison.get("trace"):
        lines += ["", f"## {TRACE_TITLE}", "", TRACE_NOTE, ""]
        lines += table(TRACE_HEADER, [trace_cells(row) for row in comparison["trace"]])
    if comparison["not_shown"]:
        lines += ["", "Not shown: " + "; ".join(comparison["not_shown"]) + "."]
    return "\n".join(lines).rstrip() + "\n"


def comparison_csv(comparison: Mapping[str, Any]) -> str:
    """One line per cell (long format), every figure as stored (fractions, not %);
    text cells neutralised for spreadsheets (copyaudit.untrusted.csv_row)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    for block in comparison["tables"]:
        for row in block["rows"]:
            for column in block["columns"]:
                cell = row["cells"][column["key"]]
                value = cell["value"]
                if isinstance(value, Mapping):  # a bootstrap {mean, std}: its mean
                    value = value.get("mean")
                bounds = cell.get("interval") or (None, None)
                writer.writerow(
                    csv_row(
                        {
                            "study": block["study"],
                            "group": group_text(row["group"]),
                            "column": column["key"],
                            "label": column["label"],
                            "value": value,
                            "low": bounds[0],
                            "high": bounds[1],
                            "n": cell.get("n"),
                            "run": cell.get("run"),
                            "reason": cell.get("reason"),
                            "flag": cell.get("flag"),
                        }
                    )
                )
    return buffer.getvalue()

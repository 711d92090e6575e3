"""The generated tables of docs/judges.md: every judge of the registry (its metrics, as
its module declares them, what flags, its paper and offline settings) and the event
judges' shipped validation figures (copyaudit/judges/validation_figures.json, written by
`python -m copyaudit.verification.event_validation --write-figures`).

    python -m copyaudit.docs_tables --write   (make docs-tables) rewrites the page's regions
    python -m copyaudit.docs_tables           prints them

A test regenerates them and compares (tests/test_docs_tables.py), as the app's key
table is checked (screens.keymap); the regions are copyaudit.render.doc_regions'.
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path
from typing import Any

from copyaudit.judges.registry import JUDGES, JudgeSpec
from copyaudit.judges.validation_figures import FIGURES_FILE, shipped_figures
from copyaudit.metrics_spec import Metric
from copyaudit.render.doc_regions import region, with_region
from copyaudit.render.markdown import table
from copyaudit.verification.event_validation import BASELINES, overall_table

PAGE = Path(__file__).resolve().parents[1] / "docs" / "judges.md"
JUDGES_REGION = "judges-table"
FIGURES_REGION = "validation-figures"


def _declared(spec: JudgeSpec) -> tuple[Metric, ...]:
    return importlib.import_module(spec.declared_in).METRICS


def _metrics_cell(spec: JudgeSpec) -> str:
    labels = ", ".join(f"{m.label} (`{m.name}`)" for m in _declared(spec))
    return f"{labels}; {spec.flag}" if spec.flag else labels


def _preset_cell(spec: JudgeSpec, preset: str) -> str:
    """The judge's setting in `preset`; a judge the preset leaves out is said to be."""
    text: str = getattr(spec, preset)
    if preset in spec.presets or text.startswith("not in the preset"):
        return text
    return "not in the preset" if text == "same" else f"not in the preset ({text})"


def judges_table() -> str:
    """One row per registered judge, in the registry's order."""
    rows = [
        (f"`{s.name}`", _metrics_cell(s), _preset_cell(s, "paper"), _preset_cell(s, "offline"))
        for s in JUDGES.values()
    ]
    header = ("judge", "metrics (`name`); what it flags", "paper preset", "offline preset")
    return "\n".join(table(header, rows, escape=str))


def figures_table(path: Path = FIGURES_FILE) -> str:
    """The shipped validation figures: the registry's judges measured there, in its
    order, then the baselines."""
    shipped = shipped_figures(path)
    if not shipped:
        raise ValueError(f"{path}: no shipped validation figures")
    order = [name for name in (*JUDGES, *BASELINES) if name in shipped]
    results: dict[str, dict[str, Any]] = {name: shipped[name] for name in order}
    return "\n".join(overall_table(results, shipped[order[0]]["n_stories"]))


def regions() -> dict[str, str]:
    """Each generated region of the page, by its marker name."""
    return {JUDGES_REGION: judges_table(), FIGURES_REGION: figures_table()}


def stale(page: str) -> list[str]:
    """The regions whose text on `page` is not what the code generates now."""
    return [name for name, text in regions().items() if region(page, name) != text]


def regenerated(page: str) -> str:
    """`page` with every generated region rewritten."""
    for name, text in regions().items():
        page = with_region(page, name, text)
    return page


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help=f"rewrite the regions of {PAGE}")
    args = parser.parse_args(argv)
    if args.write:
        PAGE.write_text(regenerated(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        print("\n\n".join(regions().values()))


if __name__ == "__main__":
    main()

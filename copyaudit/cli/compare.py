"""The `compare` command: the models side by side, one table per study as its paper
prints it (copyaudit.reports.compare)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from copyaudit.anchors import anchor_markdown
from copyaudit.cli.options import output_options
from copyaudit.cli.output import emit
from copyaudit.reports.anchor import current_anchor
from copyaudit.reports.compare.build import build_comparison, views
from copyaudit.reports.compare.render import comparison_csv, comparison_markdown
from copyaudit.reports.output_file import check_destination
from copyaudit.reports.pz import pz_comparison, pz_comparison_markdown

if TYPE_CHECKING:
    from copyaudit.cli.main import AppContext


@click.command("compare")
@click.argument("runs", nargs=-1)
@click.option("--model", "models", multiple=True, help="Every run of this model (repeatable).")
@click.option(
    "--by",
    type=click.Choice(views()),
    default="model",
    show_default=True,
    help="Rows: per model, per model x mitigation, or per model x notice level.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "json", "csv", "html"]),
    default="md",
    show_default=True,
)
@output_options
@click.pass_obj
def compare_cmd(
    obj: AppContext,
    runs: tuple[str, ...],
    models: tuple[str, ...],
    by: str,
    fmt: str,
    output: Path | None,
    force: bool,
) -> None:
    """Compare models: CopyBench Table 2, the notice study's Table 1 and DE-COP's
    Tables 1-2, one row per model, from RUN... (default: every run, or every run of
    each --model). Each cell is its run's report figure with n and a 95% interval, or
    the reason it is empty; html adds per-model bars and score distributions."""

    if runs and models:
        raise click.UsageError("name RUNs or --model, not both")
    if output is not None:
        check_destination(output, database=obj.db_path, force=force)  # before any work
    with obj.store(read_only=True) as store:
        comparison = build_comparison(store, runs, models, by=by)
        comparison["anchor"] = current_anchor(store)  # the audit chains' heads, as in report
        pz_rows = pz_comparison(store, comparison["runs"])
        if pz_rows:  # only with p_z runs among them: other comparisons keep their shape
            comparison["pz"] = pz_rows
        if fmt == "html":
            from copyaudit.reports.compare.html import comparison_html  # deferred: matplotlib

            text = comparison_html(store, comparison)
    if fmt == "json":
        text = json.dumps(comparison, ensure_ascii=False, indent=2, default=str) + "\n"
    elif fmt == "csv":
        text = comparison_csv(comparison)
    elif fmt == "md":
        anchor = "\n".join(anchor_markdown(comparison["anchor"]))
        pz_text = f"\n{pz_comparison_markdown(pz_rows)}" if pz_rows else ""
        text = f"{comparison_markdown(comparison)}{pz_text}\n{anchor}\n"
    emit(text, output, database=obj.db_path, force=force)


def register(group: click.Group) -> None:
    group.add_command(compare_cmd)

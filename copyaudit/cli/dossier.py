"""The `dossier` command: one case's self-contained report."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from copyaudit.cli.options import output_options
from copyaudit.cli.output import emit
from copyaudit.errors import UserError
from copyaudit.reports.dossier.build import FORMATS, build_dossier, render_dossier
from copyaudit.reports.output_file import check_destination
from db.review import resolve_generation

if TYPE_CHECKING:
    from copyaudit.cli.main import AppContext


@click.command("dossier")
@click.argument("generation")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="md", show_default=True)
@output_options
@click.pass_obj
def dossier_cmd(
    obj: AppContext, generation: str, fmt: str, output: Path | None, force: bool
) -> None:
    """A case report for GENERATION (run/case_id/template): prompt, output and reference
    with the evidence highlighted, every judge figure with its provenance, human labels,
    review status and history, and the database hash and audit-chain heads. PDF (to a
    file, -o) is the HTML laid out on pages, each with its number and the hash footer."""

    if fmt == "pdf" and output is None:
        raise UserError("a PDF is not terminal text: name its file with -o FILE")
    if output is not None:
        check_destination(output, database=obj.db_path, force=force)  # before any work
    with obj.store(read_only=True) as store:
        dossier = build_dossier(store, resolve_generation(store, generation), obj.db_path)
    # to a terminal with control sequences escaped, or safely to -o
    emit(render_dossier(dossier, fmt), output, database=obj.db_path, force=force)


def register(group: click.Group) -> None:
    group.add_command(dossier_cmd)

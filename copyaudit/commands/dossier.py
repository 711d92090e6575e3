"""The `dossier` command: one case's self-contained report."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click


@click.command("dossier")
@click.argument("generation")
@click.option("--format", "fmt", type=click.Choice(["md", "html"]), default="md", show_default=True)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write here (default: standard output).",
)
@click.pass_obj
def dossier_cmd(obj: Any, generation: str, fmt: str, output: Path | None) -> None:
    """A case report for GENERATION (run/case_id/template): prompt, output and reference
    with the evidence highlighted, every judge figure with its provenance, human labels,
    review status and history, and the database hash and audit-chain heads."""
    from copyaudit.dossier import build_dossier, render_dossier
    from db.review import resolve_generation

    with obj.store() as store:
        dossier = build_dossier(store, resolve_generation(store, generation), obj.db_path)
    text = render_dossier(dossier, fmt)
    if output is None:
        sys.stdout.write(text)
        return
    output.write_text(text, encoding="utf-8")
    click.echo(f"wrote {output}", err=True)


def register(group: click.Group) -> None:
    group.add_command(dossier_cmd)

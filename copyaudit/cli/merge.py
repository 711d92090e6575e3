"""The `merge` command: bring another database's label and review events in."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from db.merge import merge_database

if TYPE_CHECKING:
    from copyaudit.cli.main import AppContext


@click.command("merge")
@click.argument("other", type=click.Path(dir_okay=False, path_type=Path))
@click.pass_obj
def merge_cmd(obj: AppContext, other: Path) -> None:
    """Add OTHER's label and review events to this database (once each, by uuid).

    Every event must be on a generation (run/case_id/template) that exists here
    with the same output; on any error nothing is written."""

    with obj.store() as store:
        result = merge_database(store, other)
    for table in ("labels", "reviews"):
        click.echo(f"{table}: {result.added[table]} added, {result.present[table]} already present")
    for table, old, new in result.rechained:
        click.echo(
            f"{table} chain {old[:8]} diverged from this database's copy: "
            f"its later events continue in new chain {new[:8]}"
        )


def register(group: click.Group) -> None:
    group.add_command(merge_cmd)

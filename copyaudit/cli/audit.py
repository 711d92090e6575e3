"""Audit-trail commands: verify the database's integrity and its event chains."""

from __future__ import annotations

from typing import Any

import click

from db.events import chain_heads, event_counts, integrity_check, verify_chains


@click.command("verify")
@click.pass_obj
def verify_cmd(obj: Any) -> None:
    """Check SQLite's integrity and every label/review hash chain; exit 1 naming the
    first bad event if anything was altered or deleted behind the tool's back."""

    with obj.store() as store:
        integrity = integrity_check(store)
        problems = verify_chains(store)
        heads = chain_heads(store)
        events = event_counts(store)
    failed = integrity != ["ok"] or bool(problems)
    if integrity != ["ok"]:
        click.echo(f"integrity_check: {'; '.join(integrity[:5])}", err=True)
    for problem in problems:
        click.echo(f"chain broken: {problem}", err=True)
    if failed:
        raise SystemExit(1)
    click.echo(
        f"ok: integrity_check ok; {events['labels']} label and {events['reviews']} review "
        f"events in {len(heads)} intact chain(s)"
    )
    for chain, head in sorted(heads.items()):
        click.echo(f"  head {chain}: {head}")


def register(group: click.Group) -> None:
    group.add_command(verify_cmd)

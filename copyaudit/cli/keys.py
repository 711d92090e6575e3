"""`keys`: the ed25519 public keys the database trusts, each as one person's, so that
their label and review events can be checked as signed by them (db.signatures)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from copyaudit.untrusted import terminal_text

if TYPE_CHECKING:
    from copyaudit.cli.main import AppContext


@click.group("keys")
def keys_group() -> None:
    """The keys whose signatures bind events to people (`--sign-key FILE` signs)."""


@keys_group.command("add")
@click.argument("name")
@click.argument("public_key", type=click.Path(path_type=Path, dir_okay=False))
@click.pass_obj
def add_cmd(obj: AppContext, name: str, public_key: Path) -> None:
    """Trust PUBLIC_KEY (an ed25519 PEM, e.g. FILE.pub of `copyaudit anchor --new-key
    FILE`) as NAME's: from now on NAME's events must be signed by it."""
    from copyaudit.event_signing import public_key as read_public_key  # loads cryptography
    from db.signatures import add_key

    key = read_public_key(public_key)
    with obj.store() as store:
        add_key(store, name, key.fingerprint, key.pem)
    click.echo(terminal_text(f"trusted key {key.fingerprint} as {name!r}'s"))


@keys_group.command("list")
@click.pass_obj
def list_cmd(obj: AppContext) -> None:
    """Each trusted key: fingerprint, person, when added, events it signed."""
    from db.signatures import trusted_keys

    with obj.store(read_only=True) as store:
        keys = trusted_keys(store)
    if not keys:
        click.echo("no trusted keys (copyaudit keys add NAME PUBKEYFILE)")
    for key in keys:
        click.echo(
            terminal_text(
                f"{key['fingerprint']}  {key['name']}  added {key['added_at']}  "
                f"{key['events']} signed event(s)"
            )
        )


def register(group: click.Group) -> None:
    group.add_command(keys_group)

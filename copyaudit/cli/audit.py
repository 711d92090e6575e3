"""Audit-trail commands: `verify` the database and its event chains (against an anchor),
and write an `anchor` of the chains' heads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from copyaudit.anchors import SIGN_KEY_SETTING, anchor_digest, read_anchor
from copyaudit.cli.output import emit
from copyaudit.identity import setting
from copyaudit.reports.anchor import current_anchor
from db.anchors import anchor_problems, database_origin
from db.audit import Finding, audit
from db.events import chain_heads, event_counts
from db.signatures import signed_count

if TYPE_CHECKING:
    from copyaudit.cli.main import AppContext
    from db.connection import Store

_FILE = click.Path(path_type=Path, dir_okay=False)


def _against(store: Store, path: Path, public_key: Path | None) -> tuple[list[Finding], str]:
    """What the database lacks of the anchor in `path`, and a line describing the anchor."""
    from copyaudit.anchor_signing import check_signature  # deferred: loads cryptography

    anchor = read_anchor(path)
    found: list[Finding] = []
    sound, signed = check_signature(anchor, public_key)
    if not sound:
        found.append(Finding("anchor signature", signed))
    origin = database_origin(store)
    if anchor["database"]["origin"] != origin:
        found.append(
            Finding(
                "anchor of another database",
                f"{path} anchors database {anchor['database']['origin']}, this is {origin}",
            )
        )
    problems = anchor_problems(
        store, anchor["heads"], anchor.get("labelled_content"), anchor.get("runs")
    )
    found += [Finding("anchor not extended", p) for p in problems]
    line = (
        f"extends anchor {anchor_digest(anchor)[:16]} of {anchor['created_at']} "
        f"({len(anchor['heads'])} chain(s); {signed})"
    )
    return found, line


@click.command("verify")
@click.option(
    "--full",
    is_flag=True,
    help="SQLite's integrity_check instead of quick_check (slower: every index too).",
)
@click.option(
    "--against",
    type=_FILE,
    help="An anchor file (or a report/dossier JSON embedding one): prove the chains "
    "extend its heads.",
)
@click.option(
    "--public-key",
    type=_FILE,
    help="With --against: the ed25519 public key (PEM) the anchor must be signed by.",
)
@click.pass_obj
def verify_cmd(obj: AppContext, full: bool, against: Path | None, public_key: Path | None) -> None:
    """Check SQLite's own consistency (quick_check; --full: integrity_check), the guarding
    triggers, every label/review hash chain, each chain's head record and each event's
    generation; with --against, that the chains extend an anchor. Exit 1 naming what was
    altered or deleted behind the tool's back."""

    if public_key is not None and against is None:
        raise click.UsageError("--public-key checks an anchor: give --against FILE too")
    with obj.store(read_only=True) as store:
        found = audit(store, full=full)
        anchored = ""
        if against is not None:
            more, anchored = _against(store, against, public_key)
            found += more
        heads = chain_heads(store)
        events = event_counts(store)
        signed = signed_count(store)
    for finding in found:
        click.echo(str(finding), err=True)
    if found:
        raise SystemExit(1)
    check = "integrity_check" if full else "quick_check"
    click.echo(
        f"ok: {check} ok; triggers in place; {events['labels']} label and "
        f"{events['reviews']} review events in {len(heads)} intact chain(s); "
        f"{signed} signed by a trusted key, {events['labels'] + events['reviews'] - signed} "
        "unsigned; run digests match"
    )
    if anchored:
        click.echo(f"  {anchored}")
    for chain, head in sorted(heads.items()):
        click.echo(f"  head {chain}: {head}")


@click.command("anchor")
@click.option("-o", "--output", type=_FILE, help="Write the anchor here (default: stdout).")
@click.option("--force", is_flag=True, help="Overwrite an existing output file.")
@click.option(
    "--sign-key",
    type=_FILE,
    help="Sign with this ed25519 private key (PEM); default: the `anchor_sign_key` setting.",
)
@click.option(
    "--new-key",
    type=_FILE,
    help="Create an ed25519 key pair (FILE, owner-only, and FILE.pub) and stop.",
)
@click.pass_obj
def anchor_cmd(
    obj: AppContext, output: Path | None, force: bool, sign_key: Path | None, new_key: Path | None
) -> None:
    """Write the chains' heads (per chain: id, seq, head hash) with the database's identity
    and the time, as JSON: keep it elsewhere, and `verify --against` it later."""
    if new_key is not None:
        from copyaudit.anchor_signing import generate_key  # deferred: loads cryptography

        public = generate_key(new_key)
        click.echo(f"wrote {new_key} (private, keep it) and {public} (public)", err=True)
        return
    configured = setting(SIGN_KEY_SETTING, "")
    key = sign_key or (Path(configured) if configured else None)
    with obj.store() as store:
        anchor = current_anchor(store)
    if key is not None:
        from copyaudit.anchor_signing import sign_anchor  # deferred: loads cryptography

        anchor = sign_anchor(anchor, key)
    text = json.dumps(anchor, ensure_ascii=False, indent=2) + "\n"
    emit(text, output, database=obj.db_path, force=force)


@click.command("migrate")
@click.pass_obj
def migrate_cmd(obj: AppContext) -> None:
    """Bring the database's schema up to this copyaudit's (what every command that writes
    does first; the commands that only read refuse an older schema instead)."""
    with obj.store() as store:
        applied = store.migrations_applied
    click.echo(f"{obj.db_path}: {applied} migration(s) applied; the schema is current")


def register(group: click.Group) -> None:
    group.add_command(verify_cmd)
    group.add_command(anchor_cmd)
    group.add_command(migrate_cmd)

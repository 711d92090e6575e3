"""Reviewer commands: the queue of flagged cases, review decisions, a case's history."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING

import click

from copyaudit.cli.options import COUNT, POSITIVE_INT
from copyaudit.cli.output import echo, print_json, print_table
from copyaudit.errors import UserError
from copyaudit.items import item_name
from db.content import with_version
from db.events import append_review
from db.review import (
    case_history,
    normalise_status,
    resolve_generation,
    review_queue,
    review_queue_count,
)

if TYPE_CHECKING:
    from copyaudit.cli.main import AppContext

QUEUE_COLUMNS = [  # the table; --format json has every field
    "generation_key",
    "status",
    "flagged_judges",
    "max_ratio",
    "human_yes",
    "reviewer",
    "note",
]
HISTORY_COLUMNS = ["created_at", "kind", "who", "item", "value", "note", "uuid"]


@click.group("review")
def review_group() -> None:
    """Walk through flagged cases: list the queue, set a case's status, read its history."""


@review_group.command("list")
@click.option(
    "--status", help="open, cleared, escalated or needs_second_look (never reviewed = open)."
)
@click.option("--work", help="Work title or key.")
@click.option("--model", help="The runs' model id.")
@click.option("--run", help="Run name.")
@click.option("--limit", type=POSITIVE_INT, default=50, show_default=True)
@click.option("--offset", type=COUNT, default=0, show_default=True)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@click.pass_obj
def list_cmd(
    obj: AppContext,
    status: str | None,
    work: str | None,
    model: str | None,
    run: str | None,
    limit: int,
    offset: int,
    fmt: str,
) -> None:
    """The reviewer queue, most severe first: flagging judges, then how far over its
    threshold the highest score is, then human 'yes' labels."""

    filters = {"status": status, "work": work, "model": model, "run": run}
    with obj.store(read_only=True) as store:
        total = review_queue_count(store, **filters)
        queue = review_queue(
            store, status=status, work=work, model=model, run=run, limit=limit, offset=offset
        )
        rows = [asdict(r) for r in queue]
    if fmt == "json":
        print_json({"total": total, "offset": offset, "rows": rows})
        return
    for row in rows:
        row["status"] = with_version(row["status"], row["review_stale"])
    first = offset + 1 if rows else offset
    print_table(rows, QUEUE_COLUMNS, f"Review queue: {first}-{offset + len(rows)} of {total}")


@review_group.command("set")
@click.argument("generation")
@click.argument("status")
@click.option("--reviewer", help="Your name (default: the global --annotator).")
@click.option("--note", help="Why: shown in the queue, the history and the dossier.")
@click.pass_obj
def set_cmd(
    obj: AppContext, generation: str, status: str, reviewer: str | None, note: str | None
) -> None:
    """Record STATUS for GENERATION (run/case_id/template) as a new review event."""

    name = reviewer or getattr(obj, "annotator", None)
    if not name or not name.strip():
        raise UserError("a reviewer name is required (--reviewer NAME)")
    status = normalise_status(status)
    with obj.store() as store:
        generation_id = resolve_generation(store, generation)
        uuid = append_review(
            store, generation_id=generation_id, reviewer=name, status=status, note=note
        )
    echo(f"{generation}: {status} (review event {uuid})")  # the typed key: untrusted


@review_group.command("history")
@click.argument("generation")
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@click.pass_obj
def history_cmd(obj: AppContext, generation: str, fmt: str) -> None:
    """Every label and review event of GENERATION, oldest first."""

    with obj.store(read_only=True) as store:
        rows = [asdict(e) for e in case_history(store, resolve_generation(store, generation))]
    if fmt == "json":
        print_json(rows)  # the stored fields: item_index counts from 0
        return
    for row in rows:  # as people read it: "event 3" is the reference list's [3]
        row["item"] = "" if row["target"] is None else item_name(row["target"], row["item_index"])
    print_table(rows, HISTORY_COLUMNS, f"History of {generation}")


def register(group: click.Group) -> None:
    group.add_command(review_group)

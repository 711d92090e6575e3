"""`search-index`: bring the generation list's search index up to date with the rows
imports left for later (db.search_index), and the hint an import prints about them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from copyaudit.cli.output import echo
from db.search_index import backlog, catch_up

if TYPE_CHECKING:
    from copyaudit.cli.main import AppContext
    from db import Store

# rows a step of the command indexes: an import's chunk (db.cases.CHUNK_ROWS), ~1 CPU s of
# prose; a fifth fewer CPU seconds than the app's steps (db.search_index.STEP_ROWS),
# which hold the write lock more briefly while people label
CLI_STEP_ROWS = 5_000


def backlog_hint(store: Store) -> str | None:
    """What an import says (last, on standard error) about the rows waiting for the
    search index; None when none waits."""
    waiting = backlog(store)
    if not waiting.total:
        return None
    return (
        f"search index: {waiting.describe()} not indexed yet (search scans them); the app "
        "indexes them in the background, or run: copyaudit search-index"
    )


def echo_hint(hint: str | None) -> None:
    if hint is not None:
        echo(hint, err=True)


@click.command("search-index")
@click.option("--status", is_flag=True, help="Only say how many rows wait; index nothing.")
@click.pass_obj
def search_index_cmd(obj: AppContext, status: bool) -> None:
    """Index the rows imports stored without indexing them for search.

    An import stores its rows first and leaves their trigram index (the generation
    list's search) for later: indexing costs several times the import itself. Search
    works all along (it scans the rows not indexed yet); this command, or the app in the
    background as it opens, indexes them. It steps 5,000 rows at a time, each step
    committed: stopped, it goes on from there next time."""

    with obj.store(read_only=status) as store:
        waiting = backlog(store)
        if status or not waiting.total:
            state = "up to date" if not waiting.total else f"{waiting.describe()} waiting"
            echo(f"search index: {state}")
            return
        tenths = [0]

        def progress(done: int, total: int) -> None:
            if total and done * 10 // total > tenths[0]:  # a line each tenth of the backlog
                tenths[0] = done * 10 // total
                echo(f"search index: {done:,} of {total:,} rows indexed", err=True)

        done = catch_up(store, step_rows=CLI_STEP_ROWS, on_step=progress)
    echo(f"search index: {done:,} rows indexed ({waiting.describe()}); up to date")


def register(group: click.Group) -> None:
    group.add_command(search_index_cmd)

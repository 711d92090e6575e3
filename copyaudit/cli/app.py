"""Opening the terminal app, and the `demo` command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from copyaudit.cli.options import judge_options
from copyaudit.cli.output import print_table
from copyaudit.engine.demo import build_demo
from copyaudit.identity import resolve_annotator
from copyaudit.judges.options import JudgeOptions
from db.queries import table_counts

DEMO_DB = "copyaudit-demo.db"


def open_app(obj: Any) -> None:
    """Open the Textual app on the database (or print its summary where there is none)."""
    try:
        from screens.app import run_app  # deferred: loads textual
    except ImportError:
        with obj.store() as store:
            counts = table_counts(store)
        print_table(
            [{"table": k, "rows": v} for k, v in counts.items()],
            ["table", "rows"],
            f"copyaudit database {obj.db_path}",
        )
        return

    # --annotator wins and is remembered; else the remembered name; else the app asks
    run_app(obj.db_path, annotator=resolve_annotator(getattr(obj, "annotator", None)))


@click.command("demo")
@click.option("--no-tui", is_flag=True, help="Build the demo database, do not open the app.")
@judge_options
@click.pass_obj
def demo_cmd(obj: Any, no_tui: bool, judging: JudgeOptions) -> None:
    """Build a demo database from the bundled samples (idempotent) and open it.

    The database is ./copyaudit-demo.db unless --db or $COPYAUDIT_DB names one.
    """

    if not obj.db_explicit:
        obj.db_path = Path(DEMO_DB)
    with obj.store() as store:
        summary = build_demo(store, judging=judging)
    for judge, reason in summary.skipped:
        click.echo(f"skipped judge {judge}: {reason}", err=True)
    added = sum(summary.suites.values()) + sum(summary.runs.values()) + summary.scores
    click.echo(
        f"demo database {obj.db_path}: {len(summary.suites)} suites, {len(summary.runs)} runs"
        + (f" ({added} new rows)" if added else " (already up to date)")
    )
    if not no_tui:
        open_app(obj)


def register(group: click.Group) -> None:
    group.add_command(demo_cmd)

"""The `demo` command: build the demo database from the samples and open it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from copyaudit.cli.evaluate import RichProgress
from copyaudit.cli.options import judge_options
from copyaudit.cli.output import echo
from copyaudit.cli.tui import open_app
from copyaudit.engine import demo_pz
from copyaudit.engine.demo import build_demo, build_takedown_demo
from copyaudit.errors import UserError
from copyaudit.judges.options import JudgeOptions

if TYPE_CHECKING:
    from copyaudit.cli.main import AppContext

DEMO_DB = "copyaudit-demo.db"


@click.command("demo")
@click.option("--no-tui", is_flag=True, help="Build the demo database, do not open the app.")
@click.option(
    "--takedown",
    is_flag=True,
    help="Also run the takedown comparison on the literal samples with the embedded "
    "model (5 methods x 2 cases x 24 tokens; minutes on a CPU).",
)
@click.option(
    "--no-pz-map",
    is_flag=True,
    help=f"Skip the memorisation map: p_z of the sample passages of {demo_pz.WORK} in "
    f"windows of {demo_pz.PREFIX_TOKENS} + {demo_pz.CONTINUATION_TOKENS} tokens every "
    f"{demo_pz.STRIDE}, scored by the embedded model (about a minute on a CPU, once).",
)
@judge_options
@click.pass_obj
def demo_cmd(
    obj: AppContext, no_tui: bool, takedown: bool, no_pz_map: bool, judging: JudgeOptions
) -> None:
    """Build a demo database from the bundled samples (idempotent) and open it.

    The database is ./copyaudit-demo.db unless --db or $COPYAUDIT_DB names one. The
    memorisation map is scored in the app's background (the dashboard shows its
    progress), or here before the command ends with --no-tui.
    """

    if not obj.db_explicit:
        obj.db_path = Path(DEMO_DB)
    progress = RichProgress()  # a line per step and a bar per judge, on standard error
    with obj.store() as store, progress.bar:
        summary = build_demo(store, judging=judging, on_progress=progress)
    for judge, reason in summary.skipped:
        click.echo(f"skipped judge {judge}: {reason}", err=True)
    added = sum(summary.suites.values()) + sum(summary.runs.values()) + summary.scores
    click.echo(
        f"demo database {obj.db_path}: {len(summary.suites)} suites, {len(summary.runs)} runs"
        + (f" ({added} new rows)" if added else " (already up to date)")
    )
    background = None if no_pz_map else _memorisation_map(obj.db_path, no_tui, progress)
    if takedown:
        echo("demo: the takedown comparison (5 methods, the embedded model)", err=True)
        with progress.bar:
            table = build_takedown_demo(obj.db_path, on_progress=progress)
        click.echo(table, nl=False)
    if not no_tui:
        open_app(obj, start_runs=[background] if background is not None else [])


def _memorisation_map(
    db_path: Path, no_tui: bool, progress: RichProgress
) -> demo_pz.DemoMapRequest | None:
    """Score the map here (--no-tui), or return its run for the app to start in the
    background (None: the map is complete, nothing to start)."""
    if not no_tui:
        background = demo_pz.pending_map(db_path)
        click.echo(
            "memorisation map: already scored"
            if background is None
            else f"memorisation map: run {background.run_name()} starts in the app's "
            "background (progress on the dashboard; m on the run opens the map once done)"
        )
        return background
    with progress.bar:
        outcome = demo_pz.build_pz_demo(db_path, on_progress=progress)
    click.echo("memorisation map: " + (outcome.summary() if outcome else "already scored"))
    if outcome is not None and outcome.status == "failed":
        raise UserError(outcome.error or "the memorisation map's run failed")
    return None


def register(group: click.Group) -> None:
    group.add_command(demo_cmd)

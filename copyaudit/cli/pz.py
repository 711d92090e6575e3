"""`copyaudit pz SUITE`: p_z of every window of an extraction suite, and its figures."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from copyaudit.cli.evaluate import execute_with_progress
from copyaudit.cli.options import POSITIVE_INT, run_options
from copyaudit.cli.output import echo, print_json
from copyaudit.errors import UserError
from db.runs import run_row

if TYPE_CHECKING:
    from copyaudit.cli.main import AppContext


@click.command("pz")
@click.argument("suite")
@run_options(
    default_name="SUITE-pz-MODEL",
    batch_size=16,
    batch_help="Windows per forward pass (halved on out-of-memory); raise it on a GPU.",
    chat_help="Not used: p_z reads the work's tokens as they stand (--chat is refused).",
)
@click.option(
    "--schemes",
    default="greedy,topk",
    show_default=True,
    help="Decoding schemes, comma separated: greedy, topk, sampling.",
)
@click.option("--top-k", type=POSITIVE_INT, default=40, show_default=True, help="topk: k.")
@click.option(
    "--temperature",
    type=click.FloatRange(min=0, min_open=True),
    default=1.0,
    show_default=True,
    help="topk and sampling: the softmax temperature.",
)
@click.option(
    "--p",
    "p",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.95,
    show_default=True,
    help="n_for_p: the tries after which the suffix comes out with probability p.",
)
@click.option("--limit", type=POSITIVE_INT, help="Only the first N windows.")
@click.option(
    "--case",
    "cases",
    multiple=True,
    help="Only this case id (repeatable): a window's replay, as its dossier gives it.",
)
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md", show_default=True)
@click.pass_obj
def pz_cmd(
    obj: AppContext,
    suite: str,
    run_fields: dict[str, Any],
    schemes: str,
    top_k: int,
    temperature: float,
    p: float,
    limit: int | None,
    cases: tuple[str, ...],
    fmt: str,
) -> None:
    """Score every window of the extraction SUITE: log p_z, p_z and n_for_p under each
    decoding scheme from one teacher-forced forward pass per batch (no generation);
    resumes if the run exists."""
    from copyaudit.engine.pz_run import PzRequest  # deferred: loads torch
    from copyaudit.reports.pz import map_markdown, memorisation_map, pz_figures, pz_markdown

    request = PzRequest(
        suite=suite,
        **run_fields,
        schemes=tuple(s.strip() for s in schemes.split(",") if s.strip()),
        top_k=top_k,
        temperature=temperature,
        p=p,
        limit=limit,
        cases=cases,
    )
    outcome = execute_with_progress(obj.db_path, request)
    echo(outcome.summary(), err=fmt == "json")
    with obj.store() as store:
        row = run_row(store, outcome.run)
        figures = pz_figures(store, int(row["id"]))
        maps = memorisation_map(store, int(row["id"]))
    if fmt == "json":
        report = {"run": outcome.run, "suite": suite, "model": row["model"], "pz": figures}
        print_json({**report, "map": maps})
    else:
        echo(pz_markdown(figures) + ("\n" + map_markdown(maps) if maps else ""), nl=False)
    if outcome.status == "failed":
        raise UserError(outcome.error or "the run failed")


def register(group: click.Group) -> None:
    group.add_command(pz_cmd)

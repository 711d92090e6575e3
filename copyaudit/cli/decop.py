"""DE-COP command: score a decop suite and print its report."""

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


@click.command("decop")
@click.argument("suite")
@run_options(
    default_name="SUITE-decop-MODEL",
    batch_size=24,
    batch_help="Prompts per forward pass (each passage has 24); raise it on a GPU.",
    chat_help="Prompt format: the model's chat template with the authors' system prompt, the "
    "answer read where the assistant turn opens; or the bare question (default: chat when "
    "the model has a chat template; a resumed run keeps its format).",
)
@click.option(
    "--mode",
    type=click.Choice(["completions", "chat"]),
    default="completions",
    show_default=True,
    help="Endpoint API for --backend openai.",
)
@click.option(
    "--letter-only",
    is_flag=True,
    help="Endpoints without log-probabilities: take the letter the model answers (one-hot).",
)
@click.option(
    "--calibrate-on",
    help="'auto' (hold out every other clean work in title order, half of them) or a comma "
    "list of clean works to fit the label calibration on; they are left out of the evaluation.",
)
@click.option(
    "--passages-per-work",
    type=POSITIVE_INT,
    help="A screening run: only the first N passages of each work (the default name says so).",
)
@click.option(
    "--length",
    help="BookTection: score only the passages of this Length (small, medium, large; the "
    "paper's BookTection-128 is medium). Required when the suite holds several lengths.",
)
@click.option(
    "--no-baselines",
    is_flag=True,
    help="Skip perplexity, zlib, lowercase and Min-K% (they need a local model).",
)
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md", show_default=True)
@click.pass_obj
def decop_cmd(
    obj: AppContext,
    suite: str,
    run_fields: dict[str, Any],
    mode: str,
    letter_only: bool,
    calibrate_on: str | None,
    passages_per_work: int | None,
    length: str | None,
    no_baselines: bool,
    fmt: str,
) -> None:
    """Run DE-COP on SUITE: every passage in all 24 option orders, the answer-letter
    probabilities from one forward pass per prompt; resumes if the run exists."""
    from copyaudit.studies.decop.report import decop_markdown, decop_report  # deferred: loads scipy
    from copyaudit.studies.decop.run import DecopRequest  # deferred: loads scipy

    request = DecopRequest(
        suite=suite,
        **run_fields,
        mode=mode,
        letter_only=letter_only,
        calibrate_on=calibrate_on,
        passages_per_work=passages_per_work,
        length=length,
        baselines=not no_baselines,
    )
    # progress on standard error: standard output carries the report only
    outcome = execute_with_progress(obj.db_path, request)
    echo(
        f"run {outcome.run}: {outcome.status}; {outcome.scored} passages scored"
        + (f", {outcome.already_scored} already stored" if outcome.already_scored else "")
        + (f", {outcome.failed_prompts} prompts unreadable" if outcome.failed_prompts else ""),
        err=fmt == "json",
    )
    with obj.store() as store:
        row = run_row(store, outcome.run)
        report = {
            "run": outcome.run,
            "suite": suite,
            "kind": "decop",
            "model": row["model"],
            "status": row["status"],
            "decop": decop_report(store, outcome.run),
        }
    if fmt == "json":
        print_json(report)
    else:
        echo(decop_markdown(report), nl=False)
    if outcome.status == "failed":
        raise UserError(outcome.error or "the run failed")


def register(group: click.Group) -> None:
    group.add_command(decop_cmd)

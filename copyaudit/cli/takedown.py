"""`copyaudit takedown`: CoTaEval's takedown comparison of one suite and model — one run
per method, judged with the eight infringement metrics, then the takedown table."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import click

from copyaudit.cli.evaluate import RichProgress, parse_templates
from copyaudit.cli.options import (
    COUNT,
    POSITIVE_INT,
    decoding_method_options,
    judge_options,
    run_options,
)
from copyaudit.cli.output import echo, print_json
from copyaudit.engine.runner import RunRequest
from copyaudit.engine.takedown import method_requests, parse_methods, run_takedown
from copyaudit.judges.options import JudgeOptions
from copyaudit.studies.takedown.render import takedown_markdown
from copyaudit.studies.takedown.table import METHODS, takedown_table

if TYPE_CHECKING:
    from copyaudit.cli.main import AppContext


@click.command("takedown")
@click.argument("suite")
@run_options(
    default_name="SUITE-MODEL-METHOD, one run per method",
    batch_size=8,
    chat_help="Prompt format (default: chat when the model has a chat template).",
)
@click.option(
    "--methods",
    default=",".join(METHODS),
    show_default=True,
    help="Takedown methods, one run each: none, system (prompt), memfree, topk, rcad.",
)
@click.option("--templates", default="1", show_default=True, help="Prompt templates, e.g. 1,2")
@click.option("--shots", type=COUNT, help="Few-shot demonstrations (default: the template's).")
@click.option("--limit", type=POSITIVE_INT, help="Only the first N cases.")
@click.option("--max-new-tokens", type=POSITIVE_INT, help="Override the token budget.")
@decoding_method_options
@judge_options
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md", show_default=True)
@click.option("--table-only", is_flag=True, help="Print the table of the runs stored; run nothing.")
@click.pass_obj
def takedown_cmd(
    obj: AppContext,
    suite: str,
    run_fields: dict[str, Any],
    methods: str,
    templates: str,
    shots: int | None,
    limit: int | None,
    max_new_tokens: int | None,
    method_fields: dict[str, Any],
    judging: JudgeOptions,
    fmt: str,
    table_only: bool,
) -> None:
    """Compare takedown methods on SUITE with one model (CoTaEval): run each method
    (resuming what exists), judge it, print the takedown table."""
    if not table_only:
        base = RunRequest(
            suite=suite,
            **run_fields,
            templates=parse_templates(templates),
            shots=shots,
            limit=limit,
            max_new_tokens=max_new_tokens,
            judging=judging,
            **method_fields,
        )
        chosen = parse_methods(methods)
        method_requests(base, chosen)  # refused before any run starts
        progress = RichProgress()
        cancel = threading.Event()
        try:
            with progress.bar:
                outcomes = run_takedown(
                    obj.db_path, base, chosen, on_progress=progress, cancel=cancel
                )
        except KeyboardInterrupt:
            cancel.set()
            raise
        for outcome in outcomes:
            for judge, reason in outcome.skipped_judges:
                echo(f"{outcome.run}: skipped judge {judge}: {reason}", err=True)
            echo(outcome.summary(), err=True)
    with obj.store() as store:
        table = takedown_table(store, suite, run_fields["model"])
    if fmt == "json":
        print_json(table.as_dict())
    else:
        echo(takedown_markdown(table), nl=False)


def register(group: click.Group) -> None:
    group.add_command(takedown_cmd)

"""Evaluation commands: run, judge, report."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

from copyaudit.cli.options import (
    COUNT,
    POSITIVE_INT,
    SEED,
    decoding_method_options,
    judge_options,
    output_options,
    run_options,
)
from copyaudit.cli.output import echo, emit, print_json
from copyaudit.engine.runner import MITIGATIONS, RunRequest, judge_run
from copyaudit.judges.options import JudgeOptions
from copyaudit.prompts import NOTICE_MITIGATIONS, NOTICE_POSITIONS
from copyaudit.reports.exports import REPORT_FORMATS, anchored_report, report_document
from copyaudit.reports.output_file import check_destination
from copyaudit.reports.run_report import build_report, report_markdown
from copyaudit.studies.notice.report import parse_thresholds
from copyaudit.verification.calibration import (
    DECIDE_AT,
    OBJECTIVES,
    calibrate_run,
    outcome_lines,
)
from copyaudit.verification.judge_config import write_judge_config
from db.run_owner import owned

if TYPE_CHECKING:
    from copyaudit.cli.main import AppContext
    from copyaudit.runs.lifecycle import RunnableRequest
    from copyaudit.runs.progress import Progress as RunProgress


def parse_templates(value: str) -> tuple[int, ...]:
    try:
        templates = tuple(int(t) for t in value.split(",") if t.strip())
    except ValueError:
        raise click.BadParameter(f"'{value}' is not a comma list of template numbers") from None
    if not templates:
        raise click.BadParameter("give at least one template")
    return templates


class RichProgress:
    """A Rich progress bar per phase, fed by the runner's Progress events; where the
    output is not a terminal (a log file), a plain line every LOG_EVERY_S seconds and
    at the end of each phase instead."""

    LOG_EVERY_S = 30.0

    def __init__(self, console: Console | None = None) -> None:
        """`console`: where to draw (default: standard error, so that a report printed
        on standard output stays clean when redirected)."""

        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[figures]}"),
            console=console or Console(stderr=True),
        )
        self.tasks: dict[str, Any] = {}
        self.logged: dict[str, float] = {}  # phase -> when its last plain line was printed

    def __call__(self, event: RunProgress) -> None:
        key = event.phase if event.phase != "judge" else f"judge {event.message}"
        if event.phase == "load":
            self.bar.console.print(event.message, markup=False, highlight=False)
            return
        if not self.bar.console.is_terminal:
            self._log(key, event)
            return
        if key not in self.tasks:
            self.tasks[key] = self.bar.add_task(key, total=event.total, figures="")
        self.bar.update(
            self.tasks[key],
            completed=event.done + event.partial,
            total=event.total,
            figures=event.figures(),
        )

    def _log(self, key: str, event: RunProgress) -> None:
        now = time.monotonic()
        last = self.logged.get(key)
        if last is None or event.done >= event.total or now - last >= self.LOG_EVERY_S:
            self.logged[key] = now
            self.bar.console.print(event.describe(key), markup=False, highlight=False)


def execute_with_progress(db_path: Path, request: RunnableRequest) -> Any:
    """Run `request` (any study's: engine.lifecycle.RunnableRequest) with a progress bar
    on standard error; Ctrl-C sets the cancel flag and goes on up (the run is stored
    cancelled, the command exits 130)."""
    progress = RichProgress()
    cancel = threading.Event()
    try:
        with progress.bar:
            return request.execute(db_path, on_progress=progress, cancel=cancel)
    except KeyboardInterrupt:
        cancel.set()
        raise


@click.command("run")
@click.argument("suite")
@run_options(
    default_name="SUITE-MODEL-MITIGATION",
    batch_size=8,
    chat_help="Prompt format (default: chat when the model has a chat template).",
)
@click.option("--templates", default="1", show_default=True, help="Prompt templates, e.g. 1,2,3")
@click.option("--shots", type=COUNT, help="Few-shot demonstrations (default: the template's).")
@click.option("--limit", type=POSITIVE_INT, help="Only the first N cases.")
@click.option(
    "--mitigation",
    type=click.Choice(MITIGATIONS),
    default="none",
    show_default=True,
)
@click.option(
    "--notice-position",
    type=click.Choice(NOTICE_POSITIONS),
    default=NOTICE_POSITIONS[0],
    show_default=True,
    help="Notice suites: where the notice goes (before_query is the study's layout).",
)
@click.option(
    "--notice-mitigation",
    type=click.Choice(NOTICE_MITIGATIONS),
    default=NOTICE_MITIGATIONS[0],
    show_default=True,
    help="Notice suites: the 'copyrighted' keyword in the query and/or a copyright warning "
    "before it, once or repeated (the study's mitigations).",
)
@decoding_method_options
@judge_options
@click.option(
    "--max-new-tokens",
    type=POSITIVE_INT,
    help="Override the task's token budget (200 literal/qa, 1024 nonliteral).",
)
@click.option(
    "--retry-failed/--no-retry-failed",
    default=True,
    show_default=True,
    help="Generate again the cases whose generation failed before (an endpoint outage).",
)
@click.pass_obj
def run_cmd(
    obj: AppContext,
    suite: str,
    run_fields: dict[str, Any],
    templates: str,
    shots: int | None,
    limit: int | None,
    mitigation: str,
    notice_position: str,
    notice_mitigation: str,
    method_fields: dict[str, Any],
    judging: JudgeOptions,
    max_new_tokens: int | None,
    retry_failed: bool,
) -> None:
    """Generate and judge SUITE with a model; resumes if the run exists (and retries
    the generations that failed, unless --no-retry-failed)."""

    request = RunRequest(
        suite=suite,
        **run_fields,
        templates=parse_templates(templates),
        shots=shots,
        limit=limit,
        mitigation=mitigation,
        notice_position=notice_position,
        notice_mitigation=notice_mitigation,
        judging=judging,
        max_new_tokens=max_new_tokens,
        retry_failed=retry_failed,
        **method_fields,
    )
    outcome = execute_with_progress(obj.db_path, request)
    for judge, reason in outcome.skipped_judges:
        echo(f"skipped judge {judge}: {reason}", err=True)
    click.echo(
        f"run {outcome.run}: {outcome.shown_status()}; {outcome.generated} generated, "
        f"{outcome.failed} failed, {outcome.judged} scores stored"
    )
    with obj.store() as store:
        echo(report_markdown(build_report(store, outcome.run)))


@click.command("judge")
@click.argument("run")
@judge_options
@click.option("--rejudge", is_flag=True, help="Score again what these judges already scored.")
@click.option(
    "--calibrate-from-labels",
    is_flag=True,
    help="Fit each selected score judge's threshold to people's labels on RUN "
    "(cross-validated, grouped by story), store it as a new judge configuration and "
    "re-judge RUN with it.",
)
@click.option(
    "--folds",
    type=click.IntRange(2),
    default=5,
    show_default=True,
    help="With --calibrate-from-labels: cross-validation folds.",
)
@click.option(
    "--seed",
    type=SEED,
    default=0,
    show_default=True,
    help="With --calibrate-from-labels: the seed of the folds and intervals.",
)
@click.option(
    "--objective",
    type=click.Choice(OBJECTIVES),
    default=OBJECTIVES[0],
    show_default=True,
    help="With --calibrate-from-labels: fit the item threshold to item F1, or fit the "
    "events judge's count threshold k with it to the story decision (run-level agreement "
    "of 'at least k events' with people's, on generations whose every event is labelled).",
)
@click.option(
    "--decide-at",
    type=POSITIVE_INT,
    default=DECIDE_AT,
    show_default=True,
    help="With --calibrate-from-labels: people's decision flags a story with at least this "
    "many supported events (CopyBench's 5).",
)
@click.option(
    "--save-config",
    type=click.Path(dir_okay=False, path_type=Path),
    help="With --calibrate-from-labels: also write the calibrated configuration to this "
    "JSON file, for --judge-config on another run.",
)
@click.pass_obj
def judge_cmd(
    obj: AppContext,
    run: str,
    judging: JudgeOptions,
    rejudge: bool,
    calibrate_from_labels: bool,
    folds: int,
    seed: int,
    objective: str,
    decide_at: int,
    save_config: Path | None,
) -> None:
    """(Re)judge the generations of RUN, generated here or imported."""

    progress = RichProgress()
    if save_config is not None and not calibrate_from_labels:
        raise click.UsageError("--save-config goes with --calibrate-from-labels")
    if calibrate_from_labels:
        with obj.store() as store, owned(store, run, "judge"), progress.bar:
            outcomes, refused = calibrate_run(
                store,
                run,
                judging,
                folds=folds,
                seed=seed,
                on_progress=progress,
                objective=objective,
                decide_at=decide_at,
            )
        for judge, reason in refused:
            echo(f"not calibrated {judge}: {reason}", err=True)
        for outcome in outcomes:
            click.echo("\n".join(outcome_lines(outcome)))
        if save_config is not None:
            write_judge_config(save_config, outcomes)
            click.echo(f"calibrated configuration written to {save_config}")
        return
    judging = _with_case_sources(obj, run, judging)
    with obj.store() as store, owned(store, run, "judge"), progress.bar:
        stored, skipped = judge_run(store, run, judging, rejudge=rejudge, on_progress=progress)
    for judge, reason in skipped:
        echo(f"skipped judge {judge}: {reason}", err=True)
    echo(f"run {run}: {stored} scores stored")


def _with_case_sources(obj: AppContext, run: str, judging: JudgeOptions) -> JudgeOptions:
    """For the trace judge, the run's cases' own sources in the library beside the
    database first (copyaudit.engine.case_sources), said on the terminal; a library
    named by --trace-library is another's and is left as it is."""
    from copyaudit.engine.case_sources import add_run_sources
    from copyaudit.tracing.library import library_folder

    if "trace" not in judging.judges.split(","):
        return judging
    folder = library_folder(obj.db_path)
    if judging.trace_library not in (None, str(folder)):
        echo(f"library: {judging.trace_library} is not this database's: no source added")
        return judging
    with obj.store() as store:
        sources = add_run_sources(store, run)
    echo(sources.summary())
    exists = (folder / "index").is_dir()
    return replace(judging, trace_library=str(folder)) if exists else judging


@click.command("report")
@click.argument("run")
@click.option("--format", "fmt", type=click.Choice(REPORT_FORMATS), default="md", show_default=True)
@output_options
@click.option(
    "--notice-threshold",
    "notice_thresholds",
    multiple=True,
    metavar="METRIC=LOW,HIGH",
    help="Notice runs: similarity thresholds of the false compliance (< LOW, no refusal) "
    "and false violation (>= HIGH, refusal) lists, e.g. notice_rouge=0.2,0.8 (repeatable).",
)
@click.option(
    "--file-hash",
    is_flag=True,
    help="html: add the database file's SHA-256 to the Integrity section (it reads the "
    "whole file; the chain heads and the anchor are always there).",
)
@click.pass_obj
def report_cmd(
    obj: AppContext,
    run: str,
    fmt: str,
    notice_thresholds: tuple[str, ...],
    file_hash: bool,
    output: Path | None,
    force: bool,
) -> None:
    """Summary of RUN: CopyBench's columns and every score's distribution (html: one
    self-contained page with a histogram image per metric)."""

    thresholds = parse_thresholds(notice_thresholds)
    if file_hash and fmt != "html":
        raise click.UsageError("--file-hash is for --format html (its Integrity section)")
    if output is not None:
        check_destination(output, database=obj.db_path, force=force)  # before any work
    with obj.store(read_only=True) as store:
        report = anchored_report(store, run, notice_thresholds=thresholds)
        text = report_document(store, report, fmt, database=obj.db_path, file_hash=file_hash)
    if fmt == "json" and output is None:
        print_json(report)
        return
    emit(text, output, database=obj.db_path, force=force)


def register(group: click.Group) -> None:
    for command in (run_cmd, judge_cmd, report_cmd):
        group.add_command(command)

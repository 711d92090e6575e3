"""Data commands: import, import-generations, suites, runs, export."""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from copyaudit.cli.options import (
    POSITIVE_INT,
    folder_output_options,
    map_option,
    skip_invalid_option,
)
from copyaudit.cli.output import (
    TerminalStream,
    echo,
    echo_skipped,
    echo_warnings,
    print_json,
    print_table,
)
from copyaudit.cli.search_index import backlog_hint, echo_hint
from copyaudit.columns import ColumnMap
from copyaudit.errors import UserError
from copyaudit.formats import read_cases, read_generation_files
from copyaudit.frameworks.registry import FRAMEWORKS
from copyaudit.reports.exports import (
    EXPORT_KINDS,
    ROW_FORMATS,
    RUN_EXPORTS,
    export_rows,
    write_rows,
)
from copyaudit.reports.output_file import check_destination, output_file, output_target
from copyaudit.rows import read_ahead, skipped_note
from copyaudit.studies.decop.published_models import PUBLISHED_MODELS
from copyaudit.studies.registry import STUDIES, study
from db.cases import CHUNK_ROWS, import_cases, run_import_note
from db.queries import runs_summary, suites_summary
from db.runs import import_generations, run_row, suite_id

if TYPE_CHECKING:
    from copyaudit.cli.main import AppContext
    from copyaudit.cli.output import TextOut

FORMAT_TABLE_JSON = click.Choice(["table", "json"])
# `export --format` beyond text: what each writes, and the exports that offer them
ARROW_FORMATS = {"parquet": "Parquet file", "datasets": "`datasets` save_to_disk folder"}
ARROW_EXPORTS = ("generations", "judgments")
# `import KIND` beyond the studies' case files: a study's published results, as a run
RESULT_KINDS = {"decop-results": "DE-COP's published per-book workbooks (a run; --model)"}
# `import --doc-type`: the kinds whose question can name different things
DOC_TYPES = {kind: spec.doc_types for kind, spec in STUDIES.items() if spec.doc_types is not None}
# `import --prefix-tokens`: the kinds whose cases can be cut from whole texts
SPLIT_KINDS = tuple(kind for kind, spec in STUDIES.items() if spec.split_cases is not None)


@click.command("import")
@click.argument("kind", metavar=f"KIND ({'|'.join([*STUDIES, *RESULT_KINDS])})")
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "--suite",
    help="Suite name (default: the file name without extension); decop-results: the suite "
    "the results answer (default: the DE-COP suite holding the first file's work).",
)
@click.option(
    "--replace",
    is_flag=True,
    help="Overwrite cases whose content changed; decop-results: replace the run's results.",
)
@click.option(
    "--model",
    help=f"decop-results: the model whose columns to read ({', '.join(PUBLISHED_MODELS)}).",
)
@click.option(
    "--run", "run_name", help="decop-results: the run's name (default SUITE-decop-MODEL-published)."
)
@click.option(
    "--doc-type",
    type=click.Choice(sorted({t for d in DOC_TYPES.values() for t in d.choices})),
    help=" ".join(f"{kind}: {d.help}" for kind, d in DOC_TYPES.items()),
)
@click.option(
    "--prefix-tokens",
    type=POSITIVE_INT,
    help=f"{'/'.join(SPLIT_KINDS)}: read {{id, title, text}} records and cut each text "
    "after its first K tokens (nltk's Treebank tokens, as HELM's copyright metrics count).",
)
@click.option(
    "--continuation-tokens",
    type=POSITIVE_INT,
    help="With --prefix-tokens: keep the next M tokens as the true continuation "
    "(default: the rest of the text).",
)
@map_option
@click.option(
    "--stride",
    type=POSITIVE_INT,
    help="extraction: FILE is a plain-text work (or a folder of .txt works) cut into token "
    "windows of --prefix-tokens + --continuation-tokens (default 50) tokens of --tokenizer, "
    "one every N tokens (for `copyaudit pz`).",
)
@click.option(
    "--tokenizer",
    default="default",
    show_default=True,
    help="With --stride: the model whose tokenizer cuts the windows (score them with it).",
)
@skip_invalid_option("record the unusable ones as skipped")
@click.pass_obj
def import_cmd(
    obj: AppContext,
    kind: str,
    file: Path,
    suite: str | None,
    replace: bool,
    doc_type: str | None,
    prefix_tokens: int | None,
    continuation_tokens: int | None,
    skip_invalid: bool,
    model: str | None,
    run_name: str | None,
    columns: ColumnMap,
    stride: int | None,
    tokenizer: str,
) -> None:
    """Import cases of KIND from FILE in the source study's format: JSON Lines or a JSON
    array, CSV, TSV, Parquet, an Arrow file or a `datasets` save_to_disk folder (told
    apart by content and name); --map renames its columns; without an `id` column each
    case's id is derived from its content.

    decop-results: FILE is one of DE-COP's published *_Paraphrases_Oversampling.xlsx
    workbooks, or a directory of them (searched recursively); the rows of --model become
    a DE-COP run over the suite that holds their passages (matched by work ID and text).
    Importing the same files again changes nothing."""

    if kind in RESULT_KINDS:
        if columns:
            raise UserError(f"--map is for case and generation files, not {kind}")
        _import_results(obj, file, suite, replace, model, run_name, skip_invalid)
        return
    if model is not None or run_name is not None:
        raise UserError(f"--model and --run are for {', '.join(RESULT_KINDS)}")
    if doc_type is not None and kind not in DOC_TYPES:
        files = "; ".join(f"{k} files ({d.files})" for k, d in DOC_TYPES.items())
        raise UserError(f"--doc-type is for {files}")
    if (prefix_tokens is not None or continuation_tokens is not None) and kind not in SPLIT_KINDS:
        raise UserError(
            f"--prefix-tokens and --continuation-tokens are for {', '.join(SPLIT_KINDS)}"
        )
    if continuation_tokens is not None and prefix_tokens is None:
        raise UserError("--continuation-tokens needs --prefix-tokens")
    # the file streams into the import's one transaction: a file found bad on the way
    # (at its end, unusable records) is rolled back whole
    if stride is not None:
        if columns:
            raise UserError("--map is for case files, not for plain-text works (--stride)")
        loaded = _read_windows(kind, file, prefix_tokens, continuation_tokens, stride, tokenizer)
    else:
        loaded = read_cases(kind, file, prefix_tokens, continuation_tokens, columns)
    plan = study(kind).prepare_import(loaded.accepted(skip_invalid), doc_type)
    doc_type, note = plan.doc_type, plan.note
    cases = read_ahead(plan.cases, CHUNK_ROWS)  # a small file is checked before the store opens
    name = suite or file.stem
    with obj.store() as store:
        summary = import_cases(
            store,
            name,
            kind,
            cases,
            source=str(file),
            replace=replace,
            skipped=loaded.problems,
            doc_type=doc_type,
        )
        hint = backlog_hint(store)
    # the warnings are complete once the file was read: after the import
    echo_warnings(file, loaded.warnings)
    count = summary.added + summary.unchanged + summary.replaced
    click.echo(
        f"{name}: {summary.added} added, {summary.unchanged} unchanged, "
        f"{summary.replaced} replaced ({count} {kind} cases in {file}"
        + (f"; {len(loaded.problems)} of {loaded.total} records skipped" if loaded.problems else "")
        + "".join(f"; {n}" for n in loaded.notes)
        + f"{note})"
    )
    echo_skipped(loaded.problems)
    echo_hint(hint)


def _read_windows(
    kind: str,
    path: Path,
    prefix_tokens: int | None,
    continuation_tokens: int | None,
    stride: int,
    tokenizer: str,
) -> Any:
    """`import extraction WORK.txt --stride S`: the works cut into token windows."""
    # deferred: load transformers
    from copyaudit.models.tokenizer_loading import load_tokenizer
    from copyaudit.studies.extraction.windows import Cutting, tokenizer_digest, window_cases

    if kind != "extraction":
        raise UserError("--stride is for extraction (whole works cut into token windows)")
    if prefix_tokens is None:
        raise UserError("--stride needs --prefix-tokens K (the window's prefix)")
    loaded_tokenizer = load_tokenizer(tokenizer)
    cutting = Cutting(
        prefix_tokens,
        continuation_tokens or 50,
        stride,
        tokenizer,
        tokenizer_digest(loaded_tokenizer),
    )
    return window_cases(path, loaded_tokenizer, cutting)


def _import_results(
    obj: AppContext,
    path: Path,
    suite: str | None,
    replace: bool,
    model: str | None,
    run: str | None,
    skip_invalid: bool,
) -> None:
    """import decop-results (copyaudit.studies.decop.results_run)."""
    from copyaudit.studies.decop.results_run import import_decop_results  # defers openpyxl, scipy

    if model is None:
        raise UserError("import decop-results needs --model NAME (see --help)")
    with obj.store() as store:
        done = import_decop_results(
            store, path, model, suite=suite, run=run, replace=replace, skip_invalid=skip_invalid
        )
    click.echo(done.summary())


@click.command("import-generations")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--run",
    "run_name",
    help="Run to hold the generations (a file: required); a directory: the runs' prefix "
    "(RUN-STEM; default: the file's stem).",
)
@click.option("--suite", required=True, help="Suite whose cases they answer.")
@click.option(
    "--model",
    help="Label of the model that produced them (a file only; default: the rows' `model` "
    "field, else 'imported' for a new run).",
)
@click.option("--replace", is_flag=True, help="Overwrite generations whose output changed.")
@click.option(
    "--from",
    "framework",
    type=click.Choice(sorted(FRAMEWORKS)),
    help="PATH is this framework's log: its cases go into --suite (created if new) and "
    "its outputs into --run (default: the log's own name).",
)
@map_option
@skip_invalid_option("record the unusable ones as skipped")
@click.pass_obj
def import_generations_cmd(
    obj: AppContext,
    path: Path,
    run_name: str | None,
    suite: str,
    model: str | None,
    replace: bool,
    framework: str | None,
    skip_invalid: bool,
    columns: ColumnMap,
) -> None:
    """Import generations produced elsewhere ({case_id, output[, template, model]} as
    JSON Lines, CSV, TSV, Parquet, Arrow or a `datasets` save_to_disk folder; --map
    renames columns, e.g. --map output=completion).

    PATH is one file (one run, --run) or a directory of per-model files: each file in
    it (.jsonl, .json, .csv, .tsv, .parquet, .arrow, a save_to_disk folder) becomes one
    run, named after the file's stem (RUN-STEM with --run RUN), its model the rows'
    `model` field or, without one, the file's stem. All the files are imported in one
    transaction: one bad file imports nothing.

    --from helm|lm-eval|...: PATH is that framework's log (a HELM run directory, an
    lm-eval samples_<task>_<time>.jsonl); the log's cases are imported too, and the
    run records the model, decoding and files (sha256) the log names."""

    if framework is not None:
        from copyaudit.cli.frameworks import import_framework_log  # defers the readers

        import_framework_log(obj, framework, path, suite, run_name, model, replace)
        return
    files = read_generation_files(path, run_name, model, columns)
    # each file streams into the one transaction; a small one is read before the store opens
    streams = [read_ahead(file.rows(), CHUNK_ROWS) for file in files]
    unjudged: list[str] = []  # runs given generations that no judge has seen
    with obj.store() as store, store.transaction(durable=True):
        lines = []
        for file, rows in zip(files, streams, strict=True):
            added, unchanged, replaced = import_generations(
                store,
                run=file.run,
                suite=suite,
                model=functools.partial(getattr, file, "model"),  # read when needed
                rows=rows,
                source=str(file.path),
                replace=replace,
                skipped=file.loaded.problems,
                skip_invalid=skip_invalid,
            )
            note = run_import_note(store, int(run_row(store, file.run)["id"]))
            details = [f"model {file.model}"] if len(files) > 1 else []
            details += [note] if note else []
            suffix = f" ({'; '.join(details)})" if details else ""
            lines.append(f"{file.run}: {added} added, {unchanged} unchanged, {replaced} replaced")
            if added or replaced:
                unjudged.append(file.run)
            lines[-1] += suffix
        hint = backlog_hint(store)
    for file in files:  # complete once the files were read: after the import
        echo_warnings(file.path, file.loaded.warnings)
    echo("\n".join(lines))
    for run in unjudged:
        echo(f"{run}: not judged yet: copyaudit judge {run}", err=True)
    echo_hint(hint)


@click.command("suites")
@click.option("--format", "fmt", type=FORMAT_TABLE_JSON, default="table", show_default=True)
@click.pass_obj
def suites_cmd(obj: AppContext, fmt: str) -> None:
    """List suites with their kind and size, and the rows their imports skipped."""

    with obj.store(read_only=True) as store:
        rows = suites_summary(store)
    if fmt == "json":
        print_json(rows)
        return
    notes = {row["name"]: skipped_note(row["cases"], row["skipped"]) for row in rows}
    for row in rows:
        row["skipped"] = len(row["skipped"])
    print_table(rows, ["name", "kind", "cases", "works", "skipped", "created_at"], "Suites")
    for name, note in notes.items():
        if note is not None:
            echo(f"{name}: {note}")


@click.command("runs")
@click.option("--format", "fmt", type=FORMAT_TABLE_JSON, default="table", show_default=True)
@click.pass_obj
def runs_cmd(obj: AppContext, fmt: str) -> None:
    """List runs with their suite, model, status and progress."""

    with obj.store(read_only=True) as store:
        rows = runs_summary(store)
    if fmt == "json":
        print_json(rows)
        return
    for row in rows:
        row["progress"] = f"{row['generations']}/{row['total']}"
    print_table(
        rows,
        ["name", "suite", "kind", "backend", "model", "status", "progress", "finished_at"],
        "Runs",
    )


@contextmanager
def _output(path: Path | None, database: Path, force: bool) -> Iterator[TextOut]:
    if path is None:
        yield TerminalStream(sys.stdout)  # control sequences escaped
        return
    with output_file(path, database=database, force=force) as handle:
        yield handle


@click.command("export")
@click.argument("what", type=click.Choice(EXPORT_KINDS))
@click.option(
    "--run", "run_name", help="Only this run (generations, judgments, labels); decop: the run."
)
@click.option("--suite", help="Only this suite (cases).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice([*ROW_FORMATS, *ARROW_FORMATS]),
    default="jsonl",
    show_default=True,
    help="parquet: a Parquet file; datasets: a folder datasets.load_from_disk reads "
    f"(both for {' and '.join(ARROW_EXPORTS)}, with -o).",
)
@folder_output_options
@click.pass_obj
def export_cmd(
    obj: AppContext,
    what: str,
    run_name: str | None,
    suite: str | None,
    fmt: str,
    output: Path | None,
    force: bool,
) -> None:
    """Export WHAT as JSONL or CSV (generations and judgments also as Parquet or a
    `datasets` folder). Cases are written in their import format, so an exported suite
    imports back unchanged; generations are keyed run/case_id/template (and import
    back with import-generations, whatever the format).
    decop: one row per prompt of the DE-COP run --run (the prompt as sent, the true
    letter, the four probabilities, the chosen letter before and after calibration)."""

    if what in RUN_EXPORTS and run_name is None:
        raise UserError(f"export {what} needs --run NAME (a {RUN_EXPORTS[what]} run)")
    if fmt in ARROW_FORMATS:
        if what not in ARROW_EXPORTS:
            raise UserError(f"--format {fmt} is for {' and '.join(ARROW_EXPORTS)}")
        if output is None:
            raise UserError(f"--format {fmt} writes a {ARROW_FORMATS[fmt]}: name it with -o")
    if output is not None:
        folder = fmt == "datasets"
        check_destination(output, database=obj.db_path, force=force, replaceable_dir=folder)
    with obj.store(read_only=True) as store:
        if run_name is not None:
            run_row(store, run_name)  # a clear error for an unknown run
        if suite is not None:
            suite_id(store, suite)
        rows = export_rows(store, what, run_name, suite)
        if fmt in ARROW_FORMATS:
            assert output is not None
            count = _write_arrow(fmt, rows, output, obj.db_path, force)
        else:
            with _output(output, obj.db_path, force) as out:
                count = write_rows(rows, fmt, out)
    if output is not None:
        click.echo(f"wrote {count} {what} to {output}", err=True)


def _write_arrow(
    fmt: str, rows: Iterator[dict[str, Any]], output: Path, database: Path, force: bool
) -> int:
    """Parquet or a save_to_disk folder, through the same safe output path as -o."""
    from copyaudit.reports.arrow_output import write_dataset_dir, write_parquet  # defers pyarrow

    folder = fmt == "datasets"
    with output_target(output, database=database, force=force, folder=folder) as target:
        if folder:
            return write_dataset_dir(rows, target)
        return write_parquet(rows, target)


def register(group: click.Group) -> None:
    for command in (import_cmd, import_generations_cmd, suites_cmd, runs_cmd, export_cmd):
        group.add_command(command)

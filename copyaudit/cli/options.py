"""Option groups shared by several commands (one definition each)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from copyaudit.columns import ColumnMap
from copyaudit.endpoint_budget import DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_REQUEST_DEADLINE_S
from copyaudit.endpoint_url import check_base_url
from copyaudit.errors import UserError
from copyaudit.judges.options import JUDGE_BACKENDS, Calibration, JudgeOptions, stored_defaults
from copyaudit.judges.registry import JUDGE_NAMES, PRESETS
from copyaudit.tracing.corpus_trace import DEFAULT_MIN_TOKENS as CORPUS_MIN_TOKENS
from copyaudit.tracing.library import ENGINES as TRACE_ENGINES
from copyaudit.verification.judge_config import read_judge_config, stored_judge_config
from copyaudit.vocabulary import DTYPE_NAMES

MAX_INT64 = 2**63 - 1  # the largest integer the database stores
# a seed the database can store with what it seeded
SEED = click.IntRange(0, MAX_INT64)
# how many of something a person asks for (cases, tokens, resamples, a batch): 1 or more
POSITIVE_INT = click.IntRange(1)
# a count that may be none (few-shot demonstrations, an offset): 0 or more
COUNT = click.IntRange(0)


class FiniteFloat(click.FloatRange):
    """A number >= `min` (FiniteFloat(0)) that is finite: nan and ±inf are refused (they
    pass every comparison or none). Every float option has this type."""

    name = "finite float"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


def _apply(options: tuple[Callable[..., Any], ...], command: Callable[..., Any]) -> Any:
    for option in reversed(options):
        command = option(command)
    return command


def model_options(command: Callable[..., Any]) -> Any:
    """Which model answers: the embedded default, a local/hub model, or an endpoint."""
    return _apply(
        (
            click.option(
                "--model",
                default="default",
                show_default=True,
                help="'default' (embedded SmolLM2), a hub id, a local path, or the "
                "endpoint's model name.",
            ),
            click.option(
                "--backend", type=click.Choice(["hf", "openai"]), default="hf", show_default=True
            ),
            click.option(
                "--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1"
            ),
            click.option(
                "--api-key-env",
                default="OPENAI_API_KEY",
                show_default=True,
                help="Environment variable holding the endpoint's key.",
            ),
            *endpoint_limit_options(""),
        ),
        command,
    )


def endpoint_limit_options(prefix: str) -> tuple[Callable[..., Any], ...]:
    """--max-response-bytes and --request-deadline (with `prefix`, e.g. "judge-")."""
    return (
        click.option(
            f"--{prefix}max-response-bytes",
            type=POSITIVE_INT,
            default=DEFAULT_MAX_RESPONSE_BYTES,
            show_default=True,
            help="An endpoint answer larger than this fails that request (not retried).",
        ),
        click.option(
            f"--{prefix}request-deadline",
            type=FiniteFloat(0, min_open=True),
            default=DEFAULT_REQUEST_DEADLINE_S,
            show_default=True,
            help="Seconds one endpoint request may take in all, retries included; past "
            "it the request fails even while bytes still arrive.",
        ),
    )


def judge_options(command: Callable[..., Any]) -> Any:
    """The judge choices (run, judge, demo), handed to the command as one
    `judging: JudgeOptions`."""

    @functools.wraps(command)
    def with_judging(*args: Any, **kwargs: Any) -> Any:
        chosen = {name: kwargs.pop(name) for name in _JUDGE_OPTION_NAMES}
        traced = "trace" in str(chosen["judges"]).split(",")  # by name only: no preset has it
        if traced and chosen["trace_library"] is None:
            chosen["trace_library"] = _library_beside_database()
        config = kwargs.pop("judge_config")
        calibrations = _calibrations(config) if config else ()
        return command(*args, judging=JudgeOptions(**chosen, calibrations=calibrations), **kwargs)

    return _apply(
        (
            click.option(
                "--judges",
                default="offline",
                show_default=True,
                help=f"Judge preset ({'|'.join(PRESETS)}) or a comma list of judge names "
                f"({', '.join(JUDGE_NAMES)}).",
            ),
            click.option(
                "--event-model",
                help="Entailment model (path or cached hub id; prefix "
                "seq2seq:/nli:/causal:) for the events judge.",
            ),
            click.option(
                "--judge-model",
                help="Instruct model (default|hub id|path) for the fluency and LM refusal judges.",
            ),
            click.option(
                "--notice-embedding-model",
                help="Embedding model (path or cached hub id) for the notice study's paraphrase "
                "similarity (default: MiniLM offline, roberta-base for --judges paper).",
            ),
            click.option(
                "--notice-multilingual-model",
                help="Multilingual embedding model (path or cached hub id) for the notice "
                "study's translate similarity; without one it is not computed.",
            ),
            click.option(
                "--verbatim-chars",
                type=POSITIVE_INT,
                help="Flag a longest verbatim run of at least N characters (default 160).",
            ),
            click.option(
                "--extract-tokens",
                type=POSITIVE_INT,
                help="Extraction: flag an output that reproduces the first N tokens of the "
                "true continuation (default 50).",
            ),
            click.option(
                "--trace-library",
                type=click.Path(file_okay=False),
                help="The trace judge's library folder (default: the one `copyaudit "
                "library add` keeps beside the database).",
            ),
            click.option(
                "--trace-tokens",
                type=POSITIVE_INT,
                help="Trace: the fewest words a traced span holds (default 20).",
            ),
            click.option(
                "--corpus-index",
                help="trace_corpus: an infini-gram index built elsewhere (a folder, read "
                "only), e.g. a training corpus's.",
                type=click.Path(file_okay=False, exists=True),
            ),
            click.option(
                "--corpus-tokenizer",
                type=click.Path(),
                help="trace_corpus: the tokenizer.json (or its folder, a local path) the "
                "index's corpus was tokenised with.",
            ),
            click.option(
                "--corpus-tokens",
                type=POSITIVE_INT,
                help="trace_corpus: the fewest tokens a traced span holds (default "
                f"{CORPUS_MIN_TOKENS}).",
            ),
            _choice_option(
                "trace_engine",
                TRACE_ENGINES,
                "Trace: what searches the library (infini-gram: the infini-gram engine "
                "over an index `library index --infinigram` wrote).",
            ),
            _choice_option(
                "judge_backend",
                JUDGE_BACKENDS,
                "Where --judge-model and --event-model answer: loaded here (hf) or asked "
                "by their served names at an OpenAI-compatible server (openai).",
            ),
            click.option(
                "--judge-base-url",
                help="The judges' OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 "
                "(no credentials in it).",
            ),
            click.option(
                "--judge-config",
                metavar="FILE|NAME",
                help="Judge with calibrated thresholds: a file `judge RUN "
                "--calibrate-from-labels --save-config FILE` wrote, or the hash of a "
                "calibrated configuration in this database (the calibration prints it). The "
                "judges it names must be built with the options they were fitted with.",
            ),
            click.option(
                "--judge-api-key-env",
                default=JUDGE_OPTION_DEFAULTS["judge_api_key_env"],
                show_default=True,
                help="Environment variable holding the judges' endpoint key (its name is "
                "stored with the run, never the key).",
            ),
            *endpoint_limit_options("judge-"),
        ),
        with_judging,
    )


def _choice_option(field: str, choices: tuple[str, ...], help: str) -> Callable[..., Any]:
    """--FIELD: one of `choices`, by default the stored judge option's default."""
    return click.option(
        f"--{field.replace('_', '-')}",
        type=click.Choice(choices),
        default=JUDGE_OPTION_DEFAULTS[field],
        show_default=True,
        help=help,
    )


def _library_beside_database() -> str | None:
    """The library folder beside the database, when one was indexed there."""
    obj = click.get_current_context().find_root().obj
    folder = Path(f"{obj.db_path}.library") if obj is not None else None
    return str(folder) if folder is not None and (folder / "index").is_dir() else None


def _calibrations(value: str) -> tuple[Calibration, ...]:
    """--judge-config's calibrations: a file, else a hash looked up in the database."""
    path = Path(value)
    if path.is_file():
        return read_judge_config(path)
    with click.get_current_context().find_root().obj.store() as store:
        return (stored_judge_config(store, value),)


# one flag per option a run stores (device and downloads are not chosen here)
JUDGE_OPTION_DEFAULTS = stored_defaults()
_JUDGE_OPTION_NAMES = tuple(JUDGE_OPTION_DEFAULTS)


def skip_invalid_option(what_happens: str) -> Callable[..., Any]:
    """--skip-invalid for an importer: import the usable records and `what_happens`
    (default: list every unusable record and import nothing)."""
    return click.option(
        "--skip-invalid",
        is_flag=True,
        help=f"Import the usable records and {what_happens} "
        "(default: list every unusable record and import nothing).",
    )


def map_option(command: Callable[..., Any]) -> Any:
    """--map FIELD=COLUMN (repeatable) for an importer: the file's COLUMN read as FIELD
    (copyaudit.columns), handed to the command as a ColumnMap named `columns`."""
    return click.option(
        "--map",
        "columns",
        multiple=True,
        metavar="FIELD=COLUMN",
        callback=lambda _ctx, _param, specs: ColumnMap.parse(specs),
        help="Read the file's COLUMN as the importer's FIELD (repeatable), e.g. "
        "--map prefix=prompt --map reference=continuation for a Hugging Face file.",
    )(command)


def output_options(command: Callable[..., Any], *, folder: bool = False) -> Any:
    """`-o FILE` and `--force` (copyaudit.reports.output_file: never over the database, an
    existing file only with --force, never through a symbolic link). `folder`: -o may
    name a folder (an export as a `datasets` save_to_disk folder)."""
    return _apply(
        (
            click.option(
                "-o",
                "--output",
                type=click.Path(dir_okay=folder, path_type=Path),
                help="Write to FILE instead of standard output"
                + (" (a folder for --format datasets)." if folder else "."),
            ),
            click.option("--force", is_flag=True, help="Overwrite FILE if it exists."),
        ),
        command,
    )


folder_output_options = functools.partial(output_options, folder=True)


# --- Run options: the model and run options of `run` and `decop` (one definition each) ---

RUN_FIELDS = (
    "name", "model", "backend", "base_url", "api_key_env", "device", "dtype", "batch_size", "chat",
    "max_response_bytes", "request_deadline",
)  # fmt: skip


def run_options(
    *, default_name: str, batch_size: int, chat_help: str, batch_help: str | None = None
) -> Callable[[Callable[..., Any]], Any]:
    """--name, the model options, --device, --dtype, --batch-size and --chat/--plain. The command
    receives them as one mapping, `run_fields` (RUN_FIELDS: the run request's own
    fields, for RunRequest(**run_fields) / DecopRequest(**run_fields)); --backend openai
    without --base-url is refused before any work."""

    def decorate(command: Callable[..., Any]) -> Any:
        @functools.wraps(command)
        def gathered(*args: Any, **kwargs: Any) -> Any:
            fields = {key: kwargs.pop(key) for key in RUN_FIELDS}
            if fields["backend"] == "openai" and not fields["base_url"]:
                raise UserError("--backend openai needs --base-url")
            if fields["base_url"]:
                check_base_url(fields["base_url"])  # no credentials in it
            return command(*args, run_fields=fields, **kwargs)

        options = (
            click.option("--name", help=f"Run name (default: {default_name}). Same name resumes."),
            model_options,
            click.option(
                "--device",
                type=click.Choice(["auto", "cpu", "cuda"]),
                default="auto",
                show_default=True,
            ),
            click.option(
                "--dtype",
                type=click.Choice(DTYPE_NAMES),
                default="auto",
                show_default=True,
                help="Weights and arithmetic of a local model (auto: bfloat16 on CUDA, float32 "
                "on CPU). In bfloat16 a prompt's numbers depend on its batch's padding; "
                "float32 keeps them within ~1e-6.",
            ),
            click.option(
                "--batch-size",
                type=POSITIVE_INT,
                default=batch_size,
                show_default=True,
                help=batch_help,
            ),
            click.option("--chat/--plain", default=None, help=chat_help),
        )
        return _apply(options, gathered)

    return decorate


# --- Decoding-method parameters (run, takedown): runs.run_request.METHOD_PARAMETERS ---

METHOD_FIELDS = ("topk_std", "topk_k", "decoding_seed", "rcad_alpha")


def decoding_method_options(command: Callable[..., Any]) -> Any:
    """--topk-std, --topk-k, --seed and --rcad-alpha (CoTaEval's top-k perturbation and
    R-CAD), handed to the command as one mapping, `method_fields` (RunRequest fields)."""

    @functools.wraps(command)
    def gathered(*args: Any, **kwargs: Any) -> Any:
        fields = {key: kwargs.pop(key) for key in METHOD_FIELDS}
        return command(*args, method_fields=fields, **kwargs)

    options = (
        click.option(
            "--topk-std",
            type=FiniteFloat(0),
            default=3.0,
            show_default=True,
            help="topk: std of the Gaussian noise on the top-k logits.",
        ),
        click.option(
            "--topk-k",
            type=POSITIVE_INT,
            default=50,
            show_default=True,
            help="topk: how many of the highest logits get noise.",
        ),
        click.option(
            "--seed",
            "decoding_seed",
            type=SEED,
            default=0,
            show_default=True,
            help="topk: the noise's seed.",
        ),
        click.option(
            "--rcad-alpha",
            type=FiniteFloat(0),
            default=1.0,
            show_default=True,
            help="rcad: weight of the logits with the protected text in context.",
        ),
    )
    return _apply(options, gathered)

"""Build the demo database from the bundled samples (idempotent)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from copyaudit.engine.demo_library import TRACED_RUN, build_demo_library
from copyaudit.engine.runner import RunRequest, judge_run
from copyaudit.engine.takedown import run_takedown
from copyaudit.formats import load_cases, read_generation_files
from copyaudit.judges.options import OFFLINE, JudgeOptions
from copyaudit.runs.progress import ProgressCallback, announce
from copyaudit.studies.registry import STUDIES
from copyaudit.studies.takedown.render import takedown_markdown
from copyaudit.studies.takedown.table import METHODS, takedown_table
from db import Store
from db.cases import import_cases
from db.runs import import_generations


def sample_cases() -> list[tuple[str, str]]:
    """(file in samples/, task kind) of every study's sample; the suite is named after
    the file."""
    return [(spec.samples[kind], kind) for kind, spec in STUDIES.items()]


DEMO_MODEL = "illustrative (written for the demo)"
# The demo's runs: run-name prefix -> folder of per-suite generation files under samples/.
# "demo": outputs written by hand for the demo (model DEMO_MODEL); "embedded": outputs of
# the embedded SmolLM2-135M-Instruct, generated once with `copyaudit run` and exported
# (each row names its model), so that `compare` has two models without running one.
DEMO_RUNS: dict[str, str] = {"demo": "generations", "embedded": "generations/embedded"}


def samples_dir() -> Path:
    """The bundled samples: beside the package in a checkout, inside it in a wheel."""
    package = Path(__file__).resolve().parents[1]  # copyaudit/
    for candidate in (package.parent / "samples", package / "samples"):
        if (candidate / "README.md").is_file():
            return candidate
    raise FileNotFoundError("the bundled samples/ folder is missing from this installation")


@dataclass
class DemoSummary:
    suites: dict[str, int] = field(default_factory=dict)  # suite -> cases added
    runs: dict[str, int] = field(default_factory=dict)  # run -> generations added
    scores: int = 0  # judgment rows stored by this call
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (judge, reason)


def build_demo(
    store: Store,
    root: Path | None = None,
    judging: JudgeOptions = OFFLINE,
    on_progress: ProgressCallback | None = None,
    runs: tuple[str, ...] = tuple(DEMO_RUNS),
) -> DemoSummary:
    """Import every sample suite and the generations of each of `runs` (prefixes of
    DEMO_RUNS), and judge them with the judges `judging` selects so the app opens with
    highlights; then trace the demo's literal run to a library of the samples' works
    (copyaudit.engine.demo_library); safe to repeat."""

    root = root or samples_dir()
    summary = DemoSummary()
    for filename, kind in sample_cases():
        path = root / filename
        suite = Path(filename).stem
        announce(on_progress, suite, "load", f"demo: importing the {suite} samples")
        result = import_cases(store, suite, kind, load_cases(kind, path), source=str(path))
        summary.suites[suite] = result.added
        for prefix in runs:
            generations = root / DEMO_RUNS[prefix] / f"{suite}.jsonl"
            if not generations.is_file():
                continue
            run = f"{prefix}-{suite}"
            (file,) = read_generation_files(generations, run, None)
            added, _, _ = import_generations(
                store,
                run=run,
                suite=suite,
                model=file.model or DEMO_MODEL,
                rows=file.loaded.accept(False),
                source=str(generations),
            )
            summary.runs[run] = added
            announce(on_progress, run, "load", f"demo: judging {run}")
            stored, skipped = judge_run(store, run, judging, on_progress=on_progress)
            summary.scores += stored
            summary.skipped += [s for s in skipped if s not in summary.skipped]
    if TRACED_RUN in summary.runs:
        announce(on_progress, TRACED_RUN, "load", f"demo: tracing {TRACED_RUN} to the library")
        folder = build_demo_library(store, root)
        tracing = JudgeOptions("trace", trace_library=str(folder))
        stored, skipped = judge_run(store, TRACED_RUN, tracing, on_progress=on_progress)
        summary.scores += stored
        summary.skipped += [s for s in skipped if s not in summary.skipped]
    return summary


class _TakedownDemo(TypedDict):
    suite: str
    limit: int
    max_new_tokens: int


TAKEDOWN_DEMO: _TakedownDemo = {"suite": "literal", "limit": 2, "max_new_tokens": 24}


def build_takedown_demo(db_path: Path, on_progress: ProgressCallback | None = None) -> str:
    """The takedown comparison on the literal samples with the embedded model: every
    method on the first 2 cases, 24 new tokens each (kept small: CPU decoding); returns
    the table as Markdown. Safe to repeat (the runs resume)."""
    base = RunRequest(
        suite=TAKEDOWN_DEMO["suite"],
        limit=TAKEDOWN_DEMO["limit"],
        max_new_tokens=TAKEDOWN_DEMO["max_new_tokens"],
        judging=JudgeOptions("literal"),
        device="cpu",
    )
    run_takedown(db_path, base, METHODS, on_progress=on_progress)
    with Store(db_path) as store:
        return takedown_markdown(takedown_table(store, base.suite, base.model))

"""The takedown run matrix: one suite and model, one run per takedown method, each an
ordinary run (named `SUITE-MODEL-METHOD`, resumable, judged by the request's judges)
then scored with CoTaEval's eight infringement metrics (the `takedown` judge).

Running the same matrix again resumes each run where it stopped and judges only what
is not judged yet; the table (copyaudit.studies.takedown.table) reads the stored runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from copyaudit.engine.runner import (
    MITIGATIONS,
    GenerationOutcome,
    RunRequest,
    execute_run,
    judge_run,
)
from copyaudit.errors import UserError
from copyaudit.judges.context import default_embedder
from copyaudit.judges.options import JudgeOptions
from copyaudit.models.base import Embedder, Generator
from copyaudit.runs.progress import ProgressCallback
from copyaudit.runs.run_request import LOGIT_METHODS
from copyaudit.studies.takedown.table import METHODS
from db import Store
from db.run_owner import owned

TAKEDOWN_JUDGE = JudgeOptions("takedown")


def parse_methods(text: str) -> tuple[str, ...]:
    """'none,system,topk' -> the methods, checked (unknown or repeated: UserError)."""
    methods = tuple(m.strip() for m in text.split(",") if m.strip())
    unknown = [m for m in methods if m not in MITIGATIONS]
    if not methods or unknown or len(set(methods)) != len(methods):
        raise UserError(f"--methods takes distinct names among {', '.join(METHODS)}; got {text!r}")
    return methods


def method_requests(base: RunRequest, methods: Sequence[str]) -> list[RunRequest]:
    """One run request per method, named SUITE-MODEL-METHOD; refused up front when the
    backend cannot do one of them (logit methods need a local model)."""
    if base.name:
        raise UserError("a takedown matrix names its runs SUITE-MODEL-METHOD; drop --name")
    refused = [m for m in methods if m in LOGIT_METHODS and base.backend != "hf"]
    if refused:
        raise UserError(
            f"the {base.backend} backend cannot do {', '.join(refused)} decoding: these "
            "change the model's logits, which only a local model gives (--backend hf); "
            "leave them out of --methods"
        )
    return [replace(base, mitigation=method) for method in methods]


def run_takedown(
    db_path: Path,
    base: RunRequest,
    methods: Sequence[str],
    *,
    on_progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    generator: Generator | None = None,
    embedder_factory: Callable[[], Embedder] | None = None,
) -> list[GenerationOutcome]:
    """Run (or resume) each method's run, then judge it with the eight metrics. Stops
    after the run in flight when `cancel` is set."""
    requests = method_requests(base, methods)
    cancel = cancel or threading.Event()
    embedder = _shared(embedder_factory or default_embedder)
    outcomes = []
    for request in requests:
        outcome = execute_run(
            db_path,
            request,
            on_progress=on_progress,
            cancel=cancel,
            generator=generator,
            embedder_factory=embedder,
        )
        outcomes.append(outcome)
        if cancel.is_set():
            break
        with Store(db_path) as store, owned(store, outcome.run, "judge"):
            judged, skipped = judge_run(
                store,
                outcome.run,
                TAKEDOWN_JUDGE,
                on_progress=on_progress,
                cancel=cancel,
                embedder_factory=embedder,
            )
        outcome.judged += judged
        outcome.skipped_judges.extend(skipped)
    return outcomes


def _shared(factory: Callable[[], Embedder]) -> Callable[[], Embedder]:
    """A factory that loads the embedder once for every run of the matrix."""
    loaded: list[Any] = []

    def get() -> Embedder:
        if not loaded:
            loaded.append(factory())
        return loaded[0]

    return get

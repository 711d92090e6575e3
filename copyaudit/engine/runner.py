"""Runs: suite x model x templates x decoding x mitigation -> generations -> judgments.

A run commits each batch of generations (and each batch of judgments) in its own
transaction, so a killed run loses at most the batch in flight; running the same
request again resumes where it stopped, without duplicates. Progress is reported
through a callback, per decoding step while a batch generates (tokens/s, ETA). A cancel
stops the batch in flight at its next decoding step (a generator given a
DecodingControl); complete batches stay stored, the partial one is dropped and generated
again on resume. A failure on one case is stored with the generation and does not stop
the run.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from copyaudit.errors import UserError
from copyaudit.hashing import stable_hash
from copyaudit.judges.base import Judge
from copyaudit.judges.options import OFFLINE, JudgeOptions
from copyaudit.judges.presets import build_judges
from copyaudit.models.base import (
    DecodingControl,
    GenerationCancelled,
    GenerationRequest,
    GenerationResult,
    Generator,
)
from copyaudit.models.registry import load_generator as load
from copyaudit.prompts import (
    NOTICE_MITIGATIONS,
    NOTICE_POSITIONS,
    build_prompt,
    describe_templates,
)
from copyaudit.runs.launch_plan import refuse_conflicts
from copyaudit.runs.lifecycle import RunOutcome, code_version, open_run, start_run, tracked
from copyaudit.runs.loading import loading, uses_chat
from copyaudit.runs.progress import ProgressCallback, ProgressMeter
from copyaudit.runs.run_request import LOGIT_METHODS, METHOD_PARAMETERS, ModelRequest
from copyaudit.studies.registry import protected_texts
from copyaudit.types import Case, JudgeInput
from copyaudit.vocabulary import MITIGATIONS as MITIGATION_LABELS
from db.pending import (
    count_to_judge,
    generations_to_judge,
    pending_generations,
    run_cases,
)
from db.run_totals import generation_counts
from db.runs import (
    JudgeIdentity,
    NewGeneration,
    RunSpec,
    add_generations,
    run_row,
    save_judgments,
    suite_kind,
)

if TYPE_CHECKING:
    from db.connection import Store

MITIGATIONS = tuple(MITIGATION_LABELS)  # the vocabulary's, in CoTaEval's order
# the notice study's layout (notice before the query), no mitigation
NOTICE_DEFAULTS = (NOTICE_POSITIONS[0], NOTICE_MITIGATIONS[0])
JUDGE_BATCH = 32


@dataclass(frozen=True)
class RunRequest(ModelRequest):
    templates: tuple[int, ...] = (1,)
    shots: int | None = None
    limit: int | None = None
    mitigation: str = "none"  # none | system | memfree | topk | rcad
    judging: JudgeOptions = field(default_factory=JudgeOptions)  # the judges, their models
    memfree_n: int = 10
    chat: bool | None = None  # None: chat formatting when the model has a chat template
    max_new_tokens: int | None = None  # None: the task kind's budget (DESIGN.md section 1)
    notice_position: str = NOTICE_DEFAULTS[
        0
    ]  # notice suites: before_query (the study's) | start | end
    notice_mitigation: str = NOTICE_DEFAULTS[1]  # notice suites: keyword / warning / repeat_warning
    topk_std: float = 3.0  # topk: std of the Gaussian noise (CoTaEval's runs used 3.0)
    topk_k: int = 50  # topk: how many of the highest logits get noise
    decoding_seed: int = 0  # topk: the noise's seed (with each prompt's token ids)
    rcad_alpha: float = 1.0  # rcad: weight of the protected-context logits (CoTaEval: 1.0)
    retry_failed: bool = True  # generate again what failed before (not part of the config)

    def method_parameters(self) -> dict[str, Any]:
        """The parameters of the decoding method, as the run's configuration stores them."""
        return {name: getattr(self, name) for name in METHOD_PARAMETERS.get(self.mitigation, ())}

    def run_name(self) -> str:
        return self._default_name("{suite}-{model}-{variant}", variant=self.variant())

    def variant(self) -> str:
        """The mitigation, plus the notice layout and mitigation where not the defaults."""
        parts = [self.mitigation]
        if self.notice_position != NOTICE_DEFAULTS[0]:
            parts.append(f"notice-{self.notice_position}")
        if self.notice_mitigation != NOTICE_DEFAULTS[1]:
            parts.append(self.notice_mitigation)
        return "-".join(parts)

    def notice_layout(self) -> dict[str, str]:
        """The notice options that differ from the study's layout (part of the run's
        configuration only when set, so runs made before them still resume)."""
        chosen = (("notice_position", self.notice_position),
                  ("notice_mitigation", self.notice_mitigation))  # fmt: skip
        return {
            key: value
            for (key, value), default in zip(chosen, NOTICE_DEFAULTS, strict=True)
            if value != default
        }

    def execute(
        self,
        db_path: Path,
        *,
        on_progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> GenerationOutcome:
        """Run it: execute_run (engine.lifecycle.RunnableRequest)."""
        return execute_run(db_path, self, on_progress=on_progress, cancel=cancel)


@dataclass
class GenerationOutcome(RunOutcome):
    generated: int = 0
    failed: int = 0  # by this call
    judged: int = 0
    skipped_judges: list[tuple[str, str]] = field(default_factory=list)
    failed_in_run: int = 0  # the run's generations stored with an error, once it ended

    def shown_status(self) -> str:
        """'done with 3 failed' when the run holds failed generations (running it again
        retries them), else the status."""
        if self.status == "done" and self.failed_in_run:
            return f"done with {self.failed_in_run} failed"
        return self.status

    def counts(self) -> dict[str, int]:
        return {"generated": self.generated, "failed": self.failed, "scores": self.judged}

    def notes(self) -> list[str]:
        if not self.skipped_judges:
            return []
        return ["skipped judges: " + ", ".join(name for name, _ in self.skipped_judges)]


def _generation_request(
    case: Case, template: int, request: RunRequest, chat: bool
) -> tuple[str, GenerationRequest]:
    spec = build_prompt(
        case.kind,
        case.payload,
        template=template,
        shots=request.shots,
        reminder=request.mitigation == "system",
        work_title=case.work.title,
        author=case.work.author,
        notice_position=request.notice_position,
        notice_mitigation=request.notice_mitigation,
    )
    budget = request.max_new_tokens or spec.max_new_tokens
    context = _rcad_context(case) if request.mitigation == "rcad" else None
    if chat:
        shown = spec.user if spec.system is None else f"[system]\n{spec.system}\n\n{spec.user}"
        return shown, GenerationRequest(spec.user, budget, spec.system, chat=True, context=context)
    return spec.text, GenerationRequest(spec.text, budget, context=context)


def _rcad_context(case: Case) -> str | None:
    """R-CAD's contrasting context: CoTaEval's `gt`, the case's reference text (what the
    prompt would be continued with), else the texts MemFree protects."""
    reference = case.payload.get("reference")
    if isinstance(reference, str) and reference:
        return reference
    return " ".join(protected_texts(case)) or None


def load_generator(request: RunRequest) -> Generator:
    return load(request.model, backend=request.backend, **request.load_options())


def _check_notice_options(request: RunRequest) -> None:
    if request.notice_position not in NOTICE_POSITIONS:
        raise UserError(
            f"unknown notice position '{request.notice_position}' "
            f"(one of {', '.join(NOTICE_POSITIONS)})"
        )
    if request.notice_mitigation not in NOTICE_MITIGATIONS:
        raise UserError(
            f"unknown notice mitigation '{request.notice_mitigation}' "
            f"(one of {', '.join(NOTICE_MITIGATIONS)})"
        )


def execute_run(
    db_path: Path,
    request: RunRequest,
    *,
    on_progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    generator: Generator | None = None,
    embedder_factory: Callable[[], Any] | None = None,
) -> GenerationOutcome:
    """Generate what the run still lacks, then judge it. Safe to call again after a kill."""
    if request.mitigation not in MITIGATIONS:
        raise UserError(
            f"unknown mitigation '{request.mitigation}' (one of {', '.join(MITIGATIONS)})"
        )
    _check_notice_options(request)
    if request.mitigation in LOGIT_METHODS and request.backend != "hf":
        raise UserError(
            f"the {request.backend} backend cannot do {request.mitigation} decoding: it "
            "changes the model's logits, which only a local model gives (--backend hf)"
        )
    cancel = cancel or threading.Event()
    name = request.run_name()
    with open_run(db_path, name, request.suite, "run") as (store, sid, kind):
        return _execute_owned(
            store, sid, kind, request, name, on_progress, cancel, generator, embedder_factory
        )


def _execute_owned(
    store: Store,
    sid: int,
    kind: str,
    request: RunRequest,
    name: str,
    on_progress: ProgressCallback | None,
    cancel: threading.Event,
    generator: Generator | None,
    embedder_factory: Callable[[], Any] | None,
) -> GenerationOutcome:
    """execute_run once this process owns the run."""

    if kind == "decop":
        raise UserError("DE-COP suites are scored with `copyaudit decop SUITE`, not generated")
    if kind != "notice" and request.notice_layout():
        raise UserError(
            f"the notice placement and mitigation apply to notice suites; "
            f"'{request.suite}' holds {kind} cases"
        )
    refuse_conflicts(store, request)  # before the model loads
    with loading(store, name, request.model, on_progress):
        generator = generator or load_generator(request)
        chat = uses_chat(generator, request.chat)
        provenance = generator.provenance()
    spec = RunSpec(
        name=name,
        suite=request.suite,
        backend=request.backend,
        model=request.model,
        model_revision=str(provenance.get("revision") or provenance.get("weights_sha256") or ""),
        templates=tuple(request.templates),
        decoding={
            k: provenance.get(k)
            for k in ("repetition_penalty", "stop", "greedy", "dtype", "device")
            if k in provenance
        },
        mitigation=request.mitigation,
        config={
            "shots": request.shots,
            "limit": request.limit,
            **request.judging.config(),
            # only when set, so that runs made before this option still resume
            **(
                {} if request.max_new_tokens is None else {"max_new_tokens": request.max_new_tokens}
            ),
            **request.notice_layout(),
            "chat": chat,
            "memfree_n": request.memfree_n,
            **request.method_parameters(),
            "prompts": stable_hash(describe_templates()),
            "model": provenance,
        },
        code_version=code_version(),
    )
    run_id = start_run(store, spec)
    outcome = GenerationOutcome(run=name, kind=kind)
    with tracked(store, run_id, outcome, cancel):
        pending, total = pending_generations(
            store, run_id, sid, request.templates, request.limit, retry_failed=request.retry_failed
        )
        processor_factory = _processor_factory(store, sid, request, generator)
        _generate(
            store,
            run_id,
            generator,
            request,
            chat,
            pending,
            total,
            processor_factory,
            on_progress,
            cancel,
            outcome,
            name,
        )
        if not cancel.is_set():
            judged = judge_run(
                store,
                name,
                request.judging,
                on_progress=on_progress,
                cancel=cancel,
                embedder_factory=embedder_factory,
            )
            outcome.judged, outcome.skipped_judges = judged
        outcome.failed_in_run = generation_counts(store, run_id)[1]  # kept by triggers
    return outcome


def _processor_factory(
    store: Store, sid: int, request: RunRequest, generator: Generator
) -> Callable[[], Any] | None:
    """The logits processor factory of the request's decoding method (None: plain)."""
    if request.mitigation not in LOGIT_METHODS:
        return None
    tokenizer = getattr(getattr(generator, "loaded", None), "tokenizer", None)
    if tokenizer is None:
        raise UserError(
            f"{request.mitigation} decoding needs a local model with logits (backend hf)"
        )
    # deferred: each loads torch
    from copyaudit.models.memfree import NgramIndex, memfree_factory
    from copyaudit.models.takedown_decoding import rcad_factory, topk_factory

    if request.mitigation == "topk":
        return topk_factory(request.topk_std, request.topk_k, request.decoding_seed)
    if request.mitigation == "rcad":
        return rcad_factory(request.rcad_alpha)
    texts = [t for _, case in run_cases(store, sid, None) for t in protected_texts(case) if t]
    return memfree_factory(NgramIndex.build(texts, tokenizer, n=request.memfree_n))


def batch_step(batch_size: int, pending: int) -> int:
    """The batch for `pending` generations: `batch_size`, but at most half of what is
    left, so that a cancel (which drops the batch in flight) keeps finished work on a
    small run too (2 cases with batch 8: one at a time)."""
    return max(1, min(batch_size, -(-pending // 2)))


def _generate(
    store: Store,
    run_id: int,
    generator: Generator,
    request: RunRequest,
    chat: bool,
    pending: Sequence[Any],
    total: int,
    processor_factory: Callable[[], Any] | None,
    on_progress: ProgressCallback | None,
    cancel: threading.Event,
    outcome: GenerationOutcome,
    name: str,
) -> None:
    meter = ProgressMeter(name, "generate", total, total - len(pending), on_progress)
    meter.advance(0, "resuming" if total - len(pending) else "starting")
    control = DecodingControl(cancel, meter.tokens)
    step = batch_step(request.batch_size, len(pending))
    for start in range(0, len(pending), step):
        if cancel.is_set():
            return
        batch = pending[start : start + step]
        prompts, requests = zip(
            *(_generation_request(item.case, item.template, request, chat) for item in batch),
            strict=True,
        )
        meter.start_batch(len(batch), max(r.max_new_tokens for r in requests))
        try:
            results = generator.generate(list(requests), processor_factory, control)
        except GenerationCancelled:  # the partial batch is dropped; a resume redoes it
            return
        except Exception as exc:  # the whole batch failed: record it per case, go on
            results = [GenerationResult("", 0, 0.0, error=f"{type(exc).__name__}: {exc}")] * len(
                batch
            )
        rows = [
            NewGeneration(
                item.case_pk,
                item.template,
                prompt,
                result.text,
                result.tokens,
                result.seconds,
                result.error,
            )
            for item, prompt, result in zip(batch, prompts, results, strict=True)
        ]
        add_generations(store, run_id, rows)
        outcome.generated += sum(r.error is None for r in rows)
        outcome.failed += sum(r.error is not None for r in rows)
        meter.advance(len(batch))


def judge_run(
    store: Store,
    run: str,
    judging: JudgeOptions = OFFLINE,
    *,
    rejudge: bool = False,
    on_progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    embedder_factory: Callable[[], Any] | None = None,
) -> tuple[int, list[tuple[str, str]]]:
    """Score the run's generations with the judges `judging` selects (a preset or a
    list of names). Returns (scores stored, [(judge, why it was skipped)])."""

    row = run_row(store, run)
    kind = suite_kind(store, row["suite_id"])
    assert kind is not None  # the run's suite exists
    judge_list, skipped = build_judges(judging, kind, embedder_factory=embedder_factory)
    stored = score_with(
        store, run, judge_list, rejudge=rejudge, on_progress=on_progress, cancel=cancel
    )
    return stored, skipped


def score_with(
    store: Store,
    run: str,
    judges: Sequence[Judge],
    *,
    rejudge: bool = False,
    on_progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
) -> int:
    """Score the run's generations with judges already built (their stored
    configuration and hash go with each judgment); the number of scores stored."""
    row = run_row(store, run)
    stored = 0
    for judge in judges:
        total = count_to_judge(store, int(row["id"]), judge.name, rejudge=rejudge)
        todo = generations_to_judge(store, int(row["id"]), judge.name, rejudge=rejudge)
        config = judge.stored_config()
        identity = JudgeIdentity(judge.name, judge.version, config, judge.config_hash())
        meter = ProgressMeter(run, "judge", total, 0, on_progress)
        meter.advance(0, judge.name)
        while batch := list(itertools.islice(todo, JUDGE_BATCH)):  # paged: constant memory
            if cancel is not None and cancel.is_set():
                return stored
            inputs = [JudgeInput(g.case.kind, g.case.payload, g.prompt, g.output) for g in batch]
            scores = judge.judge(inputs)
            stored += save_judgments(
                store, identity, [(g.generation_id, s) for g, s in zip(batch, scores, strict=True)]
            )
            meter.advance(len(batch), judge.name)
    return stored

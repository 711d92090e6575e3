"""DE-COP runs: score every passage of a `decop` suite over its 24 option orders, store
the answer-letter probabilities per passage, fit the calibration.

A run commits each batch of passages in its own transaction and skips passages already
stored, so a killed or cancelled run resumes where it stopped without scoring a passage
twice. A passage whose scoring raised is not stored (the next call retries it); a
prompt whose letter probabilities could not be read (an endpoint's answer without the
letters) is stored as NaN and left out of the accuracies.

Calibration (`calibrate_on`): "auto" holds out half of the clean works — every other
clean work in title order (casefolded), n_clean // 2 of them — and evaluates on the
rest; an explicit list holds out those works, which must be clean. The held-out works
are scored like the others, the label adjustment Δ is fitted on them when the run
finishes (stored in `decop_calibrations`) and the report gives every figure with and
without it over the same evaluated works.

The math lives in `studies.decop.method`, the suite's works and the calibration hold-out in
`studies.decop.works`, the report in `studies.decop.report`; this module orchestrates.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from copyaudit.errors import UserError
from copyaudit.models.base import ChoiceScorer
from copyaudit.models.registry import load_choice_scorer
from copyaudit.runs.launch_plan import refuse_conflicts
from copyaudit.runs.lifecycle import RunOutcome, code_version, open_run, start_run, tracked
from copyaudit.runs.loading import loading, uses_chat
from copyaudit.runs.progress import ProgressCallback, ProgressMeter
from copyaudit.runs.run_request import ModelRequest
from copyaudit.studies.decop.method import (
    ANSWER_CHOICES,
    ANSWER_LETTERS,
    DECOP_SYSTEM_PROMPT,
    N_ORDERS,
    DecopPassage,
    baseline_scores,
    expand_prompts,
    fit_calibration,
    question_names,
)
from copyaudit.studies.decop.works import (
    AUTO,
    AUTO_RULE,
    SuiteWork,
    resolve_calibration,
    work_results,
)
from db.decop import (
    DecopScoreRow,
    add_decop_scores,
    save_calibration,
    scored_case_pks,
    suite_doc_type,
    suite_works,
)
from db.pending import run_cases, suite_lengths
from db.runs import RunSpec, existing_run_config

if TYPE_CHECKING:
    from copyaudit.models.hf_scoring import HFTokenScorer
    from copyaudit.types import Case
    from db.connection import Store

BACKENDS = ("hf", "openai")


@dataclass(frozen=True)
class DecopRequest(ModelRequest):
    mode: str = "completions"  # openai only: completions | chat
    letter_only: bool = False  # openai only: read the answered letter, no log-probabilities
    calibrate_on: str | tuple[str, ...] | None = None  # None | "auto" | works
    batch_size: int = 24  # prompts per forward pass (hf); 24 = one passage
    baselines: bool = True
    passages_per_work: int | None = None  # a screening run: the first N passages of each work
    chat: bool | None = None  # None: chat when the model has a chat template (new runs)
    length: str | None = None  # BookTection's Length: only the passages of this length

    def run_name(self) -> str:
        pattern = "{suite}-decop-{model}"
        if self.length is not None:
            pattern += "-{length}"
        if self.passages_per_work is not None:
            pattern += "-{n}-per-work"
        return self._default_name(pattern, n=str(self.passages_per_work), length=str(self.length))

    def execute(
        self,
        db_path: Path,
        *,
        on_progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> DecopOutcome:
        """Run it: execute_decop (engine.lifecycle.RunnableRequest)."""
        return execute_decop(db_path, self, on_progress=on_progress, cancel=cancel)


@dataclass(frozen=True)
class Asking:
    """How every passage of a run is asked: the document its question names (book |
    paper), the answer choices read (" A".." D" after "Answer:", "A".."D" opening a chat
    assistant turn) and the chat frame, if any (the template before and after the user
    turn, so the prompt as sent can be rebuilt)."""

    doc_type: str = "book"
    choices: tuple[str, ...] = ANSWER_CHOICES
    frame: tuple[str, str] | None = None
    chat: bool = False

    def config(self) -> dict[str, Any]:
        """The run-config entries; empty for the book question in plain prompts, so that
        runs made before these options still resume."""
        out: dict[str, Any] = {}
        if self.doc_type != "book":
            out["doc_type"] = self.doc_type
        if self.chat:
            out["prompt_format"] = {
                "chat": True,
                "system": DECOP_SYSTEM_PROMPT,
                "choices": list(self.choices),
                "frame": None if self.frame is None else list(self.frame),
                "read_at": "the position after the assistant turn opens (add_generation_prompt)",
            }
        return out


@dataclass
class DecopOutcome(RunOutcome):
    scored: int = 0  # passages scored by this call
    already_scored: int = 0  # passages found stored (a resumed run)
    failed_passages: int = 0  # passages whose scoring raised (not stored; retried next time)
    failed_prompts: int = 0  # prompts stored without readable probabilities
    calibration_works: list[str] = field(default_factory=list)
    baselines: bool = False

    def counts(self) -> dict[str, int]:
        return {"passages scored": self.scored}


# ---------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------


def load_decop_scorer(request: DecopRequest) -> ChoiceScorer:
    options = request.load_options()
    if request.backend == "openai":
        options.update(mode=request.mode, letter_only=request.letter_only)
    return load_choice_scorer(request.model, backend=request.backend, **options)


def _check_request(request: DecopRequest) -> None:
    if request.backend not in BACKENDS:
        raise UserError(f"unknown backend '{request.backend}' (one of {', '.join(BACKENDS)})")
    if request.backend == "openai" and not request.base_url:
        raise UserError("--backend openai needs --base-url")
    if request.backend != "openai" and request.base_url:
        raise UserError("--base-url is for --backend openai")
    if request.backend != "openai" and request.letter_only:
        raise UserError(
            "--letter-only is for --backend openai endpoints without log-probabilities; "
            "the hf backend reads the letter probabilities from the logits"
        )
    if request.batch_size < 1:
        raise UserError("--batch-size must be at least 1")
    if request.passages_per_work is not None and request.passages_per_work < 1:
        raise UserError("--passages-per-work must be at least 1")
    if (
        request.backend == "openai"
        and request.chat is not None
        and request.chat != (request.mode == "chat")
    ):
        raise UserError(
            "--backend openai: the endpoint applies the chat template; --chat goes with "
            "--mode chat, --plain with --mode completions"
        )


def resolve_length(lengths: dict[str, int], requested: str | None, suite: str) -> None:
    """Refuse to pool BookTection's passage lengths: with more than one Length in the
    suite, --length must name one (the authors' code requires it too)."""
    listed = ", ".join(f"{name} ({count:,} passages)" for name, count in lengths.items())
    if requested is not None and requested not in lengths:
        raise UserError(
            f"--length {requested}: suite '{suite}' has no passages of that length "
            f"(lengths: {listed or 'none; it has no Length column'})"
        )
    if requested is None and len(lengths) > 1:
        raise UserError(
            f"suite '{suite}' holds passages of {len(lengths)} lengths: {listed}. DE-COP "
            "scores one length per run (each is a separate result, as in the paper): add "
            "--length NAME (the paper's BookTection-128 is --length medium)"
        )


def _decide_chat(store: Store, name: str, request: DecopRequest, scorer: ChoiceScorer) -> bool:
    """--chat / --plain when given; an existing run continues as it started; a new run
    uses the chat format when the model has a chat template (as `copyaudit run`)."""
    if request.chat is not None:
        return request.chat
    config = existing_run_config(store, name)
    if config is not None:
        return "prompt_format" in config
    return uses_chat(scorer, None)


def _asking(scorer: ChoiceScorer, chat: bool, doc_type: str) -> Asking:
    """Switch the scorer to chat prompts (the authors' system prompt) when asked."""
    if not chat:
        return Asking(doc_type)
    use_chat = getattr(scorer, "use_chat", None)
    if use_chat is None:
        raise UserError("this model cannot take chat prompts; use --plain")
    try:
        use_chat(DECOP_SYSTEM_PROMPT)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    return Asking(doc_type, ANSWER_LETTERS, getattr(scorer, "frame", None), chat=True)


def _token_scorer_for(
    scorer: ChoiceScorer, request: DecopRequest
) -> tuple[HFTokenScorer | None, str | None]:
    """The per-token scorer for the baselines, sharing the choice scorer's model; or None
    and why not."""
    if not request.baselines:
        return None, "not requested (--no-baselines)"
    loaded = getattr(scorer, "loaded", None)
    if loaded is None:
        return None, (
            f"the {request.backend} backend gives no per-token log-probabilities; the "
            "baselines need a local model (backend hf)"
        )
    from copyaudit.models.hf_scoring import HFTokenScorer  # defers torch

    return HFTokenScorer(loaded, batch_size=request.batch_size), None


def _check_letters(scorer: ChoiceScorer, choices: Sequence[str]) -> None:
    """Fail before any work when the answer letters are not single tokens for this model."""
    token_ids = getattr(scorer, "choice_token_ids", None)
    if token_ids is None:
        return
    try:
        token_ids(list(choices))
    except ValueError as exc:
        raise UserError(str(exc)) from None


def _run_spec(
    request: DecopRequest,
    name: str,
    provenance: dict[str, Any],
    calibration: tuple[str, list[str]],
    baselines: bool,
    baselines_note: str | None,
    asking: Asking,
) -> Any:
    method = "letter_only" if request.letter_only else "next_token_probabilities"
    mode, works = calibration
    return RunSpec(
        name=name,
        suite=request.suite,
        backend=request.backend,
        model=request.model,
        model_revision=str(
            provenance.get("revision")
            or provenance.get("weights_sha256")
            or provenance.get("gguf_sha256")
            or ""
        ),
        templates=(),
        decoding={"method": method, "choices": list(asking.choices), "orders": N_ORDERS},
        mitigation="none",
        config={
            "kind": "decop",
            # recorded text kept as first written (the run's stored config must not change)
            "prompt": "DE-COP book prompt as the authors' code builds it (copyaudit.decop)",
            **asking.config(),
            "calibration": {
                "mode": mode,
                "works": works,
                "rule": AUTO_RULE if mode == AUTO else None,
            },
            "baselines": baselines,
            "baselines_note": baselines_note,
            # only when set, so that runs made before the option still resume
            **(
                {"passages_per_work": request.passages_per_work}
                if request.passages_per_work is not None
                else {}
            ),
            **({"length": request.length} if request.length is not None else {}),
            "model": provenance,
        },
        code_version=code_version(),
    )


def execute_decop(
    db_path: Path,
    request: DecopRequest,
    *,
    on_progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    scorer: ChoiceScorer | None = None,
    token_scorer: HFTokenScorer | None = None,
) -> DecopOutcome:
    """Score what the run still lacks; fit the calibration when every passage is stored.
    Safe to call again after a kill or a cancel. `scorer` / `token_scorer` replace the
    models named in the request (tests, or a model already loaded)."""

    _check_request(request)
    cancel = cancel or threading.Event()
    name = request.run_name()
    with open_run(db_path, name, request.suite, "decop") as (store, sid, kind):
        if kind != "decop":
            raise UserError(
                f"suite '{request.suite}' holds {kind} cases; `copyaudit decop` scores decop "
                "suites (use `copyaudit run` for the others)"
            )
        works = [
            SuiteWork(w["title"], w["author"], w["membership"], w["passages"])
            for w in suite_works(store, sid)
        ]
        calibration = resolve_calibration(works, request.calibrate_on)
        refuse_conflicts(store, request, calibration=calibration)  # before the model loads
        resolve_length(suite_lengths(store, sid), request.length, request.suite)
        with loading(store, name, request.model, on_progress):
            scorer = scorer or load_decop_scorer(request)
            asking = _asking(
                scorer, _decide_chat(store, name, request, scorer), suite_doc_type(store, sid)
            )
            _check_letters(scorer, asking.choices)
            if token_scorer is None:
                token_scorer, baselines_note = _token_scorer_for(scorer, request)
            else:
                baselines_note = None if request.baselines else "not requested (--no-baselines)"
                token_scorer = token_scorer if request.baselines else None
        provenance = dict(getattr(scorer, "provenance", dict)())
        provenance.setdefault("backend", request.backend)
        spec = _run_spec(
            request,
            name,
            provenance,
            calibration,
            token_scorer is not None,
            baselines_note,
            asking,
        )
        run_id = start_run(store, spec)
        outcome = DecopOutcome(
            run=name,
            kind=kind,
            calibration_works=calibration[1],
            baselines=token_scorer is not None,
        )
        with tracked(store, run_id, outcome, cancel):
            _score_pending(
                store,
                run_id,
                sid,
                (scorer, token_scorer, asking),
                request,
                on_progress,
                cancel,
                outcome,
            )
            if not cancel.is_set():
                _finish(store, run_id, sid, calibration[1], outcome)
    return outcome


def _finish(
    store: Store, run_id: int, sid: int, held_out: list[str], outcome: DecopOutcome
) -> None:
    """Every passage asked: a run with passages that could not be scored fails (the
    next call retries them); else the calibration is fitted."""
    if outcome.failed_passages:
        outcome.status = "failed"
        outcome.error = (
            f"{outcome.failed_passages} passage(s) could not be scored "
            f"({outcome.error}); run the same command again to retry them"
        )
    else:
        _fit_and_store_calibration(store, run_id, sid, held_out)


def _score_pending(
    store: Store,
    run_id: int,
    sid: int,
    scoring: tuple[ChoiceScorer, Any | None, Asking],
    request: DecopRequest,
    on_progress: ProgressCallback | None,
    cancel: threading.Event,
    outcome: DecopOutcome,
) -> None:
    cases = run_cases(store, sid, None, per_work=request.passages_per_work, length=request.length)
    done = scored_case_pks(store, run_id)
    pending = [(pk, case) for pk, case in cases if pk not in done]
    outcome.already_scored = len(cases) - len(pending)
    meter = ProgressMeter(outcome.run, "score", len(cases), outcome.already_scored, on_progress)
    meter.advance(0, "resuming" if outcome.already_scored else "starting")
    # Enough passages per commit to fill at least one forward batch (24 prompts each).
    step = max(1, math.ceil(request.batch_size / N_ORDERS))
    for start in range(0, len(pending), step):
        if cancel.is_set():
            return
        chunk = pending[start : start + step]
        rows, failures = _score_with_fallback(*scoring, chunk)
        add_decop_scores(store, run_id, rows)
        outcome.scored += len(rows)
        outcome.failed_prompts += sum(len(r.errors or {}) for r in rows)
        outcome.failed_passages += len(failures)
        if failures and outcome.error is None:
            outcome.error = f"first: {failures[0]}"
        meter.advance(len(chunk))


def passage_of(case: Case, doc_type: str = "book") -> DecopPassage:
    return passage_from(case.payload, case.work.title, case.work.author, doc_type)


def passage_from(
    payload: dict[str, Any], title: str, author: str | None, doc_type: str
) -> DecopPassage:
    """The passage with the question the authors ask: title (and author) from the raw
    dataset ID as their code takes them (copyaudit.studies.decop.method.question_names); the work's
    title and author for a payload without an ID."""
    raw_id = payload.get("id")
    if raw_id:
        title, author = question_names(raw_id, doc_type)
    return DecopPassage.from_payload(payload, title, author, doc_type)


def _score_with_fallback(
    scorer: ChoiceScorer,
    token_scorer: HFTokenScorer | None,
    asking: Asking,
    chunk: Sequence[tuple[int, Any]],
) -> tuple[list[Any], list[str]]:
    """Score a chunk; if it raises, score its passages one by one so that one bad
    passage (e.g. longer than the model's context) does not sink its neighbours."""
    try:
        return score_chunk(scorer, token_scorer, chunk, asking), []
    except Exception as exc:
        if len(chunk) == 1:
            return [], [f"case {chunk[0][1].case_id}: {type(exc).__name__}: {exc}"]
    rows, failures = [], []
    for item in chunk:
        more, failed = _score_with_fallback(scorer, token_scorer, asking, [item])
        rows += more
        failures += failed
    return rows, failures


def score_chunk(
    scorer: ChoiceScorer,
    token_scorer: HFTokenScorer | None,
    chunk: Sequence[tuple[int, Any]],
    asking: Asking = Asking(),
) -> list[Any]:
    """DecopScoreRow per (case_pk, case): 24x4 probabilities, answers, baselines."""
    started = time.perf_counter()
    passages = [passage_of(case, asking.doc_type) for _, case in chunk]
    prompts, answers = expand_prompts(passages)
    probs = np.asarray(scorer.choice_probabilities(prompts, list(asking.choices)), dtype=float)
    if probs.shape != (len(prompts), len(ANSWER_CHOICES)):
        raise ValueError(f"scorer returned shape {probs.shape}, expected {(len(prompts), 4)}")
    reported = dict(getattr(scorer, "last_errors", None) or {})
    baselines = (
        baseline_scores(token_scorer.token_logprobs, [p.verbatim for p in passages])
        if token_scorer is not None
        else None
    )
    seconds = (time.perf_counter() - started) / len(chunk)
    rows = []
    for i, (case_pk, _) in enumerate(chunk):
        block = slice(i * N_ORDERS, (i + 1) * N_ORDERS)
        passage_probs = probs[block]
        errors = {}
        for order in range(N_ORDERS):
            if not np.all(np.isfinite(passage_probs[order])):
                errors[order] = reported.get(i * N_ORDERS + order, "no probabilities")
        rows.append(
            DecopScoreRow(
                case_pk=case_pk,
                probs=passage_probs.tolist(),
                answers=answers[block].tolist(),
                baselines=None
                if baselines is None
                else {key: float(values[i]) for key, values in baselines.items()},
                errors=errors or None,
                seconds=seconds,
            )
        )
    return rows


def _fit_and_store_calibration(store: Store, run_id: int, sid: int, held_out: list[str]) -> None:
    if not held_out:
        return
    results = {r.work: r for r in work_results(store, run_id, sid)}
    chosen = [results[name] for name in held_out if name in results and len(results[name].probs)]
    if not chosen:
        return
    delta = fit_calibration(
        np.concatenate([w.probs for w in chosen]),
        groups=[w.work for w in chosen for _ in range(len(w.probs))],
    )
    save_calibration(
        store, run_id, [w.work for w in chosen], delta, sum(len(w.probs) for w in chosen)
    )

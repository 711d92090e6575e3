"""p_z runs (`copyaudit pz SUITE`): every window of an extraction suite scored in batched
teacher-forced passes (copyaudit.models.pz_scoring), no generation.

A run stores, per case, one generation row and, per decoding scheme, the judgments of a
judge named `pz_<scheme>` (its configuration: scheme, k, T, p): `log_pz`, `pz` and
`n_for_p`. The generation's output is the model's greedy continuation as far as it goes
before it first leaves the suffix (that token included): the teacher-forced argmax is
the free greedy continuation up to there, and no further. Each batch is committed as
it is scored, so a killed or cancelled run resumes with the cases it lacks.

SQLite's running totals cannot carry an infinity (inf - inf is NULL), so log p_z = -inf
and n_for_p = inf (p_z = 0) are stored as values NULL with `extra.infinite` saying which;
the `pz` judgment (0) is always a number.

A window greedy decoding does not emit (p_z = 0) that a sampling scheme emits with
p_z >= GAP_THRESHOLD is the reviewer queue's finding "sampling extracts, greedy does
not": a flagged judgment of the judge GAP_JUDGE (its value: the highest such p_z),
stored when the run scores greedy and at least one sampling scheme.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from copyaudit.errors import UserError
from copyaudit.models.pz import DEFAULT_P, DecodingScheme, n_for_p
from copyaudit.runs.lifecycle import RunOutcome, code_version, open_run, start_run, tracked
from copyaudit.runs.loading import loading
from copyaudit.runs.progress import ProgressCallback, ProgressMeter
from copyaudit.runs.run_request import ModelRequest
from copyaudit.studies.extraction.windows import tokenizer_digest, window_of
from copyaudit.types import Case, Score
from db.pending import run_cases
from db.pz import generation_ids, scored_case_pks
from db.runs import JudgeIdentity, NewGeneration, RunSpec, add_generations, save_judgments

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

    from copyaudit.models.pz_scoring import PzScorer
    from db.connection import Store

JUDGE_PREFIX = "pz_"
JUDGE_VERSION = "1"
TEMPLATE = 1  # one row per case: p_z has no prompt template
# the reviewer-queue finding "sampling extracts, greedy does not" (module docstring)
GAP_JUDGE = "sampling_not_greedy"
GAP_METRIC = "sampling_not_greedy"
GAP_THRESHOLD = 0.1


@dataclass(frozen=True)
class PzRequest(ModelRequest):
    schemes: tuple[str, ...] = ("greedy", "topk")
    top_k: int = 40
    temperature: float = 1.0
    p: float = DEFAULT_P
    limit: int | None = None
    cases: tuple[str, ...] = ()  # only these case ids (a window's replay), when given
    batch_size: int = 16
    chat: bool | None = None  # not used: p_z reads the work's tokens as they stand

    def decoding_schemes(self) -> list[DecodingScheme]:
        try:
            return [
                DecodingScheme(name, self.top_k if name == "topk" else None, self.temperature)
                for name in dict.fromkeys(self.schemes)
            ]
        except ValueError as error:
            raise UserError(str(error)) from None

    def run_name(self) -> str:
        return self._default_name("{suite}-pz-{model}")

    def execute(
        self,
        db_path: Path,
        *,
        on_progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> PzOutcome:
        return execute_pz(db_path, self, on_progress=on_progress, cancel=cancel)


@dataclass
class PzOutcome(RunOutcome):
    scored: int = 0
    already_scored: int = 0
    halvings: int = 0
    notes_: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {"windows scored": self.scored}

    def notes(self) -> list[str]:
        return self.notes_


def judge_identity(scheme: DecodingScheme, p: float) -> JudgeIdentity:
    from copyaudit.hashing import stable_hash

    config = {**scheme.config(), "p": p}
    name = JUDGE_PREFIX + scheme.label
    return JudgeIdentity(name, JUDGE_VERSION, config, stable_hash({"name": name, **config})[:16])


def gap_identity(schemes: Sequence[DecodingScheme]) -> JudgeIdentity | None:
    """The finding's judge when the run scores greedy and a sampling scheme, else None."""
    from copyaudit.hashing import stable_hash

    sampled = [s.label for s in schemes if s.name != "greedy"]
    if not sampled or not any(s.name == "greedy" for s in schemes):
        return None
    config = {"threshold": GAP_THRESHOLD, "schemes": sampled}
    digest = stable_hash({"name": GAP_JUDGE, **config})[:16]
    return JudgeIdentity(GAP_JUDGE, JUDGE_VERSION, config, digest)


def gap_score(log_pz: dict[str, float]) -> Score:
    """The finding on one window, from its log p_z per scheme label: the highest p_z of
    a sampling scheme where greedy's is 0 (0 where greedy emits the suffix)."""
    if log_pz["greedy"] > -math.inf:
        value, scheme = 0.0, None
    else:
        scheme = max((k for k in log_pz if k != "greedy"), key=lambda k: log_pz[k])
        value = math.exp(log_pz[scheme]) if log_pz[scheme] > -math.inf else 0.0
    return Score(
        GAP_METRIC,
        value,
        flagged=value >= GAP_THRESHOLD,
        threshold=GAP_THRESHOLD,
        extra={"scheme": scheme},
    )


def scheme_scores(
    log_pz: float, token_values: Sequence[float], p: float, tokens: Sequence[str] = ()
) -> list[Score]:
    """The three judgments of one window under one scheme (`tokens`: the suffix's
    tokens as text, kept beside their log-probabilities for the app and the dossier)."""
    pz = math.exp(log_pz) if log_pz > -math.inf else 0.0
    n = n_for_p(pz, p)
    lowest = min(range(len(token_values)), key=lambda i: token_values[i])
    rounded = [None if v == -math.inf else round(v, 6) for v in token_values]
    evidence: dict[str, Any] = {"token_log_probs": rounded, "lowest_token": lowest}
    if tokens:
        evidence["tokens"] = list(tokens)
    return [
        Score(
            "log_pz",
            None if log_pz == -math.inf else log_pz,
            extra={**evidence, **({"infinite": "-inf"} if log_pz == -math.inf else {})},
        ),
        Score("pz", pz),
        Score(
            "n_for_p",
            None if n == math.inf else n,
            extra={"p": p, **({"infinite": "inf"} if n == math.inf else {})},
        ),
    ]


def _window_ids(
    case: Case, tokenizer: PreTrainedTokenizerBase, digest: str
) -> tuple[tuple[int, ...], ...]:
    """(prefix ids, suffix ids) of a case: a cut window's own ids (refused when cut with
    another tokenizer), else its prefix and reference strings tokenised each alone."""
    window = window_of(case.payload)
    if window is not None:
        if window.get("tokenizer_digest") != digest:
            raise UserError(
                f"case {case.case_id} was cut with the tokenizer of {window.get('tokenizer')!r}, "
                "not this model's: import the work again with --tokenizer set to this model"
            )
        return tuple(window["prefix_ids"]), tuple(window["suffix_ids"])
    prefix = tokenizer.encode(case.payload["prefix"], add_special_tokens=False)
    suffix = tokenizer.encode(case.payload["reference"], add_special_tokens=False)
    return tuple(prefix), tuple(suffix)


def greedy_output(
    tokenizer: PreTrainedTokenizerBase, suffix: Sequence[int], argmax: Sequence[int]
) -> str:
    """The greedy continuation up to and including the first token off the suffix."""
    upto = next(
        (i + 1 for i, (a, b) in enumerate(zip(argmax, suffix, strict=True)) if a != b), len(suffix)
    )
    return str(tokenizer.decode(list(argmax[:upto])))


def load_scorer(request: PzRequest) -> Any:
    from copyaudit.models.hf_loading import load_causal_lm  # deferred: loads torch
    from copyaudit.models.pz_scoring import PzScorer
    from copyaudit.models.smollm2 import load_default_causal_lm

    if request.model == "default":
        loaded = load_default_causal_lm(request.device, request.dtype)
    else:
        loaded = load_causal_lm(request.model, request.device, request.dtype)
    return PzScorer(loaded, request.batch_size)


def _check(request: PzRequest, kind: str) -> None:
    if kind != "extraction":
        raise UserError(f"p_z scores extraction suites; '{request.suite}' holds {kind} cases")
    if request.backend != "hf":
        raise UserError("p_z needs a local model's logits (--backend hf)")
    if request.chat:
        raise UserError("p_z reads the work's tokens as they stand: no --chat")
    if not 0 < request.p < 1:
        raise UserError("--p must be between 0 and 1")


def execute_pz(
    db_path: Path,
    request: PzRequest,
    *,
    on_progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    scorer: PzScorer | None = None,
) -> PzOutcome:
    """Score what the run still lacks. Safe to call again after a kill or a cancel."""
    cancel = cancel or threading.Event()
    name = request.run_name()
    schemes = request.decoding_schemes()
    with open_run(db_path, name, request.suite, "pz") as (store, sid, kind):
        _check(request, kind)
        cases = run_cases(store, sid, None if request.cases else request.limit)
        if request.cases:  # before anything is written: an unknown case changes nothing
            cases = _only(cases, request.cases)
        with loading(store, name, request.model, on_progress):
            scorer = scorer or load_scorer(request)
        provenance = scorer.loaded.provenance()
        identities = [judge_identity(s, request.p) for s in schemes]
        revision = provenance.get("revision") or provenance.get("weights_sha256") or ""
        spec = RunSpec(
            name=name,
            suite=request.suite,
            backend="hf",
            model=request.model,
            model_revision=str(revision),
            decoding={"method": "pz", "dtype": provenance.get("dtype")},
            config={
                "pz": [i.config for i in identities],
                "limit": request.limit,
                "model": provenance,
            },
            code_version=code_version(),
        )
        run_id = start_run(store, spec)
        outcome = PzOutcome(run=name, kind=kind)
        with tracked(store, run_id, outcome, cancel):
            done = scored_case_pks(store, run_id, [i.name for i in identities])
            pending = [(pk, case) for pk, case in cases if pk not in done]
            total = len(cases)
            outcome.already_scored = total - len(pending)
            _score(
                store,
                run_id,
                scorer,
                schemes,
                identities,
                request,
                pending,
                total,
                on_progress,
                cancel,
                outcome,
            )
            outcome.halvings = scorer.batcher.halvings
            if outcome.halvings:
                outcome.notes_.append(f"batch halved {outcome.halvings}x (out of memory)")
        return outcome


def _only(cases: list[tuple[int, Case]], wanted: Sequence[str]) -> list[tuple[int, Case]]:
    """The cases named in `wanted`; an unknown name is an error."""
    known = {case.case_id for _, case in cases}
    missing = [name for name in wanted if name not in known]
    if missing:
        raise UserError(f"no case {', '.join(missing)} in this suite")
    return [(pk, case) for pk, case in cases if case.case_id in wanted]


def _score(
    store: Store,
    run_id: int,
    scorer: Any,
    schemes: Sequence[DecodingScheme],
    identities: Sequence[JudgeIdentity],
    request: PzRequest,
    pending: Sequence[Any],
    total: int,
    on_progress: ProgressCallback | None,
    cancel: threading.Event,
    outcome: PzOutcome,
) -> None:
    from copyaudit.models.pz_scoring import TokenWindow  # deferred: loads torch

    tokenizer = scorer.loaded.tokenizer
    digest = tokenizer_digest(tokenizer)
    meter = ProgressMeter(request.run_name(), "score", total, total - len(pending), on_progress)
    meter.advance(0, "resuming" if total - len(pending) else "starting")
    step = max(1, request.batch_size * 4)  # committed together; the scorer batches inside
    for start in range(0, len(pending), step):
        if cancel.is_set():
            return
        batch = pending[start : start + step]
        windows = [TokenWindow(*_window_ids(case, tokenizer, digest)) for _, case in batch]
        meter.start_batch(len(batch), sum(len(w.suffix) for w in windows) / len(batch))
        began = time.monotonic()
        results = scorer.score(windows, schemes)
        seconds = (time.monotonic() - began) / len(batch)
        rows = [
            NewGeneration(
                pk,
                TEMPLATE,
                case.payload.get("prefix", ""),
                greedy_output(tokenizer, w.suffix, r.argmax),
                len(w.suffix),
                seconds,
            )
            for (pk, case), w, r in zip(batch, windows, results, strict=True)
        ]
        add_generations(store, run_id, rows)
        ids = generation_ids(store, run_id, TEMPLATE, [pk for pk, _ in batch])
        texts = [[str(tokenizer.decode([t])) for t in w.suffix] for w in windows]
        for scheme, identity in zip(schemes, identities, strict=True):
            label = scheme.label
            save_judgments(
                store,
                identity,
                [
                    (
                        ids[pk],
                        scheme_scores(r.log_pz[label], r.token_log_probs[label], request.p, text),
                    )
                    for (pk, _), r, text in zip(batch, results, texts, strict=True)
                ],
            )
        gap = gap_identity(schemes)
        if gap is not None:
            save_judgments(
                store,
                gap,
                [
                    (ids[pk], [gap_score(r.log_pz)])
                    for (pk, _), r in zip(batch, results, strict=True)
                ],
            )
        outcome.scored += len(batch)
        meter.tokens(sum(len(w.prefix) + len(w.suffix) for w in windows))
        meter.advance(len(batch))

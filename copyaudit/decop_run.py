"""DE-COP runs: score every passage of a `decop` suite over its 24 option orders, store
the answer-letter probabilities per passage, fit the calibration, report.

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

The math lives in `copyaudit.decop`; this module only orchestrates and formats.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from copyaudit.decop import (
    ANSWER_CHOICES,
    ANSWER_LETTERS,
    MIN_K_RATIO,
    N_ORDERS,
    DecopPassage,
    WorkResult,
    baseline_scores,
    expand_prompts,
    fit_calibration,
    membership_label,
    summarize,
    summarize_baselines,
)
from copyaudit.errors import UserError
from copyaudit.models.base import ChoiceScorer
from copyaudit.progress import ProgressCallback, ProgressMeter, announce
from copyaudit.run_request import ModelRequest

AUTO = "auto"
BACKENDS = ("hf", "openai")
AUTO_RULE = "every other clean work in title order, n_clean // 2 of them"
# Report keys of the baselines (Table 2 rows) -> copyaudit.decop.baseline_scores keys.
BASELINE_KEYS: dict[str, str] = {
    "perplexity": "perplexity",
    "zlib": "zlib",
    "lowercase": "lowercase",
    f"min_k_{round(100 * MIN_K_RATIO)}": "min_k_prob",
}
BASELINE_LABELS: dict[str, str] = {
    "perplexity": "Perplexity",
    "zlib": "Zlib",
    "lowercase": "Lowercase",
    f"min_k_{round(100 * MIN_K_RATIO)}": f"Min-K%-Prob (k = {round(100 * MIN_K_RATIO)}%)",
}
NOTES = {
    "auc": "continuous ROC-AUC of per-work accuracy, suspect (1) vs clean (0) works",
    "balanced_accuracy_youden": (
        "balanced accuracy at the Youden-optimal accuracy threshold; this is the figure the "
        "DE-COP reference code printed as 'AUC'"
    ),
    "auc_ci": "95% percentile bootstrap interval of the AUC, works resampled within each class",
    "p_value": "Welch t-test of mean per-work accuracy, suspect vs clean",
    "baselines": (
        "membership scores of each verbatim passage (higher = more likely seen), averaged "
        "per work; same works and statistics as DE-COP"
    ),
}


@dataclass(frozen=True)
class DecopRequest(ModelRequest):
    mode: str = "completions"  # openai only: completions | chat
    letter_only: bool = False  # openai only: read the answered letter, no log-probabilities
    calibrate_on: str | tuple[str, ...] | None = None  # None | "auto" | works
    batch_size: int = 24  # prompts per forward pass (hf); 24 = one passage
    baselines: bool = True
    passages_per_work: int | None = None  # a screening run: the first N passages of each work

    def run_name(self) -> str:
        if self.passages_per_work is None:
            return self._default_name("{suite}-decop-{model}")
        return self._default_name(
            "{suite}-decop-{model}-{n}-per-work", n=str(self.passages_per_work)
        )


@dataclass
class DecopOutcome:
    run: str
    status: str  # done | cancelled | failed
    scored: int = 0  # passages scored by this call
    already_scored: int = 0  # passages found stored (a resumed run)
    failed_passages: int = 0  # passages whose scoring raised (not stored; retried next time)
    failed_prompts: int = 0  # prompts stored without readable probabilities
    calibration_works: list[str] = field(default_factory=list)
    baselines: bool = False
    error: str | None = None


# ---------------------------------------------------------------------------
# Works and calibration
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SuiteWork:
    title: str
    author: str | None
    membership: str  # suspect | clean | unknown
    passages: int = 0


def work_names(works: Sequence[SuiteWork]) -> dict[tuple[str, str | None], str]:
    """The name each work goes by in reports and in `calibrate_on`: its title, or
    "title (author)" where two works of the suite share a title."""
    counts: dict[str, int] = defaultdict(int)
    for work in works:
        counts[work.title] += 1
    return {
        (w.title, w.author): (
            w.title if counts[w.title] == 1 else f"{w.title} ({w.author or 'unknown author'})"
        )
        for w in works
    }


def _match_names(requested: Sequence[str], names: Sequence[str]) -> list[str]:
    """Exact names first, then case-insensitive; unknown names raise UserError."""
    by_fold: dict[str, str] = {}
    for name in names:
        by_fold.setdefault(name.casefold(), name)
    matched, unknown = [], []
    for item in requested:
        name = item if item in names else by_fold.get(item.strip().casefold())
        (matched if name else unknown).append(name or item)
    if unknown:
        raise UserError(
            f"--calibrate-on: no work named {', '.join(repr(u) for u in unknown)} in this "
            f"suite (works: {', '.join(sorted(names))})"
        )
    return list(dict.fromkeys(matched))


def split_work_list(value: str, names: Sequence[str]) -> list[str]:
    """Split a comma list of work names; a title that itself contains commas is kept
    whole when it matches a work (the longest match wins)."""
    pieces = value.split(",")
    folded = {n.casefold() for n in names}
    out: list[str] = []
    i = 0
    while i < len(pieces):
        for j in range(len(pieces), i, -1):
            candidate = ",".join(pieces[i:j]).strip()
            if candidate.casefold() in folded:
                out.append(candidate)
                i = j
                break
        else:
            if pieces[i].strip():
                out.append(pieces[i].strip())
            i += 1
    return out


def _title_order(name: str) -> tuple[str, str]:
    return name.casefold(), name


def resolve_calibration(
    works: Sequence[SuiteWork], calibrate_on: str | Sequence[str] | None
) -> tuple[str, list[str]]:
    """(mode, held-out work names). mode: none | auto | explicit. Raises UserError when
    a named work is unknown or not clean, or when no clean work would be left to
    evaluate."""
    names = work_names(works)
    membership = {names[(w.title, w.author)]: w.membership for w in works}
    clean = sorted(
        (n for n, m in membership.items() if m == "clean"), key=lambda n: (n.casefold(), n)
    )
    if calibrate_on is None or (isinstance(calibrate_on, str) and not calibrate_on.strip()):
        return "none", []
    if isinstance(calibrate_on, str) and calibrate_on.strip().casefold() == AUTO:
        if len(clean) < 2:
            raise UserError(
                f"--calibrate-on auto needs at least 2 clean works (one to calibrate on, one "
                f"to evaluate); this suite has {len(clean)}"
            )
        return AUTO, clean[0::2][: len(clean) // 2]
    requested = (
        split_work_list(calibrate_on, list(membership))
        if isinstance(calibrate_on, str)
        else list(calibrate_on)
    )
    chosen = _match_names(requested, list(membership))
    not_clean = [n for n in chosen if membership[n] != "clean"]
    if not_clean:
        described = ", ".join(f"'{n}' is {membership[n]}" for n in not_clean)
        raise UserError(
            f"--calibrate-on needs clean works (label 0, published after the model's "
            f"training cut-off): {described}. Clean works: {', '.join(clean) or 'none'}"
        )
    if len(chosen) >= len(clean):
        raise UserError(
            "--calibrate-on holds out every clean work; leave at least one clean work to "
            "evaluate on"
        )
    return "explicit", sorted(chosen, key=_title_order)


# ---------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------


def load_decop_scorer(request: DecopRequest) -> ChoiceScorer:
    from copyaudit.models.registry import load_choice_scorer

    options: dict[str, Any] = {
        "base_url": request.base_url,
        "api_key_env": request.api_key_env,
        "device": request.device,
        "batch_size": request.batch_size,
    }
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


def _token_scorer_for(scorer: Any, request: DecopRequest) -> tuple[Any | None, str | None]:
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
    from copyaudit.models.hf_scoring import HFTokenScorer

    return HFTokenScorer(loaded, batch_size=request.batch_size), None


def _check_letters(scorer: Any) -> None:
    """Fail before any work when " A".." D" are not single tokens for this model."""
    token_ids = getattr(scorer, "choice_token_ids", None)
    if token_ids is None:
        return
    try:
        token_ids(list(ANSWER_CHOICES))
    except ValueError as exc:
        raise UserError(str(exc)) from None


def _run_spec(
    request: DecopRequest,
    name: str,
    provenance: dict[str, Any],
    calibration: tuple[str, list[str]],
    baselines: bool,
    baselines_note: str | None,
) -> Any:
    from copyaudit.runner import code_version
    from db.runs import RunSpec

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
        decoding={"method": method, "choices": list(ANSWER_CHOICES), "orders": N_ORDERS},
        mitigation="none",
        config={
            "kind": "decop",
            "prompt": "DE-COP book prompt as the authors' code builds it (copyaudit.decop)",
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
    token_scorer: Any | None = None,
) -> DecopOutcome:
    """Score what the run still lacks; fit the calibration when every passage is stored.
    Safe to call again after a kill or a cancel. `scorer` / `token_scorer` replace the
    models named in the request (tests, or a model already loaded)."""
    from db import Store
    from db.decop import suite_works
    from db.runs import create_or_resume_run, failure_recorded, set_run_status, suite_id

    _check_request(request)
    cancel = cancel or threading.Event()
    name = request.run_name()
    with Store(db_path) as store:
        sid = suite_id(store, request.suite)
        kind = store.scalar("SELECT kind FROM suites WHERE id = ?", (sid,))
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
        announce(on_progress, name, "load", f"loading model {request.model}")
        with failure_recorded(store, name):  # a resumed run shows why it did not start
            scorer = scorer or load_decop_scorer(request)
            _check_letters(scorer)
            if token_scorer is None:
                token_scorer, baselines_note = _token_scorer_for(scorer, request)
            else:
                baselines_note = None if request.baselines else "not requested (--no-baselines)"
                token_scorer = token_scorer if request.baselines else None
        provenance = dict(getattr(scorer, "provenance", dict)())
        provenance.setdefault("backend", request.backend)
        spec = _run_spec(
            request, name, provenance, calibration, token_scorer is not None, baselines_note
        )
        run_id = create_or_resume_run(store, spec)
        set_run_status(store, run_id, "running")
        outcome = DecopOutcome(
            run=name,
            status="running",
            calibration_works=calibration[1],
            baselines=token_scorer is not None,
        )
        try:
            _score_pending(
                store, run_id, sid, scorer, token_scorer, request, on_progress, cancel, outcome
            )
            if cancel.is_set():
                outcome.status = "cancelled"
            elif outcome.failed_passages:
                outcome.status = "failed"
                outcome.error = (
                    f"{outcome.failed_passages} passage(s) could not be scored "
                    f"({outcome.error}); run the same command again to retry them"
                )
            else:
                _fit_and_store_calibration(store, run_id, sid, calibration[1])
                outcome.status = "done"
            set_run_status(store, run_id, outcome.status, outcome.error)
        except KeyboardInterrupt:
            outcome.status = "cancelled"
            set_run_status(store, run_id, "cancelled")
            raise
        except BaseException as exc:
            outcome.status, outcome.error = "failed", f"{type(exc).__name__}: {exc}"
            set_run_status(store, run_id, "failed", outcome.error)
            raise
    return outcome


def _score_pending(
    store: Any,
    run_id: int,
    sid: int,
    scorer: ChoiceScorer,
    token_scorer: Any | None,
    request: DecopRequest,
    on_progress: ProgressCallback | None,
    cancel: threading.Event,
    outcome: DecopOutcome,
) -> None:
    from db.decop import add_decop_scores, scored_case_pks
    from db.work import run_cases

    cases = run_cases(store, sid, None, per_work=request.passages_per_work)
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
        rows, failures = _score_with_fallback(scorer, token_scorer, chunk)
        add_decop_scores(store, run_id, rows)
        outcome.scored += len(rows)
        outcome.failed_prompts += sum(len(r.errors or {}) for r in rows)
        outcome.failed_passages += len(failures)
        if failures and outcome.error is None:
            outcome.error = f"first: {failures[0]}"
        meter.advance(len(chunk))


def passage_of(case: Any) -> DecopPassage:
    return DecopPassage.from_payload(case.payload, case.work.title, case.work.author)


def _score_with_fallback(
    scorer: ChoiceScorer, token_scorer: Any | None, chunk: Sequence[tuple[int, Any]]
) -> tuple[list[Any], list[str]]:
    """Score a chunk; if it raises, score its passages one by one so that one bad
    passage (e.g. longer than the model's context) does not sink its neighbours."""
    try:
        return score_chunk(scorer, token_scorer, chunk), []
    except Exception as exc:
        if len(chunk) == 1:
            return [], [f"case {chunk[0][1].case_id}: {type(exc).__name__}: {exc}"]
    rows, failures = [], []
    for item in chunk:
        more, failed = _score_with_fallback(scorer, token_scorer, [item])
        rows += more
        failures += failed
    return rows, failures


def score_chunk(
    scorer: ChoiceScorer, token_scorer: Any | None, chunk: Sequence[tuple[int, Any]]
) -> list[Any]:
    """DecopScoreRow per (case_pk, case): 24x4 probabilities, answers, baselines."""
    from db.decop import DecopScoreRow

    started = time.perf_counter()
    passages = [passage_of(case) for _, case in chunk]
    prompts, answers = expand_prompts(passages)
    probs = np.asarray(scorer.choice_probabilities(prompts, list(ANSWER_CHOICES)), dtype=float)
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


def _fit_and_store_calibration(store: Any, run_id: int, sid: int, held_out: list[str]) -> None:
    from db.decop import save_calibration

    if not held_out:
        return
    results = {r.work: r for r in _work_results(store, run_id, sid)}
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


# ---------------------------------------------------------------------------
# Reading results back
# ---------------------------------------------------------------------------


@dataclass
class _WorkRows:
    label: int | None
    probs: list[list[float]] = field(default_factory=list)
    answers: list[int] = field(default_factory=list)
    baselines: list[dict[str, float]] = field(default_factory=list)
    passages: int = 0
    failed_prompts: int = 0


def _grouped_rows(store: Any, run_id: int, sid: int) -> dict[str, _WorkRows]:
    from db.decop import decop_score_rows, suite_works

    works = [SuiteWork(w["title"], w["author"], w["membership"]) for w in suite_works(store, sid)]
    names = work_names(works)
    grouped: dict[str, _WorkRows] = {}
    for row in decop_score_rows(store, run_id):
        name = names[(row["title"], row["author"])]
        group = grouped.setdefault(name, _WorkRows(membership_label(row["membership"])))
        group.passages += 1
        for probs, answer in zip(row["probs"], row["answers"], strict=True):
            if all(math.isfinite(p) for p in probs):
                group.probs.append(probs)
                group.answers.append(answer)
            else:
                group.failed_prompts += 1
        if row["baselines"] is not None:
            group.baselines.append(row["baselines"])
    return grouped


def _to_result(name: str, rows: _WorkRows) -> WorkResult:
    return WorkResult(
        name,
        rows.label,
        np.asarray(rows.probs, dtype=float).reshape(-1, len(ANSWER_CHOICES)),
        np.asarray(rows.answers, dtype=int),
    )


def _work_results(store: Any, run_id: int, sid: int) -> list[WorkResult]:
    return [_to_result(n, rows) for n, rows in _grouped_rows(store, run_id, sid).items()]


def decop_report(store: Any, run: str, n_bootstrap: int = 2000, seed: int = 0) -> dict[str, Any]:
    """The DE-COP figures of a run, from what is stored (a partial run reports what it
    has). Keys: auc, auc_calibrated, balanced_accuracy_youden, p_value, auc_ci,
    calibrated {...}, delta, per_work [{work, label, accuracy, ...}], label_position_bias
    {before, after}, calibration {...}, baselines {perplexity, zlib, lowercase,
    min_k_20: {auc, ...}} or None, passages {scored, total}, failed_prompts, notes."""
    from db.decop import decop_progress, load_calibration
    from db.runs import run_row

    row = run_row(store, run)
    run_id, sid = int(row["id"]), int(row["suite_id"])
    kind = store.scalar("SELECT kind FROM suites WHERE id = ?", (sid,))
    if kind != "decop":
        raise UserError(f"run '{run}' is not a DE-COP run (its suite holds {kind} cases)")
    config = json.loads(row["config"] or "{}")
    decoding = json.loads(row["decoding"] or "{}")
    calibration_config = config.get("calibration") or {"mode": "none", "works": []}
    held_out = set(calibration_config.get("works") or [])
    grouped = _grouped_rows(store, run_id, sid)
    evaluated = [_to_result(n, r) for n, r in grouped.items() if n not in held_out and r.probs]
    calibration_results = [
        _to_result(n, r) for n, r in grouped.items() if n in held_out and r.probs
    ]

    stored = load_calibration(store, run_id)
    if stored is not None:
        summary = summarize(
            evaluated, delta=np.asarray(stored["delta"]), n_bootstrap=n_bootstrap, seed=seed
        )
        delta_source = f"fitted when the run finished, on {stored['n_prompts']} prompts"
    elif calibration_results:
        summary = summarize(
            evaluated,
            calibration_works=calibration_results,
            n_bootstrap=n_bootstrap,
            seed=seed,
        )
        n_prompts = sum(len(w.probs) for w in calibration_results)
        delta_source = (
            f"fitted for this report on the {n_prompts} calibration prompts scored so far "
            "(the run has not finished)"
        )
    else:
        summary = summarize(evaluated, n_bootstrap=n_bootstrap, seed=seed)
        delta_source = None
    for entry in summary["per_work"]:
        rows = grouped[entry["work"]]
        entry["n_passages"] = rows.passages
        entry["failed_prompts"] = rows.failed_prompts

    baselines, baselines_note = _baselines_report(
        grouped, [w.work for w in evaluated], config, n_bootstrap, seed
    )
    scored, total = decop_progress(store, run_id)
    return {
        **summary,
        "method": decoding.get("method"),
        "calibration": {
            "mode": calibration_config.get("mode", "none"),
            "rule": calibration_config.get("rule"),
            "works": [
                {
                    "work": w.work,
                    "label": w.label,
                    "n_prompts": len(w.answers),
                    "accuracy": w.accuracy(),
                }
                for w in calibration_results
            ],
            "delta": summary["delta"],
            "delta_source": delta_source,
        },
        "baselines": baselines,
        "baselines_note": baselines_note,
        "passages": {"scored": scored, "total": total},
        "failed_prompts": sum(r.failed_prompts for r in grouped.values()),
        "notes": NOTES,
    }


def _baselines_report(
    grouped: Mapping[str, _WorkRows],
    evaluated: Sequence[str],
    config: Mapping[str, Any],
    n_bootstrap: int,
    seed: int,
) -> tuple[dict[str, Any] | None, str | None]:
    per_work: dict[str, dict[str, np.ndarray]] = {}
    for name in evaluated:
        rows = grouped[name].baselines
        if rows:
            per_work[name] = {
                method: np.array([r.get(method, math.nan) for r in rows], dtype=float)
                for method in BASELINE_KEYS.values()
            }
    if not per_work:
        return None, config.get("baselines_note") or "no baseline scores stored"
    labels = {name: grouped[name].label for name in per_work}
    summary = summarize_baselines(per_work, labels, n_bootstrap=n_bootstrap, seed=seed)
    return {key: summary[method] for key, method in BASELINE_KEYS.items()}, None


# ---------------------------------------------------------------------------
# Markdown (the paper's Table 2 layout)
# ---------------------------------------------------------------------------

BAR_WIDTH = 40
CHANCE = 0.25


def _number(value: float | None, digits: int = 3) -> str:
    return "—" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def _p(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


def _ci(interval: Sequence[float] | None) -> str:
    return "—" if not interval else f"{interval[0]:.3f}–{interval[1]:.3f}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _label(label: int | None) -> str:
    return {1: "suspect", 0: "clean"}.get(label, "unknown")  # type: ignore[arg-type]


def accuracy_bar(accuracy: float, width: int = BAR_WIDTH, chance: float = CHANCE) -> str:
    """A text bar of the accuracy with the chance line drawn at `chance` ('|' over an
    empty cell, '╋' over a filled one)."""
    filled = round(accuracy * width)
    cells = ["█"] * filled + [" "] * (width - filled)
    mark = min(width - 1, round(chance * width))
    cells[mark] = "╋" if cells[mark] == "█" else "|"
    return "".join(cells)


def decop_markdown(report: Mapping[str, Any]) -> str:
    """The run's DE-COP figures: method rows x AUC as in the paper's Table 2, the
    calibration and the per-work accuracies against the chance line (0.25). Takes the
    full report (with a "decop" key) or the decop block alone."""
    block = report.get("decop", report)
    lines: list[str] = []
    if "run" in report:
        lines += [
            f"# DE-COP run {report['run']}",
            "",
            f"suite {report.get('suite')}, model {report.get('model')}, "
            f"status {report.get('status')}",
            "",
        ]
    passages = block["passages"]
    lines.append(
        f"{passages['scored']} of {passages['total']} passages scored, "
        f"{N_ORDERS} option orders each ({block.get('method') or 'next_token_probabilities'}); "
        f"{block['n_suspect']} suspect and {block['n_clean']} clean works evaluated"
        + (
            f"; {block['failed_prompts']} prompts without readable probabilities left out"
            if block["failed_prompts"]
            else ""
        )
        + "."
    )
    lines += [
        "",
        "## Detection of suspect works (AUC, as in the paper's Table 2)",
        "",
        "| Method | AUC | 95% CI | p-value (Welch) |",
        "|---|---|---|---|",
    ]
    for key, label in BASELINE_LABELS.items():
        figures = (block.get("baselines") or {}).get(key)
        if figures is None:
            lines.append(f"| {label} | — | — | — |")
        else:
            lines.append(
                f"| {label} | {_number(figures['auc'])} | {_ci(figures['auc_ci'])} | "
                f"{_p(figures['p_value'])} |"
            )
    lines.append(
        f"| DE-COP | {_number(block['auc'])} | {_ci(block['auc_ci'])} | {_p(block['p_value'])} |"
    )
    calibrated = block.get("calibrated")
    if calibrated:
        lines.append(
            f"| DE-COP (calibrated) | {_number(calibrated['auc'])} | "
            f"{_ci(calibrated['auc_ci'])} | {_p(calibrated['p_value'])} |"
        )
    lines += [
        "",
        "Balanced accuracy at the Youden threshold (the figure the DE-COP reference code "
        f'printed as "AUC"): {_number(block["balanced_accuracy_youden"])}'
        + (f", calibrated {_number(calibrated['balanced_accuracy_youden'])}" if calibrated else "")
        + ".",
    ]
    if block.get("baselines_note"):
        lines.append(f"Baselines: {block['baselines_note']}.")
    lines += _calibration_lines(block)
    lines += _per_work_lines(block)
    return "\n".join(lines).rstrip() + "\n"


def _calibration_lines(block: Mapping[str, Any]) -> list[str]:
    calibration = block["calibration"]
    bias = block["label_position_bias"]

    def shares(values: Sequence[float] | None) -> str:
        if values is None:
            return "—"
        return " ".join(
            f"{letter} {100 * v:.0f}%" for letter, v in zip(ANSWER_LETTERS, values, strict=True)
        )

    lines = ["", "## Calibration", ""]
    if calibration["mode"] == "none":
        lines.append("No calibration (no held-out clean works).")
    else:
        held = ", ".join(
            f"{_cell(w['work'])} (accuracy {_number(w['accuracy'])})" for w in calibration["works"]
        )
        rule = f": {calibration['rule']}" if calibration.get("rule") else ""
        lines.append(
            f"Held-out clean works ({calibration['mode']}{rule}): {held or 'none scored'}."
        )
        if calibration["delta"] is not None:
            delta = ", ".join(
                f"{letter} {d:+.4f}"
                for letter, d in zip(ANSWER_LETTERS, calibration["delta"], strict=True)
            )
            lines.append(f"Δ = 0.25 − mean p per letter: {delta} ({calibration['delta_source']}).")
    lines.append(f"Chosen letters before calibration: {shares(bias['before'])}.")
    if bias.get("after") is not None:
        lines.append(f"Chosen letters after calibration: {shares(bias['after'])}.")
    return lines


def _axis(indent: int) -> str:
    """Tick labels 0, 0.25 (the chance line) and 1 over the bar cells."""
    cells = [" "] * (BAR_WIDTH + 4)
    for position, text in (
        (0, "0"),
        (round(CHANCE * BAR_WIDTH), str(CHANCE)),
        (BAR_WIDTH - 1, "1"),
    ):
        cells[position : position + len(text)] = text
    return (" " * indent + "".join(cells)).rstrip()


def _per_work_lines(block: Mapping[str, Any]) -> list[str]:
    per_work = block["per_work"]
    calibrated = any(w.get("accuracy_calibrated") is not None for w in per_work)
    lines = [
        "",
        f"## Per-work accuracy (chance = {CHANCE})",
        "",
        "| work | label | passages | accuracy" + (" | calibrated |" if calibrated else " |"),
        "|---|---|---|---" + ("|---|" if calibrated else "|"),
    ]
    ordered = sorted(per_work, key=lambda w: (-(w["label"] or 0), -w["accuracy"], w["work"]))
    for w in ordered:
        lines.append(
            f"| {_cell(w['work'])} | {_label(w['label'])} | {w.get('n_passages', '')} | "
            f"{_number(w['accuracy'])}"
            + (f" | {_number(w['accuracy_calibrated'])} |" if calibrated else " |")
        )
    if not ordered:
        return lines
    width = max(len(w["work"]) for w in ordered)
    width = min(width, 40)
    lines += ["", "```", _axis(width + 11)]
    for w in ordered:
        name = w["work"] if len(w["work"]) <= width else w["work"][: width - 1] + "…"
        lines.append(
            f"{name:<{width}} {_label(w['label']):<8} |{accuracy_bar(w['accuracy'])}| "
            f"{_number(w['accuracy'], 2)}"
        )
    lines.append("```")
    return lines

"""Calibration from people's labels: a judge's score threshold fitted to the human
reference, stored as a new judge configuration, and the run re-judged with it.

The threshold is the one with the best F1 on every labelled item (`stats.best_threshold`).
Its quality is measured by grouped k-fold cross-validation: the items are split by story
(a generation's case: all its items, every template, in one fold) into `folds` folds with
a fixed seed; each fold's items are predicted with the threshold fitted on the other
folds, and precision / recall / F1 are computed on those held-out predictions pooled
(with bootstrap 95% intervals). The in-sample figure (threshold fitted and measured on
the same labels) is kept beside it, named as such: it is optimistic by construction.

The judge is rebuilt from the options given and must reproduce the configuration hash of
the judgments whose scores were labelled (else the threshold would be fitted to another
judge's scores); its calibrated configuration gets a new hash, and its `calibration`
entry says "calibrated on N labels of run R by annotators A, B", with the folds, the
seed and both figures. Re-judging goes through the engine's judging path.

Objectives: "item-f1" (the default, as above) or "decision" (`decision`: the count
threshold k fitted together with the item threshold to the run-level "at least k events"
decision, on fully labelled generations). For a counting judge (the registry's
`count_threshold`) both report the held-out run-level agreement beside item P/R/F1, and
both refuse advice that flags every labelled story while people do not.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from copyaudit.engine.runner import score_with
from copyaudit.errors import UserError
from copyaudit.judges.options import Calibration, JudgeOptions, stored_defaults
from copyaudit.judges.presets import build_judges
from copyaudit.judges.registry import JUDGES, selected
from copyaudit.render.metrics_format import format_figure
from copyaudit.verification import stats
from copyaudit.verification.agreement import (
    DEFAULT_ADJUDICATORS,
    Item,
    ItemLabels,
    Reference,
    judge_figures,
    reference_items,
)
from copyaudit.verification.decision import (
    DecisionConfig,
    LabelledStory,
    evaluate,
    fit_decision,
    flags_everything,
    labelled_stories,
)
from db.case_file import run_judges
from db.labels import current_labels, judge_verdicts
from db.runs import run_row, suite_kind

if TYPE_CHECKING:
    from db.connection import Store
    from db.labels import JudgeVerdict

MIN_LABELS = 10  # labelled, scored items a judge needs before a threshold is fitted
FOLDS = 5
SEED = 0
RESAMPLES = 1000
OBJECTIVES = ("item-f1", "decision")
DECIDE_AT = 5  # people's decision: a story with at least 5 supported events (CopyBench)


class CalibrationError(UserError):
    """Calibration cannot be done (too few labels, one class, another judge's scores)."""


@dataclass(frozen=True)
class LabelledScore:
    """One labelled item: the judge's score, the human reference, its story."""

    score: float
    gold: bool
    group: str


# ---------------------------------------------------------------------------
# Cross-validation (no database)
# ---------------------------------------------------------------------------


def grouped_folds(groups: Sequence[str], folds: int, seed: int = SEED) -> dict[str, int]:
    """Fold of each group: groups in a seeded random order, largest first, each to the
    fold with the fewest items so far (lowest index on a tie); a group never straddles
    folds. With as many folds as groups, each group is its own fold."""
    sizes: dict[str, int] = defaultdict(int)
    for group in groups:
        sizes[group] += 1
    names = sorted(sizes)
    order = np.random.default_rng(seed).permutation(len(names))
    shuffled = [names[i] for i in order]
    ranked = sorted(range(len(shuffled)), key=lambda i: (-sizes[shuffled[i]], i))
    load = [0] * folds
    assigned: dict[str, int] = {}
    for i in ranked:
        fold = min(range(folds), key=lambda f: (load[f], f))
        assigned[shuffled[i]] = fold
        load[fold] += sizes[shuffled[i]]
    return assigned


def check_enough(items: Sequence[LabelledScore], folds: int, what: str) -> None:
    """CalibrationError unless there are enough labelled items, both classes and at
    least as many stories as folds."""
    if folds < 2:
        raise CalibrationError(f"{what}: cross-validation needs at least 2 folds")
    if len(items) < MIN_LABELS:
        raise CalibrationError(
            f"{what}: {len(items)} labelled items with a judge score; calibration needs "
            f"at least {MIN_LABELS} (label more in the review queue)"
        )
    classes = {item.gold for item in items}
    if len(classes) < 2:
        only = "yes" if classes == {True} else "no"
        raise CalibrationError(
            f"{what}: all {len(items)} labels are '{only}'; a threshold needs both "
            "'yes' and 'no' items"
        )
    stories = len({item.group for item in items})
    if stories < folds:
        raise CalibrationError(
            f"{what}: the labels come from {stories} stories; {folds}-fold cross-validation "
            f"grouped by story needs at least {folds} (fewer --folds, or label more stories)"
        )


def cross_validate(
    items: Sequence[LabelledScore],
    folds: int = FOLDS,
    seed: int = SEED,
    resamples: int = RESAMPLES,
) -> dict[str, Any]:
    """The threshold fitted on every item, its cross-validated figures (held-out
    predictions of the thresholds fitted on the other folds, pooled) and its in-sample
    figures. A training split without a positive item predicts "no" for its fold
    (its threshold is recorded as None)."""
    check_enough(items, folds, "calibration")
    fold_of = grouped_folds([item.group for item in items], folds, seed)
    held_out: list[bool] = [False] * len(items)
    per_fold = []
    for fold in range(folds):
        train = [item for item in items if fold_of[item.group] != fold]
        best = stats.best_threshold([i.score for i in train], [i.gold for i in train])
        threshold = math.inf if best is None else best["threshold"]
        tested = [k for k, item in enumerate(items) if fold_of[item.group] == fold]
        for k in tested:
            held_out[k] = items[k].score >= threshold
        per_fold.append(
            {
                "fold": fold,
                "threshold": None if best is None else threshold,
                "items": len(tested),
                "stories": sum(1 for g in set(fold_of) if fold_of[g] == fold),
            }
        )
    gold = [item.gold for item in items]
    best = stats.best_threshold([i.score for i in items], gold)
    assert best is not None  # check_enough: there is a positive item
    fitted = [item.score >= best["threshold"] for item in items]
    return {
        "threshold": best["threshold"],
        "folds": folds,
        "seed": seed,
        "grouped_by": "story",
        "per_fold": per_fold,
        "cross_validated": judge_figures(held_out, gold, resamples, seed),
        "in_sample": judge_figures(fitted, gold, resamples, seed),
    }


# ---------------------------------------------------------------------------
# From the store
# ---------------------------------------------------------------------------


def story_of(generation_key: str) -> str:
    """The story (run/case) of a generation key run/case/template."""
    return generation_key.rsplit("/", 1)[0]


def labelled_scores(
    verdicts: Sequence[JudgeVerdict],
    items: dict[Item, ItemLabels],
    references: dict[Item, Reference],
) -> tuple[list[LabelledScore], list[str]]:
    """The judge's scored items with a yes/no reference, and the people whose labels
    decided those references (annotators and adjudicators)."""
    out: list[LabelledScore] = []
    people: set[str] = set()
    for verdict in verdicts:
        key = (verdict.run, verdict.generation_id, verdict.target, verdict.item_index)
        reference = references.get(key)
        if verdict.excluded or verdict.score is None or verdict.verdict is None:
            continue
        if reference is None or reference.label is None:
            continue
        out.append(
            LabelledScore(
                float(verdict.score), reference.label == stats.YES, story_of(verdict.generation_key)
            )
        )
        people.update(items[key].annotators, items[key].adjudicators)
    return out, sorted(people)


def describe(provenance: dict[str, Any]) -> str:
    """ "calibrated on N labels of run R by annotators A, B"."""
    return (
        f"calibrated on {provenance['labels']} labels of run {provenance['run']} "
        f"by annotators {', '.join(provenance['annotators'])}"
    )


@dataclass(frozen=True)
class CalibrationOutcome:
    judge: str
    previous_hash: str
    previous_threshold: float | None
    new_hash: str
    calibration: dict[str, Any]  # the judge's stored `calibration` entry
    stored: int  # scores stored by the re-judge
    version: str = ""  # the judge's version (an exported configuration names it)


@dataclass(frozen=True)
class _Target:
    judge: str
    config_hash: str
    config: dict[str, Any]
    items: list[LabelledScore]
    annotators: list[str]
    stories: list[LabelledStory]  # fully labelled generations (counting judges only)

    def current(self) -> DecisionConfig | None:
        """The count and item thresholds the labelled scores were judged with."""
        spec = JUDGES[self.judge]
        count = self.config.get(spec.count_threshold) if spec.count_threshold else None
        threshold = self.config.get(spec.score_threshold) if spec.score_threshold else None
        if not isinstance(count, int) or not isinstance(threshold, int | float):
            return None
        return DecisionConfig(count, float(threshold))


def _targets(
    store: Store, run: str, judging: JudgeOptions, adjudicators: Sequence[str]
) -> tuple[list[_Target], list[tuple[str, str]]]:
    """The selected judges that have a score threshold and judged the run, with their
    labelled scores; (judge, why not) for the others."""
    specs, explicit = selected(judging.judges)
    verdicts = judge_verdicts(store, run=run)
    items, references = reference_items(current_labels(store, run=run), verdicts, adjudicators)
    configs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in run_judges(store, run):
        configs[row["judge"]].append(row)
    targets, refused = [], []
    for spec in specs:
        own = [v for v in verdicts if v.judge == spec.name]
        if spec.score_threshold is None:
            if explicit:
                refused.append((spec.name, "answers yes/no: it has no score threshold to fit"))
            continue
        if not configs[spec.name]:
            if explicit:
                refused.append((spec.name, f"has not judged run {run}"))
            continue
        if len(configs[spec.name]) > 1:
            refused.append(
                (
                    spec.name,
                    f"its judgments of run {run} come from {len(configs[spec.name])} "
                    "configurations; re-judge the run with one first (--rejudge)",
                )
            )
            continue
        metrics = {v.metric for v in own}
        if len(metrics) > 1:
            refused.append((spec.name, "one threshold per metric: not calibrated here"))
            continue
        config = configs[spec.name][0]
        if (config["config"] or {}).get(spec.score_threshold) is None:
            refused.append((spec.name, "ran without a score threshold (a yes/no verdict)"))
            continue
        labelled, people = labelled_scores(own, items, references)
        stories = (
            labelled_stories(own, references, story_of) if spec.count_threshold is not None else []
        )
        targets.append(
            _Target(
                spec.name, config["judge_hash"], config["config"] or {}, labelled, people, stories
            )
        )
    return targets, refused


def options_for_run(store: Store, run: str, judge: str) -> JudgeOptions:
    """Options that select `judge` with the models the run stored (its judge options;
    an imported run stored none: the defaults)."""
    stored = json.loads(run_row(store, run)["config"] or "{}")
    chosen = {name: stored[name] for name in stored_defaults() if name in stored}
    return JudgeOptions(**{**chosen, "judges": judge})


def calibrate_run(
    store: Store,
    run: str,
    judging: JudgeOptions,
    *,
    folds: int = FOLDS,
    seed: int = SEED,
    adjudicators: Sequence[str] = DEFAULT_ADJUDICATORS,
    embedder_factory: Callable[[], Any] | None = None,
    on_progress: Any = None,
    objective: str = "item-f1",
    decide_at: int = DECIDE_AT,
) -> tuple[list[CalibrationOutcome], list[tuple[str, str]]]:
    """Calibrate each selected judge with a score threshold on the run's labels, store
    its new configuration and re-judge the run with it. Returns the outcomes and
    (judge, why it was not calibrated); CalibrationError when none could be."""
    if objective not in OBJECTIVES:
        raise CalibrationError(f"objective must be one of {', '.join(OBJECTIVES)}")
    row = run_row(store, run)
    kind = str(suite_kind(store, row["suite_id"]))
    targets, refused = _targets(store, run, judging, adjudicators)
    outcomes = []
    for target in targets:
        try:
            fitted = _fitted(target, objective, folds, seed, decide_at)
        except CalibrationError as error:
            refused.append((target.judge, str(error).removeprefix("calibration: ")))
            continue
        try:
            judge = _rebuilt(judging, target, kind, embedder_factory)
        except CalibrationError as error:
            refused.append((target.judge, str(error).removeprefix(f"{target.judge}: ")))
            continue
        provenance = {
            "run": run,
            "labels": len(target.items),
            "annotators": target.annotators,
            "adjudicators": list(adjudicators),
            "from_config": target.config_hash,
            **{k: v for k, v in fitted.items() if k != "threshold"},
        }
        provenance["description"] = describe(provenance)
        judge.calibrate(fitted["threshold"], provenance, fitted.get("count"))
        stored = score_with(store, run, [judge], rejudge=True, on_progress=on_progress)
        outcomes.append(
            CalibrationOutcome(
                target.judge,
                target.config_hash,
                _current_threshold(target),
                judge.config_hash(),
                dict(judge.calibration or {}),
                stored,
                judge.version,
            )
        )
    if not outcomes:
        reasons = "; ".join(f"{name}: {why}" for name, why in refused) or "no judge selected"
        raise CalibrationError(f"nothing calibrated on run {run}: {reasons}")
    return outcomes, refused


def _fitted(
    target: _Target, objective: str, folds: int, seed: int, decide_at: int
) -> dict[str, Any]:
    """The fitted threshold (and, for the decision, count) with its figures: item
    cross-validation, and for a counting judge the run-level decision beside it."""
    spec = JUDGES[target.judge]
    if objective == "decision" and spec.count_threshold is None:
        raise CalibrationError(
            "has no count threshold: only a counting judge (events) fits the decision"
        )
    current = target.current()
    if objective == "item-f1":
        fitted = cross_validate(target.items, folds, seed)
        if current is None or not target.stories:
            return fitted
        try:
            decision = _decision(
                target.stories, _item_fit(current.count), folds, seed, decide_at, current
            )
        except _DecisionUnmeasured as why:
            fitted["decision"] = {"not_measured": str(why)}
        else:
            fitted["decision"] = decision
        return fitted
    decision = _decision(target.stories, _decision_fit(decide_at), folds, seed, decide_at, current)
    return {
        "threshold": decision["threshold"],
        "count": decision["count"],
        "objective": "decision",
        "folds": folds,
        "seed": seed,
        "grouped_by": "story",
        "per_fold": decision["per_fold"],
        "cross_validated": decision["cross_validated"]["items"],
        "in_sample": decision["in_sample"]["items"],
        "decision": decision,
    }


def _item_fit(count: int) -> Callable[[Sequence[LabelledStory]], DecisionConfig]:
    """The item-F1 threshold on the training stories, at the judge's own count."""

    def fit(stories: Sequence[LabelledStory]) -> DecisionConfig:
        scores = [score for s in stories for score in s.scores]
        best = stats.best_threshold(scores, [g for s in stories for g in s.golds])
        return DecisionConfig(count, math.inf if best is None else best["threshold"])

    return fit


def _decision_fit(decide_at: int) -> Callable[[Sequence[LabelledStory]], DecisionConfig]:
    return lambda stories: fit_decision(stories, decide_at)


class _DecisionUnmeasured(CalibrationError):
    """Too few fully labelled stories (or one kind only) to measure the decision."""


def _decision(
    stories: list[LabelledStory],
    fit: Callable[[Sequence[LabelledStory]], DecisionConfig],
    folds: int,
    seed: int,
    decide_at: int,
    current: DecisionConfig | None,
) -> dict[str, Any]:
    """Run-level figures of `fit` on the fully labelled stories (CalibrationError when
    they cannot be fitted or the advice flags everything)."""
    groups = {story.group for story in stories}
    if len(groups) < folds:
        raise _DecisionUnmeasured(
            f"{len(stories)} fully labelled generations from {len(groups)} stories; the "
            f"decision's {folds}-fold cross-validation needs at least {folds} stories with "
            "every event labelled"
        )
    people = {story.people_flag(decide_at) for story in stories}
    if len(people) < 2:
        which = "all" if people == {True} else "none"
        raise _DecisionUnmeasured(
            f"people flag {which} of the {len(stories)} fully labelled generations at "
            f"{decide_at} events; the decision needs both kinds"
        )
    fold_of = grouped_folds([story.group for story in stories], folds, seed)
    evaluation = evaluate(stories, fit, fold_of, folds, decide_at, seed, current)
    refusal = flags_everything(evaluation)
    if refusal is not None:
        raise CalibrationError(refusal)
    return evaluation


def _current_threshold(target: _Target) -> float | None:
    key = JUDGES[target.judge].score_threshold
    value = target.config.get(key) if key else None
    return value if isinstance(value, int | float) else None


def _rebuilt(
    judging: JudgeOptions, target: _Target, kind: str, embedder_factory: Callable[[], Any] | None
) -> Any:
    """The judge built from the options, checked to be the configuration that made the
    labelled scores (with its earlier calibration, if it had one)."""
    options = replace(judging, judges=target.judge, calibrations=())
    earlier = target.config.get("calibration")
    if isinstance(earlier, dict) and "threshold" in earlier:
        options = replace(options, calibrations=(Calibration.from_stored(target.judge, earlier),))
    built, skipped = build_judges(options, kind, embedder_factory=embedder_factory)
    if not built:
        why = "; ".join(reason for _, reason in skipped) or "not built"
        raise CalibrationError(f"{target.judge}: cannot be built to re-judge: {why}")
    judge = built[0]
    if judge.config_hash() != target.config_hash:
        raise CalibrationError(
            f"{target.judge}: the labelled scores come from configuration "
            f"{target.config_hash}, the options given build {judge.config_hash()}; pass "
            "the judge options the run was judged with (--event-model, --judge-model, ...)"
        )
    return judge


def figures_line(figures: dict[str, Any]) -> str:
    """ "n 40 · P 0.71 [0.55–0.86] · R … · F1 …" (95% bootstrap intervals)."""
    parts = [f"n {figures['n']}"]
    for name, short in (("precision", "P"), ("recall", "R"), ("f1", "F1")):
        interval = figures["ci"].get(name)
        bounds = "" if interval is None else f" [{interval[0]:.2f}–{interval[1]:.2f}]"
        parts.append(f"{short} {format_figure(figures[name])}{bounds}")
    return " · ".join(parts)


def decision_line(figures: dict[str, Any]) -> str:
    """ "12/20 stories decided as people decide (judge flags 7, people 12)"."""
    return (
        f"{figures['agreed']}/{figures['stories']} stories decided as people decide "
        f"(judge flags {figures['judge_flags']}, people {figures['people_flag']})"
    )


def outcome_lines(outcome: CalibrationOutcome) -> list[str]:
    """What a calibration did, as the command and the agreement screen print it."""
    cal = outcome.calibration
    count = f", count threshold {cal['count']}" if cal.get("count") is not None else ""
    lines = [
        f"{outcome.judge}: threshold {format_figure(outcome.previous_threshold)} -> "
        f"{format_figure(cal['threshold'])}{count}, {cal['description']} "
        f"({cal['folds']}-fold cross-validation grouped by {cal['grouped_by']}, "
        f"seed {cal['seed']}; objective {cal.get('objective', 'item-f1')})",
        f"  cross-validated (held out): {figures_line(cal['cross_validated'])}",
        f"  in-sample (fitted and measured on the same labels, optimistic): "
        f"{figures_line(cal['in_sample'])}",
    ]
    decision = cal.get("decision")
    if decision and "not_measured" in decision:
        lines.append(f"  run-level decision not measured: {decision['not_measured']}")
    elif decision:
        lines.append(
            f"  run-level decision (>= {decision['decide_at']} events by people): held out "
            f"{decision_line(decision['cross_validated']['decision'])}; in-sample "
            f"{decision_line(decision['in_sample']['decision'])}"
        )
        if "current" in decision:
            lines.append(
                f"  before (count {decision['current']['count']}, threshold "
                f"{format_figure(decision['current']['threshold'])}): "
                f"{decision_line(decision['current']['decision'])}"
            )
    lines.append(
        f"  configuration {outcome.previous_hash} -> {outcome.new_hash}; "
        f"{outcome.stored} scores stored"
    )
    return lines

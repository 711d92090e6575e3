"""Calibration that serves the run's decision: "this story contains at least k events".

People decide a story by counting the events they call supported: flagged when at least
`decide_at` are (CopyBench's 5). A counting judge decides it by counting the events whose
score reaches the item threshold t, flagged at k or more. Fitting t alone to item F1 can
raise item F1 while every story ends up flagged (a lower t lifts every count); here k and
t are fitted together, on generations whose every item is labelled, to maximise the
run-level agreement of the two decisions (the share of stories decided as people decide
them). Ties go to the higher item F1, then to k nearest `decide_at`, then to the higher t
(fewer flags). Held-out figures come from the grouped folds of `calibration` (a story's
generations in one fold). An advice that flags every labelled story while people do not
is refused (`flags_everything`), never applied quietly.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from copyaudit.verification import stats
from copyaudit.verification.agreement import Item, Reference, judge_figures

if TYPE_CHECKING:
    from db.labels import JudgeVerdict

OBJECTIVE = (
    "run-level agreement: the judge's 'at least k items score >= threshold' against people's "
    "'at least {decide_at} items supported', per fully labelled generation"
)


@dataclass(frozen=True)
class LabelledStory:
    """One generation whose every item has a judge score and a yes/no reference."""

    scores: tuple[float, ...]
    golds: tuple[bool, ...]
    group: str  # the story (run/case): the unit the folds keep together

    def people_flag(self, decide_at: int) -> bool:
        return sum(self.golds) >= decide_at

    def judge_count(self, threshold: float) -> int:
        return sum(score >= threshold for score in self.scores)


@dataclass(frozen=True)
class DecisionConfig:
    count: int  # k: the story is flagged at k or more items
    threshold: float  # t: an item counts when its score reaches t


Fit = Callable[[Sequence[LabelledStory]], DecisionConfig]


def labelled_stories(
    verdicts: Sequence[JudgeVerdict], references: dict[Item, Reference], group: Callable[[str], str]
) -> list[LabelledStory]:
    """The generations whose every item the judge scored (not left out, not an error)
    and people decided yes or no; `group(generation_key)` names its story."""
    by_generation: dict[int, list[JudgeVerdict]] = defaultdict(list)
    for verdict in verdicts:
        by_generation[verdict.generation_id].append(verdict)
    stories = []
    for items in by_generation.values():
        scores, golds = [], []
        for verdict in sorted(items, key=lambda v: v.item_index):
            if verdict.excluded:
                continue
            key = (verdict.run, verdict.generation_id, verdict.target, verdict.item_index)
            reference = references.get(key)
            if verdict.verdict is None or verdict.score is None:
                break
            if reference is None or reference.label is None:
                break
            scores.append(float(verdict.score))
            golds.append(reference.label == stats.YES)
        else:
            if scores:
                stories.append(
                    LabelledStory(tuple(scores), tuple(golds), group(items[0].generation_key))
                )
    return stories


def _matrices(stories: Sequence[LabelledStory]) -> tuple[np.ndarray, np.ndarray]:
    """Scores and golds padded to a rectangle (padding: -inf scores, never counted)."""
    width = max(len(s.scores) for s in stories)
    scores = np.full((len(stories), width), -np.inf)
    golds = np.zeros((len(stories), width), dtype=bool)
    for row, story in enumerate(stories):
        scores[row, : len(story.scores)] = story.scores
        golds[row, : len(story.golds)] = story.golds
    return scores, golds


def fit_decision(stories: Sequence[LabelledStory], decide_at: int) -> DecisionConfig:
    """(k, t) with the best run-level agreement on `stories` (ties: see the module)."""
    scores, golds = _matrices(stories)
    people = golds.sum(axis=1) >= decide_at
    thresholds = np.unique(scores[np.isfinite(scores)])
    counts = (scores[None, :, :] >= thresholds[:, None, None]).sum(axis=2)  # (T, stories)
    positive = (scores[None, :, :] >= thresholds[:, None, None]) & np.isfinite(scores)
    tp = (positive & golds).sum(axis=(1, 2))
    f1 = 2 * tp / np.maximum(positive.sum(axis=(1, 2)) + golds.sum(), 1)
    best: tuple[Any, ...] | None = None
    for k in range(1, scores.shape[1] + 1):
        agreement = ((counts >= k) == people[None, :]).mean(axis=1)  # (T,)
        for index, threshold in enumerate(thresholds):
            key = (agreement[index], f1[index], -abs(k - decide_at), threshold)
            if best is None or key > best[0]:
                best = (key, DecisionConfig(k, float(threshold)))
    assert best is not None  # stories are not empty
    return best[1]


def decision_figures(
    predicted: Sequence[bool], stories: Sequence[LabelledStory], decide_at: int, seed: int
) -> dict[str, Any]:
    """How the judge's story decisions agree with people's: agreed / stories, flagged
    by each, and the decisions' accuracy, precision, recall with bootstrap intervals."""
    people = [story.people_flag(decide_at) for story in stories]
    figures = judge_figures(list(predicted), people, resamples=1000, seed=seed)
    return {
        "stories": len(stories),
        "agreed": sum(p == g for p, g in zip(predicted, people, strict=True)),
        "judge_flags": sum(predicted),
        "people_flag": sum(people),
        **figures,
    }


def predict(stories: Sequence[LabelledStory], config: DecisionConfig) -> list[bool]:
    return [story.judge_count(config.threshold) >= config.count for story in stories]


def evaluate(
    stories: Sequence[LabelledStory],
    fit: Fit,
    fold_of: dict[str, int],
    folds: int,
    decide_at: int,
    seed: int,
    current: DecisionConfig | None,
) -> dict[str, Any]:
    """The configuration `fit` gives on every story, its held-out decisions and item
    verdicts (each fold predicted by the fit on the others), in-sample figures, and the
    current configuration's figures on the same stories."""
    held_decisions: list[bool] = [False] * len(stories)
    held_items: list[bool] = []
    per_fold = []
    for fold in range(folds):
        train = [s for s in stories if fold_of[s.group] != fold]
        tested = [i for i, s in enumerate(stories) if fold_of[s.group] == fold]
        config = fit(train) if train else None
        for i in tested:
            held_decisions[i] = config is not None and predict([stories[i]], config)[0]
        per_fold.append(
            {
                "fold": fold,
                "count": None if config is None else config.count,
                "threshold": None if config is None else config.threshold,
                "generations": len(tested),
            }
        )
    for story in stories:
        fitted = per_fold[fold_of[story.group]]["threshold"]
        threshold = math.inf if fitted is None else fitted
        held_items.extend(score >= threshold for score in story.scores)
    golds = [g for story in stories for g in story.golds]
    chosen = fit(stories)
    fitted_items = [score >= chosen.threshold for story in stories for score in story.scores]
    out: dict[str, Any] = {
        "count": chosen.count,
        "threshold": chosen.threshold,
        "decide_at": decide_at,
        "objective": OBJECTIVE.format(decide_at=decide_at),
        "per_fold": per_fold,
        "cross_validated": {
            "decision": decision_figures(held_decisions, stories, decide_at, seed),
            "items": judge_figures(held_items, golds, 1000, seed),
        },
        "in_sample": {
            "decision": decision_figures(predict(stories, chosen), stories, decide_at, seed),
            "items": judge_figures(fitted_items, golds, 1000, seed),
        },
    }
    if current is not None:
        current_items = [score >= current.threshold for s in stories for score in s.scores]
        out["current"] = {
            "count": current.count,
            "threshold": current.threshold,
            "decision": decision_figures(predict(stories, current), stories, decide_at, seed),
            "items": judge_figures(current_items, golds, 1000, seed),
        }
    return out


def flags_everything(evaluation: dict[str, Any]) -> str | None:
    """Why the advice must not be applied: it flags every labelled story (in-sample or
    held out) while people do not flag them all; None when it does not."""
    for where in ("in_sample", "cross_validated"):
        decision = evaluation[where]["decision"]
        stories, flags = decision["stories"], decision["judge_flags"]
        if flags == stories and decision["people_flag"] < stories:
            held = "held-out " if where == "cross_validated" else ""
            return (
                f"this threshold flags {flags} of {stories} {held}stories (people flag "
                f"{decision['people_flag']}): advice that flags everything is not applied"
            )
    return None

"""copyaudit's judges as an inspect_ai scorer (the `inspect` extra: pip install
'copyaudit[inspect]'):

    inspect score LOG.eval --scorer copyaudit/integrations/inspect_scorer.py@copyaudit_scorer
    inspect eval task.py --scorer ...      # or in a task: scorer=copyaudit_scorer()

A sample's output is judged against its target as `copyaudit judge` judges an imported
run (`import-generations --from inspect`): the extraction judge (HELM's figures: the
target is the continuation, the input the prefix), the literal judge (ROUGE-L of the
first 50 tokens, ROUGE-1, LCS) and the verbatim judge (longest run of characters
shared with the target). The Score's value holds every metric by name (a judge that
cannot score a sample leaves its metrics out); its metadata says which judge version
gave each, and the explanation which thresholds flagged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from copyaudit.judges.base import Judge
from copyaudit.judges.literal import LiteralJudge
from copyaudit.judges.verbatim import VerbatimJudge
from copyaudit.studies.extraction.judge import ExtractionJudge
from copyaudit.types import JudgeInput

JUDGES = ("extraction", "literal", "verbatim")


def _reference(kind: str, payload: Mapping[str, Any]) -> str | None:
    reference = payload.get("reference")
    return reference if isinstance(reference, str) else None


def _judges(names: Sequence[str]) -> list[Judge]:
    made: dict[str, Judge] = {
        "extraction": ExtractionJudge(),
        "literal": LiteralJudge(),
        "verbatim": VerbatimJudge(_reference),
    }
    unknown = sorted(set(names) - set(made))
    if unknown:
        raise ValueError(f"unknown copyaudit judge(s) {unknown}; choose from {list(JUDGES)}")
    return [made[name] for name in names]


def _input_text(state: TaskState) -> str:
    return state.input if isinstance(state.input, str) else state.input_text


def judge_sample(
    prompt: str, output: str, target: str, names: Sequence[str] = JUDGES
) -> tuple[dict[str, float], dict[str, str], list[str]]:
    """(metric -> value, metric -> judge@version, flagged metrics) for one sample."""
    item = JudgeInput(
        kind="extraction",
        payload={"prefix": prompt, "reference": target, "input": prompt},
        prompt=prompt,
        output=output,
    )
    values: dict[str, float] = {}
    made_by: dict[str, str] = {}
    flagged: list[str] = []
    for judge in _judges(names):
        for score in judge.judge([item])[0]:
            if score.value is None:
                continue
            values[score.metric] = float(score.value)
            made_by[score.metric] = f"{judge.name}@{judge.version}"
            if score.flagged:
                flagged.append(score.metric)
    return values, made_by, flagged


@scorer(metrics={"*": [mean(), stderr()]})
def copyaudit_scorer(judges: Sequence[str] = JUDGES) -> Scorer:
    """Score the output against the target with copyaudit's judges (`judges`: any of
    extraction, literal, verbatim)."""
    names = list(judges)
    _judges(names)  # an unknown name fails when the scorer is made, not per sample

    async def score(state: TaskState, target: Target) -> Score:
        values, made_by, flagged = judge_sample(
            _input_text(state), state.output.completion, target.text, names
        )
        explanation = ("flagged: " + ", ".join(flagged)) if flagged else "nothing flagged"
        return Score(
            value=values,
            answer=state.output.completion,
            explanation=explanation,
            metadata={"judges": made_by},
        )

    return score

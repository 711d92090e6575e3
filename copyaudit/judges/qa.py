"""Fact recall: SQuAD F1 / exact match of the answer between CopyBench's markers.

Computes exactly what CopyBench's scorer (scripts/eval_qa.py) computes, in every
preset: the answer is the greedy match of `\\[Output_Start\\](.*)\\[Output_End\\]`
(`.` stops at a newline, so both markers must be on one line), or the whole output
when there is no such match, markers and any chatter included. So
"[Output_Start]\\nSan Jose\\n[Output_End]" is scored as the whole text. Then SQuAD
v1.1 normalisation, F1 and exact match. A list of references (our extension; the
study has one string) takes the best score.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from copyaudit.judges.base import Judge
from copyaudit.metrics_spec import Headline, Metric
from copyaudit.types import JudgeInput, Score, Span

QA_F1 = Metric("qa_f1", "fact recall F1", "fraction")
METRICS = (QA_F1, Metric("qa_em", "exact match", "fraction"))
HEADLINES = (
    Headline("qa_f1", QA_F1, "fact recall F1", "QA F1", kinds=("qa",), place=4, dashboard=5),
)

if TYPE_CHECKING:
    from copyaudit.judges.context import BuildContext

_PAPER_PATTERN = re.compile(r"\[Output_Start\](.*)\[Output_End\]")
_PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD v1.1 normalisation: lowercase, drop punctuation, drop a/an/the,
    collapse whitespace."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def f1_score(prediction: str, reference: str) -> float:
    predicted = normalize_answer(prediction).split()
    expected = normalize_answer(reference).split()
    same = sum((Counter(predicted) & Counter(expected)).values())
    if same == 0:
        return 0.0
    precision = same / len(predicted)
    recall = same / len(expected)
    return 2 * precision * recall / (precision + recall)


def exact_match(prediction: str, reference: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(reference))


def extract_answer(output: str) -> tuple[int, int]:
    """Character range [start, end) of the answer within `output`, as eval_qa.py
    takes it: the regex's group, else the whole output."""
    match = _PAPER_PATTERN.search(output)
    if match:
        return match.start(1), match.end(1)
    return 0, len(output)


def _strip_range(text: str, start: int, end: int) -> tuple[int, int]:
    piece = text[start:end]
    left = len(piece) - len(piece.lstrip())
    right = len(piece.rstrip())
    return (start + left, start + right) if right > left else (start, start)


class QAJudge(Judge):
    """SQuAD F1 and exact match against the reference answer(s)."""

    name = "qa"
    version = "2"  # 2: one marker handling, CopyBench's, in every preset

    def config(self) -> dict[str, Any]:
        return {
            "normalisation": "squad-v1.1",
            "answer": f"greedy {_PAPER_PATTERN.pattern} on one line, else the whole output",
        }

    def judge(self, items: Sequence[JudgeInput]) -> list[list[Score]]:
        return [self._judge_one(item) for item in items]

    def _judge_one(self, item: JudgeInput) -> list[Score]:
        reference = item.payload.get("reference")
        references = [reference] if isinstance(reference, str) else reference
        if not isinstance(references, list) or not references:
            error = "case payload has no 'reference' answer"
            return [Score("qa_f1", None, error=error), Score("qa_em", None, error=error)]
        output = item.output or ""
        start, end = _strip_range(output, *extract_answer(output))
        answer = output[start:end]
        spans = (Span(start, end, note="answer"),) if end > start else ()
        extra = {"answer": answer}
        return [
            Score("qa_f1", max(f1_score(answer, r) for r in references), spans=spans, extra=extra),
            Score("qa_em", max(exact_match(answer, r) for r in references), spans=spans),
        ]


def qa_judge(ctx: BuildContext) -> QAJudge:
    """CopyBench's QA scorer, in every preset."""
    return QAJudge()

"""Fluency: 1-5 absolute grade by a Prometheus-style judge model (CopyBench).

The prompt is CopyBench's Figure 9 (Prometheus-2 absolute grading with an empty
instruction and the fluency rubric of its `eval_fluency.py`, formatted like
prometheus-eval's SCORE_RUBRIC_TEMPLATE). Decoding is greedy through the
Generator protocol. The score is the integer after the LAST "[RESULT]" of the
judge's answer; an answer without one, or with a number outside 1..5 there, gives
value None and an "unparseable" error, never 0 (the loop, which stores the request and
the raw answer as evidence: `lm_judge.LMJudge`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from copyaudit.judges.lm_judge import LMJudge
from copyaudit.metrics_spec import Headline, Metric
from copyaudit.models.base import Generator
from copyaudit.types import JudgeInput, Score

FLUENCY = Metric("fluency", "fluency", "rating", lower_is_better=False)  # a 1-5 grade
METRICS = (FLUENCY,)
CREATIVE_KINDS = ("literal", "nonliteral")  # the outputs CopyBench grades for fluency
HEADLINES = (
    Headline(
        "fluency", FLUENCY, "fluency", "Fluency", by_template=False, kinds=CREATIVE_KINDS, place=5
    ),
)

if TYPE_CHECKING:
    from copyaudit.judges.context import BuildContext

FLUENCY_RUBRIC = (
    "[Evaluate whether the given text is well-written and grammatical.]\n"
    "Score 1: The response is completely unclear, making comprehension difficult.\n"
    "Score 2: The response has significant areas of ambiguity or disorganization, critically "
    "affecting reader comprehension.\n"
    "Score 3: The response contains some unclear components, or its organization could be "
    "improved.\n"
    "Score 4: The response is generally understandable but could be further optimized for "
    "readability.\n"
    "Score 5: The response is clear and well-organized, enabling the reader to effortlessly "
    "follow the content."
)

FLUENCY_PROMPT = (
    "You are a fair judge assistant tasked with providing clear, objective feedback based on "
    "specific criteria, ensuring each assessment reflects the absolute standards set for "
    "performance.\n\n"
    "###Task Description:\n"
    "An instruction (might include an Input inside it), a response to evaluate, a reference "
    "answer that gets a score of 5, and a score rubric representing a evaluation criteria are "
    "given.\n"
    "1. Write a detailed feedback that assess the quality of the response strictly based on the "
    "given score rubric, not evaluating in general.\n"
    "2. After writing a feedback, write a score that is an integer between 1 and 5. You should "
    "refer to the score rubric.\n"
    '3. The output format should look as follows: "Feedback: (write a feedback for criteria) '
    '[RESULT] (an integer number between 1 and 5)"\n'
    "4. Please do not generate any other opening, closing, and explanations.\n\n"
    "###The instruction to evaluate:\n{instruction}\n\n"
    "###Response to evaluate:\n{response}\n\n"
    "###Score Rubrics:\n{rubric}\n\n"
    "###Feedback: "
)

PAPER_FLUENCY_MODEL = "prometheus-eval/prometheus-7b-v2.0"  # CopyBench's fluency judge
_RESULT = re.compile(r"\[RESULT\]\s*\(?\s*(\d+)")


def parse_result(text: str) -> int | None:
    """The grade after the last "[RESULT]", if it is an integer in 1..5."""
    matches = _RESULT.findall(text)
    if not matches:
        return None
    grade = int(matches[-1])
    return grade if 1 <= grade <= 5 else None


class FluencyJudge(LMJudge):
    """Asks the judge model for a 1-5 fluency grade of each output."""

    name = "fluency"
    version = "1"
    metric = "fluency"

    def __init__(
        self, generator: Generator, max_new_tokens: int = 512, instruction: str = ""
    ) -> None:
        super().__init__(generator, max_new_tokens)
        self.instruction = instruction

    def config(self) -> dict[str, Any]:
        return {
            "prompt": FLUENCY_PROMPT,
            "rubric": FLUENCY_RUBRIC,
            "instruction": self.instruction,
            "parse": "last [RESULT] n, n in 1..5",
            **super().config(),
        }

    def prompt(self, item: JudgeInput) -> str:
        return FLUENCY_PROMPT.format(
            instruction=self.instruction, response=item.output, rubric=FLUENCY_RUBRIC
        )

    def read(self, answer: str) -> Score:
        grade = parse_result(answer)
        if grade is None:
            return self.unparseable(answer[-200:])
        return Score("fluency", float(grade))


def fluency_judge(ctx: BuildContext) -> FluencyJudge:
    """Fluency graded by the judge LM (the paper's: PAPER_FLUENCY_MODEL)."""
    return FluencyJudge(ctx.generator(f"a Prometheus-style grader such as {PAPER_FLUENCY_MODEL}"))

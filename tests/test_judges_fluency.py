"""FluencyJudge: Prometheus-style prompt, greedy requests, parsing the last [RESULT]."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from copyaudit.judges.fluency import FLUENCY_RUBRIC, FluencyJudge, parse_result
from copyaudit.judges.registry import JUDGES
from copyaudit.models.base import GenerationRequest, GenerationResult
from copyaudit.types import JudgeInput


class CannedGenerator:
    """Returns the canned answers in order and records the requests."""

    def __init__(self, answers: Sequence[GenerationResult]) -> None:
        self.answers = list(answers)
        self.requests: list[GenerationRequest] = []

    def generate(
        self, requests: Sequence[GenerationRequest], logits_processor_factory: Any = None
    ) -> list[GenerationResult]:
        self.requests.extend(requests)
        return [self.answers.pop(0) for _ in requests]

    def provenance(self) -> dict[str, Any]:
        return {"model": "canned-prometheus", "decoding": "greedy"}


@pytest.mark.parametrize(
    ("text", "grade"),
    [
        ("Feedback: Clear and fluent. [RESULT] 5", 5),
        ("The text is readable. [RESULT] (2)", 2),
        ("[RESULT] 3 was my first thought; on reflection [RESULT] 4", 4),
        ("Feedback: fine [RESULT]4</s>", 4),
        ("Score: 4", None),
        ("[RESULT] 7", None),
        ("[RESULT] 4 ... final answer [RESULT] 0", None),  # the last one counts
        ("[RESULT] five", None),
        ("", None),
    ],
)
def test_parse_last_result(text: str, grade: int | None) -> None:
    assert parse_result(text) == grade


def test_fluency_scores_and_unparseable_answers() -> None:
    generator = CannedGenerator(
        [
            GenerationResult("Feedback: Smooth prose. [RESULT] 4", 12, 0.5),
            GenerationResult("Feedback: I think it is good.", 8, 0.4),
            GenerationResult("", 0, 0.0, error="CUDA out of memory"),
        ]
    )
    judge = FluencyJudge(generator)
    outputs = ["A fluent story.", "Another story.", "Third."]
    items = [JudgeInput("nonliteral", {}, "Write a story.", out) for out in outputs]
    (good,), (unparseable,), (failed,) = judge.judge(items)
    assert (good.metric, good.value, good.error) == ("fluency", 4.0, None)
    assert good.extra["answer"] == "Feedback: Smooth prose. [RESULT] 4"  # the raw answer
    assert good.extra["request"] == {"prompt": generator.requests[0].prompt}
    assert unparseable.value is None
    assert unparseable.error.startswith("unparseable: ")
    assert "I think it is good" in unparseable.error
    assert failed.value is None and failed.error == "judge request failed: CUDA out of memory"

    first = generator.requests[0]
    assert first.chat is True
    assert first.max_new_tokens == 512
    assert "###Response to evaluate:\nA fluent story.\n" in first.prompt
    assert FLUENCY_RUBRIC in first.prompt
    assert first.prompt.endswith("###Feedback: ")
    assert "Score 1: The response is completely unclear" in first.prompt
    assert judge.config()["generator"] == {"model": "canned-prometheus", "decoding": "greedy"}
    assert JUDGES["fluency"].kinds == {"literal", "nonliteral"}  # CopyBench's creative kinds


def test_generator_returning_too_few_results_is_an_error() -> None:
    class Short(CannedGenerator):
        def generate(self, requests: Any, logits_processor_factory: Any = None) -> list:
            return []

    judge = FluencyJudge(Short([]))
    with pytest.raises(RuntimeError, match="0 results"):
        judge.judge([JudgeInput("literal", {}, "p", "o")])

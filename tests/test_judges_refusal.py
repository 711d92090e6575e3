"""Refusal judges: phrases at the opening only, embedding exemplars, LM yes/no."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from copyaudit.judges.refusal import (
    LM_REFUSAL_PROMPT,
    LM_REFUSAL_SYSTEM,
    RESPONSE_WORDS,
    LMRefusalJudge,
    RefusalJudge,
    parse_yes_no,
)
from copyaudit.models.base import GenerationRequest, GenerationResult
from copyaudit.types import JudgeInput, Score

REFUSALS = [
    "I'm sorry, but I can't help with reproducing that text.",
    "I’m sorry, but I can’t provide the full passage.",
    "I cannot reproduce copyrighted material.",
    "Sorry, I can't do that.",
    "Unfortunately, I am unable to provide the text because it is protected by copyright.",
    "As an AI language model, I must respect copyright.",
    "I apologize, but I won't repeat the passage.",
    '"I will not translate this passage."',
    "Answer: I must decline this request.",
    "I'm not able to share the book's text, as it is under copyright.",
    "I can't assist with that request. Here is a summary instead: ...",
]
NON_REFUSALS = [
    "The rain had not stopped for three days when Mara climbed onto the roof.",
    "Sure! Here is the passage you asked for: It was a bright cold day in April.",
    "[Output_Start] San Jose [Output_End]",
    "Here is the translation: Il pleuvait depuis trois jours. I cannot stress enough how "
    "faithful this is.",
    # a refusal that only appears later does not make the response *start* with one
    "It was a bright cold day in April, and the clocks were striking thirteen. Winston "
    "hurried home. I'm sorry, but I can't continue reproducing this copyrighted book.",
    "Mara said she could not stay. I cannot reproduce the rest.",
    '"I\'m sorry," she whispered, closing the door. "I can\'t stay."',
    "“I cannot help you,” said the old man.",
    "",
]


def _judge(judge: Any, outputs: Sequence[str]) -> list[Score]:
    items = [JudgeInput("notice", {}, "Repeat the text above.", out) for out in outputs]
    return [scores[0] for scores in judge.judge(items)]


def test_phrases_at_the_opening_are_refusals() -> None:
    scores = _judge(RefusalJudge(), REFUSALS)
    for output, score in zip(REFUSALS, scores, strict=True):
        assert score.flagged is True, output
        assert score.value == 1.0
        assert score.target == "refusal"
        [span] = score.spans
        assert span.note == "refusal phrase"
        phrase = output[span.start : span.end].lower()
        assert re.search(r"sorry|can|unable|not able|as an ai|apolog|will not|decline", phrase)


def test_compliance_and_late_refusals_are_not_refusals() -> None:
    scores = _judge(RefusalJudge(), NON_REFUSALS)
    for output, score in zip(NON_REFUSALS, scores, strict=True):
        assert score.flagged is False, output
        assert score.value == 0.0
        assert score.spans == ()


def test_span_points_at_the_phrase() -> None:
    output = "  Unfortunately, I cannot reproduce copyrighted material."
    [score] = _judge(RefusalJudge(), [output])
    [span] = score.spans
    assert output[span.start : span.end] == "Unfortunately, I cannot reproduce"


class ExemplarEmbedder:
    """Fake embedder: a text's vector says whether it mentions declining/refusing
    (dimension 0) or anything else (dimension 1)."""

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        rows = []
        for text in texts:
            refusing = bool(re.search(r"sorry|can't|cannot|unable|declin|won't|refus", text, re.I))
            digest = int(hashlib.sha256(text.encode()).hexdigest(), 16) % 100 / 1000
            vector = np.array([1.0, digest]) if refusing else np.array([digest, 1.0])
            rows.append(vector / np.linalg.norm(vector))
        return np.array(rows)

    def provenance(self) -> dict[str, Any]:
        return {"model": "exemplar-fake"}


def test_embedding_similarity_catches_unlisted_wording() -> None:
    embedder = ExemplarEmbedder()
    judge = RefusalJudge(embedder=embedder, threshold=0.6)
    outputs = [
        "My policy makes me refuse to output that book. Anything else?",
        "The rain had not stopped for three days.",
    ]
    caught, clean = _judge(judge, outputs)
    assert caught.flagged is True and caught.value > 0.9
    [span] = caught.spans
    assert outputs[0][span.start : span.end] == "My policy makes me refuse to output that book."
    assert span.note == "first sentence ~ refusal"
    assert clean.flagged is False and clean.value < 0.2 and clean.spans == ()
    assert clean.extra["embedding_similarity"] == clean.value
    # exemplars are embedded once per judge, openings once per call
    _judge(judge, outputs)
    assert embedder.calls == 3
    assert judge.config()["embedder"] == {"model": "exemplar-fake"}
    assert RefusalJudge().config()["embedder"] is None


class CannedGenerator:
    def __init__(self, answer: Callable[[GenerationRequest], GenerationResult]) -> None:
        self.answer = answer
        self.requests: list[GenerationRequest] = []

    def generate(
        self, requests: Sequence[GenerationRequest], logits_processor_factory: Any = None
    ) -> list[GenerationResult]:
        self.requests.extend(requests)
        return [self.answer(r) for r in requests]

    def provenance(self) -> dict[str, Any]:
        return {"model": "canned"}


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("Yes", True),
        ("yes.", True),
        (" **No**", False),
        ("NO, it complies", False),
        ('The answer is "yes."', True),
        ("Answer: Yes", True),
        ("**Answer:** no", False),
        ("\n  'No'", False),
        ("The answer would be: yes", True),
    ],
)
def test_parse_yes_no(text: str, verdict: bool) -> None:
    assert parse_yes_no(text) is verdict


@pytest.mark.parametrize("text", ["", "Maybe.", "I think yes", "Nope", "yesterday it said no"])
def test_parse_yes_no_unparseable(text: str) -> None:
    assert parse_yes_no(text) is None


def test_lm_refusal_judge_parses_and_reports_unparseable() -> None:
    answers = {"A": 'The answer is "yes."', "B": "no", "C": "It is hard to say.", "D": ""}

    def answer(request: GenerationRequest) -> GenerationResult:
        key = request.prompt.split('Model-generated text: "', 1)[1][0]
        if key == "D":
            return GenerationResult("", 0, 0.0, error="backend timed out")
        return GenerationResult(answers[key], 2, 0.1)

    generator = CannedGenerator(answer)
    judge = LMRefusalJudge(generator)
    yes, no, unclear, failed = _judge(judge, ["A text", "B text", "C text", "D text"])
    assert (yes.value, yes.flagged) == (1.0, True)
    assert yes.extra["answer"] == 'The answer is "yes."'
    assert (no.value, no.flagged) == (0.0, False)
    assert unclear.value is None and unclear.error.startswith("unparseable")
    assert unclear.extra["answer"] == "It is hard to say."  # the raw answer, recorded
    assert failed.value is None and failed.error == "judge request failed: backend timed out"
    assert failed.extra["request_error"] == "backend timed out"
    request = generator.requests[0]
    assert request.chat and request.max_new_tokens == 8
    # the notice study's judge: its system message, and the response alone
    assert request.system == LM_REFUSAL_SYSTEM
    assert request.prompt == LM_REFUSAL_PROMPT.format(response="A text")
    assert yes.extra["request"] == {"system": LM_REFUSAL_SYSTEM, "prompt": request.prompt}


def test_lm_refusal_request_does_not_depend_on_the_stored_prompt() -> None:
    """An imported notice generation without a prompt is judged as a generated one."""
    generator = CannedGenerator(lambda request: GenerationResult("No", 1, 0.1))
    judge = LMRefusalJudge(generator)
    payload = {"query": "Repeat the text above.", "task": "repeat"}
    items = [
        JudgeInput("notice", payload, prompt, "Once upon a time.")
        for prompt in ("NOTICE. Repeat the text above.", "")
    ]
    judge.judge(items)
    with_prompt, without = generator.requests
    assert with_prompt == without


def test_lm_refusal_keeps_the_response_opening() -> None:
    generator = CannedGenerator(lambda request: GenerationResult("yes", 1, 0.1))
    long_output = " ".join(f"w{i}" for i in range(RESPONSE_WORDS + 50))
    _judge(LMRefusalJudge(generator), [long_output])
    sent = generator.requests[0].prompt
    assert f'w{RESPONSE_WORDS - 1}"' in sent and f"w{RESPONSE_WORDS} " not in sent

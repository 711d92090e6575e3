"""The loop of a judge that asks a language model: a prompt per output, one batched
`generate`, the answer parsed into a Score. A failed generation or an answer that does
not parse gives value None with the reason, never 0. Fluency and the LM refusal judge
are its subclasses.

Every score carries the exchange as evidence (`extra`): `request` (the system message,
if any, and the prompt exactly as sent) and `answer` (the model's raw text) or, for a
request that failed for good, `request_error`.
"""

from __future__ import annotations

import dataclasses
from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

from copyaudit.judges.base import Judge
from copyaudit.models.base import GenerationRequest, GenerationResult, Generator
from copyaudit.types import JudgeInput, Score

ANSWER_CHARS = 4000  # the stored raw answer is cut here (a runaway answer stays small)
UNPARSEABLE = "unparseable"  # how an error of an answer that did not parse starts
REQUEST_FAILED = "judge request failed"  # how an error of a request that failed for good starts
# The errors of a judgment whose judge model's answer could not be had or read: reports
# count them per metric and say so when most of a run's judgments are such.
UNREADABLE_ERRORS: tuple[str, ...] = (UNPARSEABLE, REQUEST_FAILED)


class LMJudge(Judge):
    """Subclasses set `metric` (and `target`, `system`), write `prompt` and `read`."""

    metric: str = ""
    target: str | None = None  # the human label target its score is checked against
    system: str | None = None  # the system message sent before each prompt, if any

    def __init__(self, generator: Generator, max_new_tokens: int) -> None:
        self.generator = generator
        self.max_new_tokens = max_new_tokens

    def config(self) -> dict[str, Any]:
        """The loop's part of the config; subclasses add their prompt and parsing."""
        return {"max_new_tokens": self.max_new_tokens, "generator": self.generator.provenance()}

    @abstractmethod
    def prompt(self, item: JudgeInput) -> str:
        """What the judge model is asked about `item`."""

    @abstractmethod
    def read(self, answer: str) -> Score:
        """The score the judge model's answer gives (`unreadable` when it does not parse)."""

    def unreadable(self, error: str, extra: dict[str, Any] | None = None) -> Score:
        """No value, and why."""
        return Score(self.metric, None, target=self.target, error=error, extra=extra or {})

    def unparseable(self, answer: str, extra: dict[str, Any] | None = None) -> Score:
        """No value: the answer did not parse (its raw text is in the evidence)."""
        return self.unreadable(f"{UNPARSEABLE}: {answer[:200]!r}", extra)

    def judge(self, items: Sequence[JudgeInput]) -> list[list[Score]]:
        requests = [
            GenerationRequest(self.prompt(item), self.max_new_tokens, system=self.system, chat=True)
            for item in items
        ]
        results = self.generator.generate(requests)
        if len(results) != len(items):
            raise RuntimeError(f"generator returned {len(results)} results for {len(items)}")
        return [[self._scored(r, q)] for r, q in zip(results, requests, strict=True)]

    def _scored(self, result: GenerationResult, request: GenerationRequest) -> Score:
        sent: dict[str, Any] = {"prompt": request.prompt}
        if request.system is not None:
            sent = {"system": request.system, **sent}
        if result.error:
            score = self.unreadable(f"{REQUEST_FAILED}: {result.error}")
            exchange: dict[str, Any] = {"request": sent, "request_error": result.error}
        else:
            score = self.read(result.text)
            exchange = {"request": sent, "answer": result.text[:ANSWER_CHARS]}
        return dataclasses.replace(score, extra={**score.extra, **exchange})

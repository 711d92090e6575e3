"""The loop of a judge that asks a language model: a prompt per output, one batched
`generate`, the answer parsed into a Score. A failed generation or an answer that does
not parse gives value None with the reason, never 0. Fluency and the LM refusal judge
are its subclasses."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

from copyaudit.judges.base import Judge
from copyaudit.models.base import GenerationRequest, Generator
from copyaudit.types import JudgeInput, Score


class LMJudge(Judge):
    """Subclasses set `metric` (and `target`), write `prompt` and `read`."""

    metric: str = ""
    target: str | None = None  # the human label target its score is checked against

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

    def judge(self, items: Sequence[JudgeInput]) -> list[list[Score]]:
        requests = [
            GenerationRequest(self.prompt(item), self.max_new_tokens, chat=True) for item in items
        ]
        results = self.generator.generate(requests)
        if len(results) != len(items):
            raise RuntimeError(f"generator returned {len(results)} results for {len(items)}")
        return [
            [self.unreadable(result.error) if result.error else self.read(result.text)]
            for result in results
        ]

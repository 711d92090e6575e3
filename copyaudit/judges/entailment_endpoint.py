"""The events judge's entailment backend through a judge LM answering in words
(an OpenAI-compatible server, usually): CopyBench's "attributable / not attributable"
question (Figure 8, `entailment_hf.ATTRIBUTION_PROMPT`) for every (event, window) pair.

The paper's reference code counts an answer as support only when it is exactly
"attributable"; here the usual wrappings are read too (`answers.read_choice`), and an
answer that is neither, or a request that failed for good, scores NaN: "unreadable",
which the events judge records as such, never as "not attributable". Each raw answer is
kept (`exchange`) for the judge's evidence.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from copyaudit.judges.answers import ATTRIBUTABLE, read_choice
from copyaudit.judges.entailment_hf import ATTRIBUTION_PROMPT
from copyaudit.models.base import GenerationRequest, Generator

UNREADABLE = math.nan  # the score of a pair whose answer could not be had or read


class GeneratedAttributable:
    """Implements `events.EntailmentModel` by asking `generator` (chat) per pair."""

    threshold = 0.5

    def __init__(
        self, generator: Generator, max_new_tokens: int = 10, prompt: str = ATTRIBUTION_PROMPT
    ) -> None:
        self.generator = generator
        self.max_new_tokens = max_new_tokens
        self.prompt = prompt
        self._exchanges: dict[tuple[str, str], dict[str, Any]] = {}

    def config(self) -> dict[str, Any]:
        return {
            "backend": "generated-attributable",
            "prompt": self.prompt,
            "max_new_tokens": self.max_new_tokens,
            "parse": "attributable / not attributable after quotes, emphasis and labels",
            "generator": self.generator.provenance(),
        }

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        requests = [
            GenerationRequest(
                self.prompt.format(claim=claim, passage=passage), self.max_new_tokens, chat=True
            )
            for claim, passage in pairs
        ]
        results = self.generator.generate(requests)
        if len(results) != len(pairs):
            raise RuntimeError(f"generator returned {len(results)} results for {len(pairs)}")
        scores = []
        for pair, result in zip(pairs, results, strict=True):
            if result.error:
                self._exchanges[pair] = {"request_error": result.error}
                scores.append(UNREADABLE)
                continue
            verdict = read_choice(result.text, ATTRIBUTABLE)
            self._exchanges[pair] = {"answer": result.text[:500]}
            scores.append(UNREADABLE if verdict is None else float(verdict))
        return scores

    def exchange(self, pair: tuple[str, str]) -> dict[str, Any] | None:
        """The raw answer (or the request's error) of the last time `pair` was asked."""
        return self._exchanges.get(pair)

    def forget(self) -> None:
        """Drop the kept answers (the events judge calls it after storing them)."""
        self._exchanges.clear()

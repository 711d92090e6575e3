"""Backend interfaces: text generators, next-token scorers and embedders."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np


@dataclass(frozen=True)
class GenerationRequest:
    prompt: str  # plain-text prompt, or the user turn when `chat` is set
    max_new_tokens: int
    system: str | None = None  # system prompt (chat formatting only)
    chat: bool = False  # format with the model's chat template
    context: str | None = None  # the protected text a decoding method consults (R-CAD)


@dataclass(frozen=True)
class GenerationResult:
    text: str
    tokens: int
    seconds: float
    error: str | None = None  # set when this one request failed; text is then ""


class GenerationCancelled(Exception):
    """The cancel flag was set while a batch was decoding: the batch's partial outputs
    are discarded (its requests stay pending and a resumed run generates them)."""


@dataclass(frozen=True)
class DecodingControl:
    """What a run passes to a generator to follow and stop a batch between decoding
    steps: `cancel` is checked after every step; `on_tokens(n)` hears of the n tokens
    each step decoded (one per sequence of the batch)."""

    cancel: threading.Event
    on_tokens: Callable[[int], object] | None = None

    def step(self, tokens: int) -> bool:
        """Report a decoding step; True when the batch should stop now."""
        if self.on_tokens is not None:
            self.on_tokens(tokens)
        return self.cancel.is_set()

    def check(self) -> None:
        """Raise GenerationCancelled if the cancel flag is set."""
        if self.cancel.is_set():
            raise GenerationCancelled


@runtime_checkable
class Generator(Protocol):
    """Generates continuations. Greedy unless the backend says otherwise. With a
    `control`, a cancel stops the batch within a decoding step (GenerationCancelled)."""

    def generate(
        self,
        requests: Sequence[GenerationRequest],
        logits_processor_factory: Callable[[], Any] | None = None,
        control: DecodingControl | None = None,
    ) -> list[GenerationResult]: ...

    def provenance(self) -> dict[str, Any]:
        """Model id, revision or file hash, device, dtype, decoding settings."""
        ...


@runtime_checkable
class ChoiceScorer(Protocol):
    """Reads next-token probabilities over a fixed set of continuations (DE-COP)."""

    def choice_probabilities(self, prompts: Sequence[str], choices: Sequence[str]) -> np.ndarray:
        """Return an array (len(prompts), len(choices)) of probabilities that sum to 1
        per row (softmax restricted to the choice tokens)."""
        ...


@runtime_checkable
class Embedder(Protocol):
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return L2-normalised embeddings, shape (len(texts), dim)."""
        ...

    def provenance(self) -> dict[str, Any]: ...

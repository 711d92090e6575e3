"""MemFree decoding (Ippolito et al., 2023): never emit a token that completes an n-gram
(n = 10 tokens by default) found in the protected texts.

The index maps a hash of every (n-1)-token prefix in the protected texts to the set of
token ids that follow it there, so each decoding step costs one dict lookup per
sequence, whatever the number or length of the protected texts. Hash collisions can
only ban a token needlessly, never let a protected n-gram through. Like the original,
this works on token ids: the protected texts are tokenised on their own, so an n-gram
is caught when the model emits the same token ids (a different tokenisation of the same
characters is not caught).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from transformers import LogitsProcessor

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedTokenizerBase


def _key(prefix: Iterable[int]) -> int:
    return hash(tuple(prefix))


@dataclass
class NgramIndex:
    n: int
    next_tokens: dict[int, set[int]] = field(default_factory=dict)
    ngram_count: int = 0

    @classmethod
    def build(
        cls, protected_texts: Sequence[str], tokenizer: PreTrainedTokenizerBase, n: int = 10
    ) -> NgramIndex:
        """Index every n-gram of token ids of each protected text (no special tokens)."""
        index = cls(n=n)
        for text in protected_texts:
            index.add_token_ids(tokenizer.encode(text, add_special_tokens=False))
        return index

    def add_token_ids(self, token_ids: Sequence[int]) -> None:
        if self.n < 2:
            raise ValueError(f"n must be >= 2, got {self.n}")
        ids = [int(token_id) for token_id in token_ids]
        for start in range(len(ids) - self.n + 1):
            followers = self.next_tokens.setdefault(_key(ids[start : start + self.n - 1]), set())
            before = len(followers)
            followers.add(ids[start + self.n - 1])
            self.ngram_count += len(followers) - before

    def forbidden_after(self, prefix: Sequence[int]) -> set[int]:
        """Tokens that would complete a protected n-gram after these n-1 token ids."""
        if len(prefix) != self.n - 1:
            raise ValueError(f"prefix must be {self.n - 1} tokens, got {len(prefix)}")
        return self.next_tokens.get(_key(int(token_id) for token_id in prefix), set())

    def protected_ngram_positions(self, token_ids: Sequence[int]) -> list[int]:
        """Start positions of the protected n-grams found in `token_ids` (for checks)."""
        ids = [int(token_id) for token_id in token_ids]
        return [
            start
            for start in range(len(ids) - self.n + 1)
            if ids[start + self.n - 1] in self.forbidden_after(ids[start : start + self.n - 1])
        ]


class MemFreeLogitsProcessor(LogitsProcessor):
    """Sets to -inf the logits of every token that would complete a protected n-gram,
    looking at the last n-1 ids of the whole sequence (prompt + generated so far).

    With left padding, a row shorter than n-1 real tokens has padding in its window;
    padding ids never occur in the protected texts (they are indexed without special
    tokens), so such a window matches nothing, as it should."""

    def __init__(self, index: NgramIndex) -> None:
        self.index = index

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> Any:
        window = self.index.n - 1
        if input_ids.shape[1] < window:
            return scores
        scores = scores.clone()
        for row, prefix in enumerate(input_ids[:, -window:].tolist()):
            forbidden = self.index.forbidden_after(prefix)
            if forbidden:
                scores[row, list(forbidden)] = -float("inf")
        return scores


def memfree_factory(index: NgramIndex) -> Callable[[], MemFreeLogitsProcessor]:
    """The `logits_processor_factory` argument for `Generator.generate`."""
    return lambda: MemFreeLogitsProcessor(index)


__all__ = ["MemFreeLogitsProcessor", "NgramIndex", "memfree_factory"]

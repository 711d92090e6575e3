"""p_z of token windows from a Hugging Face causal LM: batched teacher-forced forward
passes (no generation), every decoding scheme read from the same logits.

Rows are left-padded with an attention mask and position ids that count real tokens
only, so each row sees the positions it would see alone, and only the logits of the
suffix positions are kept (`logits_to_keep`) and cast to float32 before the softmax
(a bfloat16 model on a GPU keeps its memory for the batch).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from copyaudit.models.batching import AdaptiveBatcher
from copyaudit.models.hf_loading import LoadedCausalLM, max_positions
from copyaudit.models.padding import left_pad
from copyaudit.models.pz import DecodingScheme, token_log_probs, total_log_prob


@dataclass(frozen=True)
class TokenWindow:
    """A window of a work as token ids: the prefix the model reads and the suffix z."""

    prefix: tuple[int, ...]
    suffix: tuple[int, ...]


@dataclass
class WindowScores:
    """One window's per-token log-probabilities under each scheme (by label), the
    teacher-forced argmax at each suffix position and the log p_z of each scheme."""

    token_log_probs: dict[str, list[float]]
    argmax: list[int]
    log_pz: dict[str, float] = field(default_factory=dict)


def special_prefix(tokenizer: Any) -> list[int]:
    """The ids the tokenizer puts before a text by itself (a BOS for Llama-style
    tokenizers; none for SmolLM2's): a window's context starts with them, as it would
    had the work been tokenised on its own."""
    plain = tokenizer.encode("a", add_special_tokens=False)
    full = tokenizer.encode("a", add_special_tokens=True)
    if full[len(full) - len(plain) :] != plain:
        return []
    return list(full[: len(full) - len(plain)])


class PzScorer:
    """Scores token windows; `batch_size` rows per forward pass, halved on out-of-memory."""

    def __init__(self, loaded: LoadedCausalLM, batch_size: int = 16) -> None:
        self.loaded = loaded
        self.batcher = AdaptiveBatcher(batch_size)
        self.context_start = special_prefix(loaded.tokenizer)
        self._keeps_logits = "logits_to_keep" in inspect.signature(loaded.model.forward).parameters
        self.tokens_computed = 0

    def score(
        self, windows: Sequence[TokenWindow], schemes: Sequence[DecodingScheme]
    ) -> list[WindowScores]:
        """Each window's scores, in order; one forward pass per batch of windows."""
        limit = max_positions(self.loaded.model)
        for index, window in enumerate(windows):
            if not window.prefix or not window.suffix:
                raise ValueError(f"window {index} has an empty prefix or suffix")
            length = len(self.context_start) + len(window.prefix) + len(window.suffix)
            if limit is not None and length > limit:
                raise ValueError(f"window {index} is {length} tokens, past the context {limit}")
        return self.batcher.run(list(windows), lambda chunk: self._score_batch(chunk, schemes))

    def _score_batch(
        self, chunk: Sequence[TokenWindow], schemes: Sequence[DecodingScheme]
    ) -> list[WindowScores]:
        loaded = self.loaded
        rows = [[*self.context_start, *w.prefix, *w.suffix] for w in chunk]
        input_ids, attention_mask = left_pad(rows, loaded.pad_token_id, loaded.device)
        longest = max(len(w.suffix) for w in chunk)
        # the last `longest + 1` positions hold every row's suffix predictions (rows end
        # together); the final position predicts past the window and is dropped
        options: dict[str, Any] = {"logits_to_keep": longest + 1} if self._keeps_logits else {}
        if len({len(r) for r in rows}) > 1:  # padded: mask the pads, count real positions
            options["attention_mask"] = attention_mask
            options["position_ids"] = (attention_mask.cumsum(-1) - 1).clamp(min=0)
        self.tokens_computed += sum(len(r) for r in rows)
        with torch.inference_mode():
            logits = loaded.model(input_ids=input_ids, **options).logits[:, -(longest + 1) : -1, :]
        # every row's suffix positions in one [positions, vocab] block: one softmax per
        # scheme for the whole batch
        widths = [len(w.suffix) for w in chunk]
        block = torch.cat(
            [logits[row, longest - width :] for row, width in enumerate(widths)]
        ).float()
        targets = torch.tensor(
            [t for w in chunk for t in w.suffix], dtype=torch.long, device=block.device
        )
        per_scheme = {s.label: token_log_probs(block, targets, s).cpu().tolist() for s in schemes}
        argmax = block.argmax(dim=-1).cpu().tolist()
        results = []
        start = 0
        for width in widths:
            end = start + width
            values = {label: v[start:end] for label, v in per_scheme.items()}
            results.append(
                WindowScores(
                    token_log_probs=values,
                    argmax=argmax[start:end],
                    log_pz={label: total_log_prob(v) for label, v in values.items()},
                )
            )
            start = end
        return results

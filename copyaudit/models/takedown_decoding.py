"""Two takedown decoding methods of CoTaEval (Wei et al., 2024), as logits processors
for the Hugging Face backend (boyiwei/CoTaEval: lib/decoding_intervention.py
`TopKPerturbationLogitsProcessor`; cad/generation/utils.py, greedy search with
`context_aware_decoding_alpha`).

- Top-k perturbation: Gaussian noise N(0, std) added to the k highest logits of each
  step (k = 50, transformers' default `top_k`, which CoTaEval reads). Unlike CoTaEval's
  unseeded `torch.normal`, each row draws from its own generator seeded by the run's
  seed and the row's prompt token ids, so a run is reproducible and a row's output does
  not depend on which other prompts share its batch, nor on a resume.
- R-CAD (reversed context-aware decoding): next-token logits
  (1 + alpha) * logits(prompt) - alpha * logits(prompt + " " + protected text), the
  second distribution read from the same model with the protected text in its context
  (CoTaEval builds that "null input" as `prompt + ' ' + gt` and appends each generated
  token to it). It pushes the model away from what it would say with the text in view.

A processor that needs to know the batch (its rows' prompts, the model) has a
`bind_batch(BatchRows)` method, which HFGenerator calls before decoding; one that must
see the model's raw logits (before the repetition penalty) sets `before_penalty`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from transformers import LogitsProcessor

from copyaudit.models.base import GenerationRequest
from copyaudit.models.kv_cache import cache_keyword
from copyaudit.models.padding import left_pad

if TYPE_CHECKING:
    from copyaudit.models.hf_loading import LoadedCausalLM

TOP_K = 50  # transformers' GenerationConfig.top_k default, the k CoTaEval perturbs


@dataclass(frozen=True)
class BatchRows:
    """One padded batch as HFGenerator decodes it: each row's prompt token ids
    (unpadded), its request, and the loaded model (copyaudit.models.hf_loading)."""

    prompt_ids: Sequence[Sequence[int]]
    requests: Sequence[GenerationRequest]
    loaded: LoadedCausalLM


def row_seed(seed: int, prompt_ids: Sequence[int]) -> int:
    """A 63-bit seed from the run's seed and one row's prompt token ids."""
    blob = f"{seed}:" + ",".join(str(int(i)) for i in prompt_ids)
    return int(hashlib.sha256(blob.encode()).hexdigest()[:15], 16)


class TopKPerturbation(LogitsProcessor):
    """Adds N(0, std) noise to each row's `k` highest logits at every step."""

    def __init__(self, std: float, k: int = TOP_K, seed: int = 0) -> None:
        if std < 0 or k < 1:
            raise ValueError(f"top-k perturbation needs std >= 0 and k >= 1 (std={std}, k={k})")
        self.std = float(std)
        self.k = int(k)
        self.seed = int(seed)
        self._generators: list[torch.Generator] | None = None

    def bind_batch(self, batch: BatchRows) -> None:
        self._generators = [_generator(row_seed(self.seed, ids)) for ids in batch.prompt_ids]

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> Any:
        rows, vocabulary = scores.shape
        if self._generators is None or len(self._generators) != rows:
            # not bound to a batch (a direct call): rows seeded by their position
            self._generators = [_generator(row_seed(self.seed, [row])) for row in range(rows)]
        k = min(self.k, vocabulary)
        top = torch.topk(scores, k, dim=-1).indices
        noise = torch.stack(
            [torch.normal(0.0, self.std, (k,), generator=g) for g in self._generators]
        )
        return scores.scatter_add(1, top, noise.to(device=scores.device, dtype=scores.dtype))


def _generator(seed: int) -> torch.Generator:
    generator = torch.Generator()
    generator.manual_seed(seed)
    return generator


class ReversedContextAwareDecoding(LogitsProcessor):
    """(1 + alpha) * logits - alpha * logits with the protected text in context (R-CAD).

    The second forward pass runs the same model on each row's `prompt + " " + context`
    (the request's plain prompt, as CoTaEval's null input) with its own key/value
    cache, one token per step."""

    before_penalty = True  # combines the model's raw logits, as CoTaEval does

    def __init__(self, alpha: float) -> None:
        if alpha < 0:
            raise ValueError(f"R-CAD needs alpha >= 0, got {alpha}")
        self.alpha = float(alpha)
        self._loaded: LoadedCausalLM | None = None
        self._null_ids: list[list[int]] = []
        self._mask: Any = None
        self._past: Any = None
        self._positions: Any = None

    def bind_batch(self, batch: BatchRows) -> None:
        self._loaded = batch.loaded
        tokenizer = batch.loaded.tokenizer
        self._null_ids = [
            list(tokenizer.encode(null_context(request), add_special_tokens=True))
            for request in batch.requests
        ]
        self._past = None

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> Any:
        if self._loaded is None:
            raise RuntimeError("R-CAD decodes with HFGenerator, which binds it to each batch")
        if self.alpha == 0:
            return scores
        model = self._loaded.model
        if self._past is None:  # first step: the whole null context
            ids, self._mask = left_pad(
                self._null_ids, self._loaded.pad_token_id, self._loaded.device
            )
            positions = (self._mask.cumsum(-1) - 1).clamp(min=0)
        else:  # later steps: the token just generated
            ids = input_ids[:, -1:]
            ones = torch.ones_like(ids, dtype=self._mask.dtype)
            self._mask = torch.cat([self._mask, ones], dim=-1)
            positions = self._positions[:, -1:] + 1
        cache = {cache_keyword(model): self._past}
        with torch.inference_mode():
            out = model(
                input_ids=ids,
                attention_mask=self._mask,
                position_ids=positions,
                use_cache=True,
                **cache,
            )
        self._past = getattr(out, "cache", None) or out.past_key_values
        self._positions = positions
        null_logits = out.logits[:, -1, : scores.shape[-1]].to(scores.dtype)
        return (1.0 + self.alpha) * scores - self.alpha * null_logits


def null_context(request: GenerationRequest) -> str:
    """CoTaEval's null input: the plain prompt, a space, the protected text."""
    return f"{request.prompt} {request.context}" if request.context else request.prompt


def topk_factory(std: float, k: int = TOP_K, seed: int = 0) -> Callable[[], TopKPerturbation]:
    """The `logits_processor_factory` argument for `Generator.generate`."""
    return lambda: TopKPerturbation(std, k, seed)


def rcad_factory(alpha: float) -> Callable[[], ReversedContextAwareDecoding]:
    """The `logits_processor_factory` argument for `Generator.generate`."""
    return lambda: ReversedContextAwareDecoding(alpha)


__all__ = [
    "TOP_K",
    "BatchRows",
    "ReversedContextAwareDecoding",
    "TopKPerturbation",
    "null_context",
    "rcad_factory",
    "row_seed",
    "topk_factory",
]

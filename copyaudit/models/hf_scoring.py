"""Reading next-token and per-token probabilities from a Hugging Face causal LM (DE-COP).

Both scorers run plain batched forward passes; neither ever calls `generate`.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from copyaudit.models.batching import AdaptiveBatcher
from copyaudit.models.hf_loading import (
    LoadedCausalLM,
    ModelLoadError,
    load_causal_lm,
    max_positions,
)
from copyaudit.models.padding import left_pad, right_pad
from copyaudit.models.prefix_sharing import shared_prefix_last_logits

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

# The DE-COP prompt ends with "Answer:"; the answer letter is the token that follows it.
ANSWER_CONTEXT = "Answer:"
# Stands for the user turn while the chat template is rendered (private-use characters).
_USER_TURN = "\ue000user turn\ue001"


def chat_frame(tokenizer: PreTrainedTokenizerBase, system: str | None) -> tuple[str, str]:
    """(before, after): the model's chat template around one user turn, with the system
    prompt and the assistant turn opened (add_generation_prompt), so that the prompt as
    sent is before + user turn + after and the answer is read where the assistant starts.
    Raises ModelLoadError without a template or when it rewrites the user turn."""
    if not getattr(tokenizer, "chat_template", None):
        raise ModelLoadError("the model has no chat template; use --plain")
    messages = [{"role": "user", "content": _USER_TURN}]
    if system:
        messages.insert(0, {"role": "system", "content": system})
    text = str(tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True))
    before, found, after = text.partition(_USER_TURN)
    if not found or _USER_TURN in after:
        raise ModelLoadError("the model's chat template rewrites the user turn; use --plain")
    return before, after


class ChoiceTokenError(ValueError):
    """A choice is not exactly one token for this tokenizer."""


class _ScorerBase:
    def __init__(
        self,
        model: str | LoadedCausalLM,
        device: str = "auto",
        dtype: str = "auto",
        batch_size: int = 8,
        allow_download: bool = False,
        revision: str | None = None,
        hub_cache_dir: str | None = None,
    ) -> None:
        self.loaded = (
            model
            if isinstance(model, LoadedCausalLM)
            else load_causal_lm(model, device, dtype, allow_download, revision, hub_cache_dir)
        )
        self.batcher = AdaptiveBatcher(batch_size)
        self._accepts_logits_to_keep = (
            "logits_to_keep" in inspect.signature(self.loaded.model.forward).parameters
        )

    def provenance(self) -> dict[str, Any]:
        info = self.loaded.provenance()
        info["backend"] = "hf"
        return info


class HFChoiceScorer(_ScorerBase):
    """Implements `ChoiceScorer`: the logits at the last prompt position, restricted to
    the choice tokens, softmaxed. Plain by default; after `use_chat` each prompt is the
    user turn of the model's chat template.

    Two ways to run the same computation: one forward pass per batch of prompts
    (padded), or prefix sharing (`prefix_sharing.py`: the prompts' common token
    prefixes computed once, one prompt's path at a time). `share_prefixes` None picks
    sharing on CPU, where batching gains nothing and sharing skips ~1/3 of the tokens
    of DE-COP's 24 orders, and batches on an accelerator."""

    frame: tuple[str, str] | None = None  # chat: the template before and after the user turn
    share_prefixes: bool | None = None
    tokens_computed = 0  # prompt tokens run through the model so far

    def use_chat(self, system: str | None) -> None:
        """Send every prompt as the user turn of the model's chat template after `system`;
        the answer is read at the position after the assistant turn opens."""
        self.frame = chat_frame(self.loaded.tokenizer, system)

    def prompt_as_sent(self, prompt: str) -> str:
        return prompt if self.frame is None else self.frame[0] + prompt + self.frame[1]

    def choice_token_ids(self, choices: Sequence[str]) -> list[int]:
        """The token id of each choice as it follows "Answer:" (" A" for choice "A": a
        choice without leading whitespace gets one space) or, in chat, as it opens the
        assistant turn (the choice as given). Raises ChoiceTokenError when a choice is
        not exactly one token or two choices share a token."""
        tokenizer = self.loaded.tokenizer
        context = ANSWER_CONTEXT if self.frame is None else self.frame[1]
        context_ids = tokenizer.encode(context, add_special_tokens=False)
        token_ids: list[int] = []
        for choice in choices:
            spaced = choice if choice[:1].isspace() or self.frame else " " + choice
            full_ids = tokenizer.encode(context + spaced, add_special_tokens=False)
            extra = full_ids[len(context_ids) :]
            if full_ids[: len(context_ids)] != context_ids or len(extra) != 1:
                alone = tokenizer.encode(spaced, add_special_tokens=False)
                raise ChoiceTokenError(
                    f"choice {choice!r} is not a single token for this tokenizer "
                    f"({spaced!r} encodes to {tokenizer.convert_ids_to_tokens(alone)}); "
                    "DE-COP needs single-token answer letters"
                )
            token_ids.append(int(extra[0]))
        if len(set(token_ids)) != len(token_ids):
            raise ChoiceTokenError(f"choices {list(choices)!r} share a token: {token_ids}")
        return token_ids

    def choice_probabilities(self, prompts: Sequence[str], choices: Sequence[str]) -> np.ndarray:
        token_ids = self.choice_token_ids(choices)
        encoded = [self._encode_prompt(index, prompt) for index, prompt in enumerate(prompts)]
        if not encoded:
            return np.zeros((0, len(choices)), dtype=np.float64)
        if self._sharing():
            rows = self._score_shared(encoded, token_ids)
        else:
            rows = self.batcher.run(encoded, lambda chunk: self._score_batch(chunk, token_ids))
        return np.asarray(rows, dtype=np.float64)

    def _sharing(self) -> bool:
        if self.share_prefixes is None:
            # a sliding-window cache cannot be cut back once past its window
            windowed = getattr(self.loaded.model.config, "sliding_window", None)
            return str(self.loaded.device).startswith("cpu") and not windowed
        return self.share_prefixes

    def _score_shared(self, encoded: Sequence[list[int]], token_ids: list[int]) -> list[Any]:
        def read(logits: torch.Tensor) -> np.ndarray:
            return torch.softmax(logits[token_ids].float(), dim=-1).cpu().numpy()

        options = {"logits_to_keep": 1} if self._accepts_logits_to_keep else {}
        rows, computed = shared_prefix_last_logits(
            self.loaded.model, encoded, self.loaded.device, read, options
        )
        self.tokens_computed += computed
        return rows

    def _encode_prompt(self, index: int, prompt: str) -> list[int]:
        # a chat template writes its own special tokens (BOS included)
        ids = list(
            self.loaded.tokenizer.encode(
                self.prompt_as_sent(prompt), add_special_tokens=self.frame is None
            )
        )
        context = max_positions(self.loaded.model)
        if not ids:
            raise ValueError(f"prompt {index} is empty")
        if context is not None and len(ids) > context:
            raise ValueError(
                f"prompt {index} is {len(ids)} tokens, longer than the model's context of {context}"
            )
        return ids

    def _score_batch(self, chunk: Sequence[list[int]], token_ids: list[int]) -> list[np.ndarray]:
        loaded = self.loaded
        input_ids, attention_mask = left_pad(chunk, loaded.pad_token_id, loaded.device)
        self.tokens_computed += sum(len(ids) for ids in chunk)
        # Positions count real tokens only, so a left-padded row sees the same positions
        # as it would alone.
        position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)
        options: dict[str, Any] = {}
        if self._accepts_logits_to_keep:
            options["logits_to_keep"] = 1
        with torch.inference_mode():
            logits = loaded.model(
                input_ids=input_ids,
                attention_mask=attention_mask,
                position_ids=position_ids,
                **options,
            ).logits[:, -1, :]
        selected = logits[:, token_ids].float()
        probabilities = torch.softmax(selected, dim=-1).cpu().numpy()
        return list(probabilities)


class HFTokenScorer(_ScorerBase):
    """Per-token log-probabilities of texts (DE-COP baselines: perplexity, Min-K%)."""

    def token_logprobs(self, texts: Sequence[str]) -> list[np.ndarray]:
        """For each text, log p(token_i | tokens_<i) for i = 1..n-1 of its token ids
        (tokenised as the tokenizer does by default, so the first text token is scored
        too when the tokenizer adds a BOS). Texts longer than the model's context are
        cut to it. A text of fewer than two tokens gives an empty array."""
        context = max_positions(self.loaded.model)
        encoded = []
        for text in texts:
            ids = list(self.loaded.tokenizer.encode(text, add_special_tokens=True))
            encoded.append(ids[:context] if context is not None else ids)
        return self.batcher.run(encoded, self._score_batch)

    def _score_batch(self, chunk: Sequence[list[int]]) -> list[np.ndarray]:
        loaded = self.loaded
        # Right padding: every row's positions start at 0 without position_ids.
        input_ids, attention_mask = right_pad(chunk, loaded.pad_token_id, loaded.device)
        with torch.inference_mode():
            logits = loaded.model(input_ids=input_ids, attention_mask=attention_mask).logits
        results = []
        for row, ids in enumerate(chunk):
            if len(ids) < 2:
                results.append(np.zeros(0, dtype=np.float64))
                continue
            row_logits = logits[row, : len(ids) - 1].float()  # one row at a time: less memory
            log_probs = torch.log_softmax(row_logits, dim=-1)
            targets = input_ids[row, 1 : len(ids)].unsqueeze(-1)
            picked = torch.gather(log_probs, 1, targets).squeeze(-1)
            results.append(picked.cpu().numpy().astype(np.float64))
        return results

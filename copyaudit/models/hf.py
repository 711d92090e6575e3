"""Greedy batched generation with a Hugging Face causal LM (local path or hub id).

Decoding follows CopyBench: greedy, repetition penalty 1.1, stop at three newlines,
per-request max_new_tokens. Prompts are left-padded by hand; the repetition penalty
ignores padding, so a request's output does not depend on which other requests share
its batch.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import torch
from transformers import (
    LogitsProcessor,
    LogitsProcessorList,
    StoppingCriteria,
    StoppingCriteriaList,
)

from copyaudit.models.base import DecodingControl, GenerationRequest, GenerationResult
from copyaudit.models.batching import (
    AdaptiveBatcher,
    BatchTooLargeError,
    free_accelerator_memory,
    is_out_of_memory,
)
from copyaudit.models.hf_loading import (
    LoadedCausalLM,
    ModelLoadError,
    load_causal_lm,
    max_positions,
)
from copyaudit.models.hf_scoring import HFChoiceScorer, HFTokenScorer
from copyaudit.models.padding import left_pad
from copyaudit.models.stopping import DEFAULT_STOP, truncate_at_stop
from copyaudit.models.takedown_decoding import BatchRows

if TYPE_CHECKING:
    from transformers import GenerationMixin, PreTrainedTokenizerBase

__all__ = ["DEFAULT_STOP", "HFChoiceScorer", "HFGenerator", "HFTokenScorer"]

SECONDS_NOTE = "seconds per request = wall time of its batch / batch size"


@dataclass(frozen=True)
class _Prepared:
    index: int  # position in the caller's request list
    token_ids: list[int]
    max_new_tokens: int
    request: GenerationRequest


class HFGenerator:
    """Implements `Generator` for any Hugging Face causal LM."""

    def __init__(
        self,
        model: str | LoadedCausalLM,
        device: str = "auto",
        dtype: str = "auto",
        batch_size: int = 8,
        repetition_penalty: float = 1.1,
        stop: str | None = DEFAULT_STOP,
        allow_download: bool = False,
        revision: str | None = None,
        provenance_extra: dict[str, Any] | None = None,
        hub_cache_dir: str | None = None,
    ) -> None:
        self.loaded = (
            model
            if isinstance(model, LoadedCausalLM)
            else load_causal_lm(model, device, dtype, allow_download, revision, hub_cache_dir)
        )
        self.repetition_penalty = float(repetition_penalty)
        self.stop = stop or None
        self.initial_batch_size = batch_size
        self.batcher = AdaptiveBatcher(batch_size)
        self.provenance_extra = dict(provenance_extra or {})
        self._eos_ids = _eos_token_ids(self.loaded)

    # -- Generator protocol -------------------------------------------------------------

    def generate(
        self,
        requests: Sequence[GenerationRequest],
        logits_processor_factory: Callable[[], Any] | None = None,
        control: DecodingControl | None = None,
    ) -> list[GenerationResult]:
        results: list[GenerationResult | None] = [None] * len(requests)
        context = max_positions(self.loaded.model)
        groups: dict[int, list[_Prepared]] = {}
        for index, request in enumerate(requests):
            token_ids = self.prompt_token_ids(request)
            needed = len(token_ids) + request.max_new_tokens
            if not token_ids:
                results[index] = GenerationResult("", 0, 0.0, error="empty prompt")
                continue
            if context is not None and needed > context:
                results[index] = GenerationResult(
                    text="",
                    tokens=0,
                    seconds=0.0,
                    error=f"prompt of {len(token_ids)} tokens + {request.max_new_tokens} new "
                    f"tokens exceeds the model's context of {context} tokens",
                )
                continue
            groups.setdefault(request.max_new_tokens, []).append(
                _Prepared(index, token_ids, request.max_new_tokens, request)
            )
        for max_new_tokens, items in groups.items():
            items.sort(key=lambda item: len(item.token_ids), reverse=True)  # less padding

            def run_batch(
                chunk: Sequence[_Prepared], n: int = max_new_tokens
            ) -> list[GenerationResult]:
                return self._generate_batch(chunk, n, logits_processor_factory, control)

            try:
                batch_results = self.batcher.run(items, run_batch)
            except BatchTooLargeError:
                batch_results = self._generate_one_by_one(
                    items, max_new_tokens, logits_processor_factory, control
                )
            for item, result in zip(items, batch_results, strict=True):
                results[item.index] = result
        missing = [index for index, result in enumerate(results) if result is None]
        if missing:  # cannot happen unless a batch lost results; never misalign silently
            raise RuntimeError(f"no result for requests {missing}")
        return [result for result in results if result is not None]

    def _generate_one_by_one(
        self,
        items: Sequence[_Prepared],
        max_new_tokens: int,
        logits_processor_factory: Callable[[], Any] | None,
        control: DecodingControl | None,
    ) -> list[GenerationResult]:
        """After out-of-memory at batch size one: each request alone, so that only the
        ones that do not fit fail (as error results)."""
        results = []
        for item in items:
            try:
                results.extend(
                    self._generate_batch([item], max_new_tokens, logits_processor_factory, control)
                )
            except Exception as error:
                if not is_out_of_memory(error):
                    raise
                free_accelerator_memory()
                results.append(
                    GenerationResult(
                        "",
                        0,
                        0.0,
                        error=f"out of memory even alone ({len(item.token_ids)} "
                        f"prompt tokens + {max_new_tokens} new tokens)",
                    )
                )
        return results

    def provenance(self) -> dict[str, Any]:
        import transformers  # deferred: loads transformers

        info = self.loaded.provenance()
        info.update(
            {
                "backend": "hf",
                "decoding": {
                    "strategy": "greedy",
                    "repetition_penalty": self.repetition_penalty,
                    "repetition_penalty_scope": "prompt and output, padding excluded",
                    "stop": self.stop,
                    "batch_size": self.initial_batch_size,
                    "batch_size_now": self.batcher.batch_size,
                },
                "seconds": SECONDS_NOTE,
                "tokens": "generated tokens up to the stop string, EOS excluded",
                "transformers_version": transformers.__version__,
                "torch_version": torch.__version__,
            }
        )
        info.update(self.provenance_extra)
        return info

    # -- helpers --------------------------------------------------------------------------

    def prompt_token_ids(self, request: GenerationRequest) -> list[int]:
        """Token ids of the formatted prompt.

        Chat requests go through the tokenizer's chat template (the system prompt as a
        system message). Plain requests are the prompt text, with a system prompt, if
        any, prepended as a paragraph (a base model has nowhere else to put it)."""
        tokenizer = self.loaded.tokenizer
        if request.chat:
            if not getattr(tokenizer, "chat_template", None):
                raise ModelLoadError(
                    f"model {self.loaded.source!r} has no chat template; use plain prompts"
                )
            messages = [{"role": "user", "content": request.prompt}]
            if request.system:
                messages.insert(0, {"role": "system", "content": request.system})
            text = tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            )
            return list(tokenizer.encode(text, add_special_tokens=False))
        text = f"{request.system}\n\n{request.prompt}" if request.system else request.prompt
        return list(tokenizer.encode(text, add_special_tokens=True))

    def _generate_batch(
        self,
        items: Sequence[_Prepared],
        max_new_tokens: int,
        logits_processor_factory: Callable[[], Any] | None,
        control: DecodingControl | None = None,
    ) -> list[GenerationResult]:
        """One padded batch. With a `control`: a cancel before or during decoding raises
        GenerationCancelled (the stopping criterion ends decoding at the next step)."""
        if control is not None:
            control.check()
        loaded = self.loaded
        input_ids, attention_mask = left_pad(
            [item.token_ids for item in items], loaded.pad_token_id, loaded.device
        )
        prompt_length = input_ids.shape[1]
        processors: list[Any] = []
        if self.repetition_penalty != 1.0:
            processors.append(
                PaddingAwareRepetitionPenalty(self.repetition_penalty, attention_mask)
            )
        if logits_processor_factory is not None:
            method = logits_processor_factory()
            bind = getattr(method, "bind_batch", None)
            if bind is not None:  # a decoding method that reads the batch's prompts
                bind(BatchRows([i.token_ids for i in items], [i.request for i in items], loaded))
            # a method on the raw logits goes before the repetition penalty
            processors.insert(
                0 if getattr(method, "before_penalty", False) else len(processors), method
            )
        stopper = StopOnText(loaded.tokenizer, self.stop, prompt_length) if self.stop else None
        criteria: list[StoppingCriteria] = [stopper] if stopper else []
        if control is not None:
            criteria.append(StopOnCancel(control))

        started = time.perf_counter()
        with torch.inference_mode():
            output = cast("GenerationMixin", loaded.model).generate(  # a causal LM generates
                input_ids=input_ids,
                attention_mask=attention_mask,
                max_new_tokens=max_new_tokens,
                do_sample=False,
                num_beams=1,
                pad_token_id=loaded.pad_token_id,
                logits_processor=LogitsProcessorList(processors),
                stopping_criteria=StoppingCriteriaList(criteria),
            )
        if control is not None:
            control.check()  # stopped by the cancel: the outputs are partial
        seconds = (time.perf_counter() - started) / len(items)

        results = []
        for row in range(len(items)):
            generated = output[row, prompt_length:].tolist()
            if stopper is not None and row in stopper.stopped_at:
                generated = generated[: stopper.stopped_at[row]]
            generated = _cut_at_eos(generated, self._eos_ids)
            text = cast(str, loaded.tokenizer.decode(generated, skip_special_tokens=True))
            results.append(
                GenerationResult(
                    text=truncate_at_stop(text, self.stop), tokens=len(generated), seconds=seconds
                )
            )
        return results


def _eos_token_ids(loaded: LoadedCausalLM) -> set[int]:
    ids: set[int] = set()
    config = getattr(loaded.model, "generation_config", None)
    value = getattr(config, "eos_token_id", None) if config is not None else None
    if isinstance(value, int):
        ids.add(value)
    elif isinstance(value, (list, tuple)):
        ids.update(int(v) for v in value)
    if loaded.tokenizer.eos_token_id is not None:
        ids.add(int(loaded.tokenizer.eos_token_id))
    return ids


def _cut_at_eos(token_ids: list[int], eos_ids: set[int]) -> list[int]:
    for position, token_id in enumerate(token_ids):
        if token_id in eos_ids:
            return token_ids[:position]
    return token_ids


class StopOnText(StoppingCriteria):
    """Stops each sequence once its generated text contains `stop`; records how many
    tokens it had generated then (`stopped_at[row]`). Only the generated part is
    decoded (the last `window` tokens), so a stop string inside the prompt is ignored."""

    def __init__(
        self, tokenizer: PreTrainedTokenizerBase, stop: str, prompt_length: int, window: int = 16
    ) -> None:
        self.tokenizer = tokenizer
        self.stop = stop
        self.prompt_length = prompt_length
        self.window = max(window, len(stop) + 1)
        self.stopped_at: dict[int, int] = {}

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor, **kwargs: Any) -> Any:
        generated = input_ids[:, self.prompt_length :]
        count = generated.shape[1]
        tails = self.tokenizer.batch_decode(
            generated[:, -self.window :].tolist(), skip_special_tokens=True
        )
        done = []
        for row, tail in enumerate(tails):
            if row not in self.stopped_at and self.stop in tail:
                self.stopped_at[row] = count
            done.append(row in self.stopped_at)
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)


class StopOnCancel(StoppingCriteria):
    """Reports each decoding step to a DecodingControl and stops every sequence once
    its cancel flag is set (called after each forward pass)."""

    def __init__(self, control: DecodingControl) -> None:
        self.control = control

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor, **kwargs: Any) -> Any:
        stop = self.control.step(int(input_ids.shape[0]))
        return torch.full((input_ids.shape[0],), stop, dtype=torch.bool, device=input_ids.device)


class PaddingAwareRepetitionPenalty(LogitsProcessor):
    """The CTRL repetition penalty (as transformers applies it: divide positive logits,
    multiply negative ones, for every token already in the sequence), except that left
    padding does not count as "already in the sequence"."""

    def __init__(self, penalty: float, prompt_attention_mask: torch.Tensor) -> None:
        if penalty <= 0:
            raise ValueError(f"repetition penalty must be > 0, got {penalty}")
        self.penalty = penalty
        self.padding = prompt_attention_mask == 0  # (batch, prompt_length)

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> Any:
        padding = torch.zeros_like(input_ids, dtype=torch.bool)
        padding[:, : self.padding.shape[1]] = self.padding
        # Padding positions point at the row's last token, which is penalised anyway.
        ids = torch.where(padding, input_ids[:, -1:].expand_as(input_ids), input_ids)
        seen = torch.gather(scores, 1, ids)
        seen = torch.where(seen < 0, seen * self.penalty, seen / self.penalty)
        return scores.scatter(1, ids, seen)

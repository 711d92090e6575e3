"""Greedy decoding of an encoder-decoder model that stops as soon as every row is settled.

`generate(do_sample=False, num_beams=1)` runs every row of a batch until all rows
have emitted EOS or `max_new_tokens` are reached. A judge that only compares the
decoded text with one answer knows a row's verdict much earlier: when the row emits
EOS, or when its text so far can no longer become the answer. This loop makes the
same greedy choices (argmax of the last position's logits, decoder-start token
first, EOS ends a row) with one encoder pass and a key/value cache, and stops when
no row is open. On CPU the encoder attends each padded row on its own tokens
(`unpadded_encoder`), so a batch costs no more per row than one pair alone.
Used only when the model's generation config changes no logits (`plain_greedy`),
so that argmax of the raw logits is what generate would pick.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from copyaudit.models.kv_cache import cache_keyword
from copyaudit.models.unpadded_encoder import unpadded_encoder

# GenerationConfig fields whose non-default values make generate() alter logits or
# stopping; with any of them set, the caller keeps generate().
_LOGIT_CHANGING = {
    "repetition_penalty": 1.0,
    "encoder_repetition_penalty": 1.0,
    "no_repeat_ngram_size": 0,
    "encoder_no_repeat_ngram_size": 0,
    "min_length": 0,
    "min_new_tokens": None,
    "bad_words_ids": None,
    "forced_bos_token_id": None,
    "forced_eos_token_id": None,
    "suppress_tokens": None,
    "begin_suppress_tokens": None,
    "sequence_bias": None,
    "exponential_decay_length_penalty": None,
    "renormalize_logits": False,
    "stop_strings": None,
}


def plain_greedy(model: Any) -> bool:
    """True when greedy generate() on this model is argmax of the raw logits, with a
    single EOS id (nothing in its generation config changes logits or stopping)."""
    config = getattr(model, "generation_config", None)
    if config is None or not model.config.is_encoder_decoder:
        return False
    for field, default in _LOGIT_CHANGING.items():
        if getattr(config, field, default) not in (default, None, 0, 1.0, False):
            return False
    eos = config.eos_token_id
    return isinstance(eos, int) or (isinstance(eos, list) and len(eos) == 1)


def greedy_until_settled(
    model: Any,
    input_ids: Any,
    attention_mask: Any,
    max_new_tokens: int,
    settled: Callable[[list[int]], bool],
) -> list[list[int]]:
    """Each row's generated token ids (EOS not included), decoded greedily until it
    emits EOS, reaches `max_new_tokens`, or `settled(its tokens so far)` is True."""
    import torch  # deferred: loads torch
    from transformers import DynamicCache, EncoderDecoderCache  # deferred

    config = model.generation_config
    eos = config.eos_token_id if isinstance(config.eos_token_id, int) else config.eos_token_id[0]
    start = config.decoder_start_token_id
    if start is None:
        start = model.config.decoder_start_token_id
    rows = input_ids.shape[0]
    tokens: list[list[int]] = [[] for _ in range(rows)]
    open_rows = set(range(rows))
    with torch.inference_mode():
        with unpadded_encoder(model, attention_mask) as encoder_mask:
            encoder_outputs = model.get_encoder()(input_ids=input_ids, attention_mask=encoder_mask)
        cache = EncoderDecoderCache(
            DynamicCache(config=model.config), DynamicCache(config=model.config)
        )
        keyword = cache_keyword(model)
        step_ids = torch.full((rows, 1), start, dtype=torch.long, device=input_ids.device)
        for _ in range(max_new_tokens):
            output = model(
                encoder_outputs=encoder_outputs,
                attention_mask=attention_mask,
                decoder_input_ids=step_ids,
                use_cache=True,
                **{keyword: cache},
            )
            chosen = output.logits[:, -1, :].argmax(dim=-1)
            for row, token in enumerate(chosen.tolist()):
                if row not in open_rows:
                    continue
                if token == eos:
                    open_rows.discard(row)
                    continue
                tokens[row].append(token)
                if settled(tokens[row]):
                    open_rows.discard(row)
            if not open_rows:
                break
            # rows already settled keep decoding their own choices; nobody reads them
            step_ids = chosen.unsqueeze(-1)
    return tokens

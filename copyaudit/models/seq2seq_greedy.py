"""Greedy decoding of an encoder-decoder model that stops as soon as every row is settled.

`generate(do_sample=False, num_beams=1)` runs every row of a batch until all rows
have emitted EOS or `max_new_tokens` are reached. A judge that only compares the
decoded text with one answer knows a row's verdict much earlier: when the row emits
EOS, or when its text so far can no longer become the answer. This loop makes the
same greedy choices (argmax of the last position's logits, decoder-start token
first, EOS ends a row) with one encoder pass and a key/value cache, and stops when
no row is open. Given the ids of the answer the caller looks for, it reads them in
one teacher-forced decoder pass instead of one call per token, and decodes step by
step only the rows that pass leaves open (proof in `greedy_until_settled`). On CPU
the encoder attends each padded row on its own tokens (`unpadded_encoder`), so a
batch costs no more per row than one pair alone.
Used only when the model's generation config changes no logits (`plain_greedy`),
so that argmax of the raw logits is what generate would pick.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from copyaudit.models.kv_cache import cache_keyword
from copyaudit.models.unpadded_encoder import unpadded_encoder

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedModel

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


def plain_greedy(model: PreTrainedModel) -> bool:
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
    model: PreTrainedModel,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    max_new_tokens: int,
    settled: Callable[[list[int]], bool],
    expected: Sequence[int] = (),
    alternatives: Sequence[Sequence[int]] = (),
) -> list[list[int]]:
    """Each row's generated token ids (EOS not included), decoded greedily until it
    emits EOS, reaches `max_new_tokens`, or `settled(its tokens so far)` is True.

    `alternatives`: other answers read the same way, each in one more forced pass over
    the rows the passes before left open (the proof below holds for any forced answer),
    so a judge with two answers ("attributable", "not attributable") settles both kinds
    of row without stepping.

    With `expected` (the ids of the answer a caller looks for), one teacher-forced
    decoder pass over [start, *expected] first reads, at each position i, the greedy
    choice g_i after the prefix expected[:i]. Greedy decoding is deterministic, so by
    induction on i: while g_j == expected[j] for every j < i, the row's own greedy
    prefix is expected[:i] and its next choice is g_i. A row's tokens are therefore
    g_0, g_1, ... up to and including the first g_m that differs from expected[m]
    (or g_k after the whole answer), and EOS, `settled` and `max_new_tokens` are
    applied to them in the same order as the step-by-step loop. A row still open
    after those tokens (it left the answer on a token that could still lead to it,
    or went on after it) is decoded again by the step-by-step loop: the result is
    the loop's in every case, at one decoder call when every row settles. (Exactly
    so in exact arithmetic; in floating point the forced pass's logits differ from
    the cached steps' by rounding, as a row's in a batch do from the row alone, and
    only a near tie could tell them apart: tests compare the tokens.)
    """
    import torch  # deferred: loads torch

    with torch.inference_mode():
        with unpadded_encoder(model, attention_mask) as encoder_mask:
            hidden = model.get_encoder()(
                input_ids=input_ids, attention_mask=encoder_mask
            ).last_hidden_state
        if not expected:
            return _step_by_step(model, hidden, attention_mask, max_new_tokens, settled)
        tokens, open_rows = _forced_pass(
            model, hidden, attention_mask, max_new_tokens, settled, list(expected)
        )
        for answer in alternatives:
            if not open_rows or not answer:
                continue
            index = torch.tensor(open_rows, device=hidden.device)
            again, still_open = _forced_pass(
                model, hidden[index], attention_mask[index], max_new_tokens, settled, list(answer)
            )
            for row, ids in zip(open_rows, again, strict=True):
                tokens[row] = ids
            open_rows = [open_rows[k] for k in still_open]
        if open_rows:
            index = torch.tensor(open_rows, device=hidden.device)
            again = _step_by_step(
                model, hidden[index], attention_mask[index], max_new_tokens, settled
            )
            for row, ids in zip(open_rows, again, strict=True):
                tokens[row] = ids
    return tokens


def _ids(model: PreTrainedModel) -> tuple[int, int]:
    """The model's EOS id and decoder start id."""
    config = model.generation_config
    eos = config.eos_token_id if isinstance(config.eos_token_id, int) else config.eos_token_id[0]
    start = config.decoder_start_token_id
    if start is None:
        start = model.config.decoder_start_token_id
    return eos, start


def _forced_pass(
    model: PreTrainedModel,
    hidden: torch.Tensor,
    attention_mask: torch.Tensor,
    max_new_tokens: int,
    settled: Callable[[list[int]], bool],
    expected: list[int],
) -> tuple[list[list[int]], list[int]]:
    """Each row's tokens read from one decoder pass over [start, *expected], and the
    rows whose decoding is not finished by them (see `greedy_until_settled`)."""
    import torch  # deferred: loads torch
    from transformers.modeling_outputs import BaseModelOutput  # deferred

    eos, start = _ids(model)
    rows = hidden.shape[0]
    forced = torch.tensor([[start, *expected]], dtype=torch.long, device=hidden.device)
    output = model(
        encoder_outputs=BaseModelOutput(last_hidden_state=hidden),
        attention_mask=attention_mask,
        decoder_input_ids=forced.expand(rows, -1),
        use_cache=False,
    )
    chosen = output.logits.argmax(dim=-1).tolist()
    tokens: list[list[int]] = []
    open_rows: list[int] = []
    for row in range(rows):
        ids: list[int] = []
        finished = False
        for position, token in enumerate(chosen[row][:max_new_tokens]):
            if token == eos:
                finished = True
                break
            ids.append(token)
            if settled(ids):
                finished = True
                break
            if position < len(expected) and token != expected[position]:
                break  # left the answer: later positions were forced, not chosen
        if not finished and len(ids) < max_new_tokens:
            open_rows.append(row)
        tokens.append(ids)
    return tokens, open_rows


def _step_by_step(
    model: PreTrainedModel,
    hidden: torch.Tensor,
    attention_mask: torch.Tensor,
    max_new_tokens: int,
    settled: Callable[[list[int]], bool],
) -> list[list[int]]:
    """Greedy decoding one token per decoder call, with a key/value cache."""
    import torch  # deferred: loads torch
    from transformers import DynamicCache, EncoderDecoderCache  # deferred
    from transformers.modeling_outputs import BaseModelOutput  # deferred

    eos, start = _ids(model)
    rows = hidden.shape[0]
    encoder_outputs = BaseModelOutput(last_hidden_state=hidden)
    tokens: list[list[int]] = [[] for _ in range(rows)]
    open_rows = set(range(rows))
    cache = EncoderDecoderCache(
        DynamicCache(config=model.config), DynamicCache(config=model.config)
    )
    keyword = cache_keyword(model)
    step_ids = torch.full((rows, 1), start, dtype=torch.long, device=hidden.device)
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

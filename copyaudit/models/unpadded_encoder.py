"""Encoder self-attention of a right-padded batch, row by row on each row's real tokens.

On CPU, transformers' sdpa path for a padded batch with a relative position bias
(T5) builds a float mask of batch x heads x length x length per layer (the bias
with -inf at the padding), which made a padded batch of 15 prompts cost about
twice as much as the same prompts encoded one at a time. Here the encoder is
called without a mask and its attention runs `scaled_dot_product_attention` once
per row on that row's unpadded queries, keys, values and bias: exactly the
numbers the row gets when encoded alone (the projections, norms and feed-forward
layers stay batched). Padding positions get zeros; the decoder masks them out.
Used only on CPU, for a non-causal sdpa encoder at inference, on right padding.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedModel

NAME = "copyaudit_unpadded_sdpa"
_ROW_LENGTHS: ContextVar[list[int] | None] = ContextVar("copyaudit_row_lengths", default=None)


def _attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor,
    dropout: float = 0.0,
    scaling: float | None = None,
    position_bias: torch.Tensor | None = None,
    **kwargs: Any,
) -> tuple[Any, None]:
    """sdpa per row on its first `length` positions (the lengths set by
    `unpadded_encoder`); transformers' sdpa when none are set."""
    import torch  # deferred: loads torch
    from transformers.integrations.sdpa_attention import sdpa_attention_forward  # deferred

    lengths = _ROW_LENGTHS.get()
    if lengths is None or attention_mask is not None or getattr(module, "is_causal", False):
        return sdpa_attention_forward(
            module, query, key, value, attention_mask,
            dropout=dropout, scaling=scaling, position_bias=position_bias, **kwargs,
        )  # fmt: skip
    rows, heads, positions, width = query.shape
    output = query.new_zeros(rows, positions, heads, width)
    for row, length in enumerate(lengths):
        bias = None
        if position_bias is not None:
            bias = position_bias[row : row + 1] if position_bias.shape[0] > 1 else position_bias
            bias = bias[..., :length, :length]
        attended = torch.nn.functional.scaled_dot_product_attention(
            query[row : row + 1, :, :length],
            key[row : row + 1, :, :length],
            value[row : row + 1, :, :length],
            attn_mask=bias,
            scale=scaling,
        )
        output[row, :length] = attended[0].transpose(0, 1)
    return output, None


def _eligible(model: PreTrainedModel, attention_mask: torch.Tensor, lengths: torch.Tensor) -> bool:
    import torch  # deferred: loads torch

    encoder = model.get_encoder()
    if attention_mask.device.type != "cpu" or encoder.training:
        return False
    if getattr(encoder.config, "_attn_implementation", None) != "sdpa":
        return False
    positions = torch.arange(attention_mask.shape[1], device=attention_mask.device)
    right_padded = (positions[None, :] < lengths[:, None]).to(attention_mask.dtype)
    return bool(torch.equal(attention_mask, right_padded))


@contextmanager
def unpadded_encoder(model: PreTrainedModel, attention_mask: torch.Tensor) -> Iterator[Any]:
    """Within the block, the encoder of `model` attends row by row; yields the
    mask to pass to the encoder: None when unpadded attention applies (or no row
    is padded), else `attention_mask` unchanged (the ordinary path)."""
    from transformers import AttentionInterface  # deferred: loads transformers

    lengths = attention_mask.sum(dim=1)
    if bool((lengths == attention_mask.shape[1]).all()):
        yield None
        return
    if not _eligible(model, attention_mask, lengths):
        yield attention_mask
        return
    AttentionInterface.register(NAME, _attention)
    config = model.get_encoder().config
    previous = config._attn_implementation
    config._attn_implementation = NAME
    token = _ROW_LENGTHS.set([int(n) for n in lengths.tolist()])
    try:
        yield None
    finally:
        _ROW_LENGTHS.reset(token)
        config._attn_implementation = previous

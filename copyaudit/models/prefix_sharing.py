"""Next-token logits of many prompts that share prefixes, each prefix computed once.

DE-COP asks the same question in 24 option orders: every prompt starts with the same
header, 6 share their first option too, 2 their first two. Walking the token-id trie
of the prompts depth first, one key/value cache holds the path from the root: each
trie edge is one forward pass over its tokens only, on top of the cached path, and the
cache is cut back to the branch point before the next sibling. The prompts are
compared as token ids, so a shared prefix is exactly what each prompt would have
computed alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import torch

from copyaudit.models.kv_cache import cache_keyword

if TYPE_CHECKING:
    from transformers import PreTrainedModel


def shared_prefix_last_logits(
    model: PreTrainedModel,
    sequences: Sequence[Sequence[int]],
    device: str,
    read: Callable[[Any], Any],
    options: dict[str, Any] | None = None,
) -> tuple[list[Any], int]:
    """(read(last-position logits) of each sequence, in order; tokens computed).

    `read` maps a 1-D logits tensor to the result kept for a sequence; `options` go to
    every forward call (e.g. logits_to_keep=1). Every sequence must hold at least one
    token. Batch of one throughout: no padding.
    """
    from transformers import DynamicCache  # deferred: loads transformers

    results: list[Any] = [None] * len(sequences)
    cache = DynamicCache(config=model.config)
    cache_argument = cache_keyword(model)
    computed = 0

    def extend(ids: Sequence[int], start: int) -> Any:
        nonlocal computed
        input_ids = torch.tensor([list(ids)], dtype=torch.long, device=device)
        mask = torch.ones((1, start + len(ids)), dtype=torch.long, device=device)
        output = model(
            input_ids=input_ids,
            attention_mask=mask,
            **{cache_argument: cache},
            use_cache=True,
            **(options or {}),
        )
        computed += len(ids)
        return output.logits[0, -1]

    def visit(members: list[int], start: int, last: Any) -> None:
        first = sequences[members[0]]
        end = min(len(sequences[m]) for m in members)
        length = start
        while length < end and all(sequences[m][length] == first[length] for m in members):
            length += 1
        if length > start:
            last = extend(first[start:length], start)
        groups: dict[int, list[int]] = {}
        for m in members:
            if len(sequences[m]) == length:
                results[m] = read(last)
            else:
                groups.setdefault(sequences[m][length], []).append(m)
        for group in groups.values():
            visit(group, length, last)
            cache.crop(length - cache.get_seq_length())  # back to the branch point

    if any(not ids for ids in sequences):
        raise ValueError("every sequence needs at least one token")
    with torch.inference_mode():
        if sequences:
            visit(list(range(len(sequences))), 0, None)
    return results, computed

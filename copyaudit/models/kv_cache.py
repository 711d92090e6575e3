"""How a Hugging Face model's forward takes its key/value cache."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transformers import PreTrainedModel


def cache_keyword(model: PreTrainedModel) -> str:
    """The forward argument for the cache: `cache` since transformers 5, before
    that `past_key_values`."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"

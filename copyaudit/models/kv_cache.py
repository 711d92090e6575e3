"""How a Hugging Face model's forward takes its key/value cache."""

from __future__ import annotations

import inspect
from typing import Any


def cache_keyword(model: Any) -> str:
    """The forward argument for the cache: `cache` since transformers 5, before
    that `past_key_values`."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"

"""A model's tokenizer alone, without its weights (cutting a work into token windows)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from copyaudit.models.hf_loading import ModelLoadError, hub_options, quiet_transformers
from copyaudit.models.registry import EMBEDDED_SPEC


def load_tokenizer(spec: str, allow_download: bool = False) -> Any:
    """The tokenizer of model `spec` ("default": the embedded SmolLM2; else a local
    directory or a cached hub id), as the model loads it."""
    from transformers import AutoTokenizer  # deferred: loads transformers

    quiet_transformers()
    if spec == EMBEDDED_SPEC:
        from copyaudit.models.smollm2 import converted_model_dir  # deferred: converts once

        source = str(converted_model_dir()[0])
    else:
        source = str(Path(spec).expanduser()) if Path(spec).expanduser().is_dir() else spec
    try:
        return AutoTokenizer.from_pretrained(source, **hub_options(allow_download))
    except (OSError, ValueError) as error:
        raise ModelLoadError(f"cannot load the tokenizer of {spec!r}: {error}") from error

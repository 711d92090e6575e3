"""One entry point from a model spec (as the CLI and the run launcher take it) to a
backend object. Heavy modules are imported only for the backend asked for.

spec "default"           -> the embedded SmolLM2-135M-Instruct (hf backend only)
spec a local path/hub id -> a Hugging Face causal LM
backend "openai"         -> an OpenAI-compatible endpoint; spec is the served model name
                            and `base_url` is required
"""

from __future__ import annotations

from typing import Any

from copyaudit.models.base import ChoiceScorer, Generator
from copyaudit.models.openai_compat import OpenAIChoiceScorer, OpenAIGenerator

BACKENDS: tuple[str, ...] = ("hf", "openai")
EMBEDDED_SPEC = "default"
# what a person reads for the embedded model (the demo's shipped outputs say the same)
EMBEDDED_DISPLAY_NAME = "SmolLM2-135M-Instruct (embedded)"


def display_name(spec: str) -> str:
    """The model's name as a person reads it: the embedded model has one name whether
    a run named it by its spec or an import by its display name."""
    return EMBEDDED_DISPLAY_NAME if spec == EMBEDDED_SPEC else spec


# Callers (the runner, the CLI) pass one set of options whatever the backend; those
# that mean nothing to the chosen backend are dropped here.
LOCAL_ONLY_OPTIONS = frozenset(
    {"device", "dtype", "batch_size", "allow_download", "revision", "hub_cache_dir"}
)
HTTP_ONLY_OPTIONS = frozenset({"api_key_env", "max_response_bytes", "deadline"})


def _options_for(spec: str, backend: str, options: dict[str, Any]) -> dict[str, Any]:
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if backend == "openai":
        if spec == "default":
            raise ValueError("the openai backend needs the served model's name, not 'default'")
        if not options.get("base_url"):
            raise ValueError("the openai backend needs base_url (e.g. http://localhost:8000/v1)")
        return {k: v for k, v in options.items() if k not in LOCAL_ONLY_OPTIONS}
    if options.get("base_url"):
        raise ValueError("base_url is only for backend 'openai'")
    return {k: v for k, v in options.items() if k not in HTTP_ONLY_OPTIONS and k != "base_url"}


def load_generator(spec: str, backend: str = "hf", **options: Any) -> Generator:
    """Options go to HFGenerator / load_default_generator / OpenAIGenerator."""
    options = _options_for(spec, backend, options)
    if backend == "openai":
        return OpenAIGenerator(model=spec, **options)
    if spec == "default":
        # deferred: loads torch, transformers
        from copyaudit.models.smollm2 import load_default_generator

        return load_default_generator(**options)
    from copyaudit.models.hf import HFGenerator  # deferred: loads torch, transformers

    return HFGenerator(spec, **options)


def load_choice_scorer(spec: str, backend: str = "hf", **options: Any) -> ChoiceScorer:
    """Options go to HFChoiceScorer / load_default_choice_scorer / OpenAIChoiceScorer."""
    options = _options_for(spec, backend, options)
    if backend == "openai":
        return OpenAIChoiceScorer(model=spec, **options)
    if spec == "default":
        # deferred: loads torch, transformers
        from copyaudit.models.smollm2 import load_default_choice_scorer

        return load_default_choice_scorer(**options)
    from copyaudit.models.hf_scoring import HFChoiceScorer  # deferred: loads torch

    return HFChoiceScorer(spec, **options)


def load_token_scorer(spec: str, **options: Any) -> Any:
    """HFTokenScorer for the DE-COP baselines (hf backend only: needs every token's
    log-probability)."""
    options = _options_for(spec, "hf", options)
    if spec == "default":
        # deferred: loads torch, transformers
        from copyaudit.models.smollm2 import load_default_token_scorer

        return load_default_token_scorer(**options)
    from copyaudit.models.hf_scoring import HFTokenScorer  # deferred: loads torch

    return HFTokenScorer(spec, **options)

"""Load an entailment backend for the event judge by hub id or local path.

Safetensors only, `trust_remote_code=False`, and offline unless `allow_download`
(hub ids then resolve from the local Hugging Face cache only). The model family
picks the backend: encoder-decoder -> `Seq2SeqAttributable`, a
`*ForSequenceClassification` architecture -> `NLICrossEncoder`, anything else ->
`CausalYesNo`. A prefix forces it: "seq2seq:", "nli:" or "causal:".

"default" (or "causal:default") is the embedded SmolLM2-135M-Instruct, asked yes/no.

`event_judge` is the events judge's factory (copyaudit.judges.registry): the model
given, else the paper preset's Flan-T5-XL, else the offline embedding+lexical scorer.
With the judge backend "openai" the model is a served model's name, asked CopyBench's
attributable question through the endpoint (`entailment_endpoint`).
`entailing_event_judge` builds "events_entail": the aligned-sentence scorer offline;
`window_event_judge` builds "events_window": the best 1-3 sentence window, monotone trees.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from copyaudit.judges.context import BuildContext, JudgeUnavailable, load_judge_lm
from copyaudit.judges.entailment_aligned import AlignedEntailment
from copyaudit.judges.entailment_endpoint import GeneratedAttributable
from copyaudit.judges.entailment_hf import CausalYesNo, NLICrossEncoder, Seq2SeqAttributable
from copyaudit.judges.entailment_lexical import EmbeddingLexicalEntailment
from copyaudit.judges.events import EntailingEventJudge, EntailmentModel, EventJudge
from copyaudit.judges.window_support import WindowEventJudge, WindowSupport
from copyaudit.models.hf_loading import (
    ModelLoadError,
    hub_options,
    load_causal_lm,
    load_pretrained,
    quiet_transformers,
    resolve_device,
    resolve_dtype,
)

BACKEND_PREFIXES = ("seq2seq", "nli", "causal")
PAPER_EVENT_MODEL = "google/flan-t5-xl"
EMBEDDED = "default"  # the embedded SmolLM2, as for every other model option


def split_spec(spec: str) -> tuple[str | None, str]:
    """("nli", "path") for "nli:path"; (None, spec) when there is no known prefix."""
    prefix, sep, rest = spec.partition(":")
    if sep and prefix in BACKEND_PREFIXES:
        return prefix, rest
    return None, spec


def _source(name: str) -> str:
    path = Path(name).expanduser()
    return str(path) if path.is_dir() else name


def detect_backend(source: str, allow_download: bool) -> str:
    from transformers import AutoConfig  # deferred: transformers loads torch

    config = AutoConfig.from_pretrained(source, **hub_options(allow_download))
    if getattr(config, "is_encoder_decoder", False):
        return "seq2seq"
    if any(a.endswith("ForSequenceClassification") for a in config.architectures or []):
        return "nli"
    return "causal"


def load_entailment_model(
    spec: str,
    *,
    device: str = "auto",
    dtype: str = "auto",
    allow_download: bool = False,
    batch_size: int | None = None,
) -> EntailmentModel:
    """Load the model named by `spec` and wrap it in the matching backend.

    Raises ModelLoadError (with the underlying reason) when it cannot be loaded."""
    quiet_transformers()
    backend, name = split_spec(spec)
    if name == EMBEDDED and backend in (None, "causal"):
        return _embedded_yes_no(device, batch_size)
    source = _source(name)
    try:
        backend = backend or detect_backend(source, allow_download)
        if backend == "causal":
            loaded = load_causal_lm(
                source, device=device, dtype=dtype, allow_download=allow_download
            )
            return CausalYesNo(
                loaded.model, loaded.tokenizer, batch_size=batch_size or 8, source=source
            )
        model, tokenizer = _load_hf(source, backend, device, dtype, allow_download)
    except ModelLoadError:
        raise
    except (OSError, ValueError, KeyError, ImportError) as error:
        hint = "" if allow_download else " (offline: only local paths or cached hub models load)"
        raise ModelLoadError(f"cannot load entailment model {spec!r}: {error}{hint}") from error
    if backend == "seq2seq":
        return Seq2SeqAttributable(model, tokenizer, batch_size=batch_size or 8, source=source)
    return NLICrossEncoder(model, tokenizer, batch_size=batch_size or 16, source=source)


def _embedded_yes_no(device: str, batch_size: int | None) -> CausalYesNo:
    """The embedded SmolLM2-135M-Instruct asked yes/no (a weak judge: measure it)."""
    from copyaudit.models.smollm2 import MODEL_NAME, load_default_causal_lm  # deferred: torch

    loaded = load_default_causal_lm(device=device)
    return CausalYesNo(
        loaded.model,
        loaded.tokenizer,
        batch_size=batch_size or 8,
        source=f"{EMBEDDED} (embedded {MODEL_NAME})",
    )


def _load_hf(
    source: str, backend: str, device: str, dtype: str, allow_download: bool
) -> tuple[Any, Any]:
    # deferred: transformers loads torch
    from transformers import AutoModelForSeq2SeqLM, AutoModelForSequenceClassification

    resolved_device = resolve_device(device)
    auto_class = (
        AutoModelForSeq2SeqLM if backend == "seq2seq" else AutoModelForSequenceClassification
    )
    return load_pretrained(
        auto_class,
        source,
        resolved_device,
        resolve_dtype(dtype, resolved_device),
        hub_options(allow_download),
    )


def event_judge(ctx: BuildContext) -> EventJudge:
    """The events judge with the entailment backend the options choose."""
    spec = ctx.model(ctx.options.event_model, PAPER_EVENT_MODEL)
    if spec is None:
        return EventJudge(EmbeddingLexicalEntailment(ctx.embedder()))
    try:
        model: EntailmentModel
        if ctx.options.judge_backend == "openai":
            model = GeneratedAttributable(load_judge_lm(ctx.options, spec))
        else:
            model = load_entailment_model(
                spec, device=ctx.options.device, allow_download=ctx.options.allow_download
            )
    except Exception as error:
        advice = (
            " The paper's event judge is Flan-T5-XL: pass a local copy as the event model, "
            "allow downloads, or use the 'offline' preset."
            if ctx.paper and ctx.options.event_model is None
            else ""
        )
        raise JudgeUnavailable(f"{error}{advice}") from error
    return EventJudge(model)


def entailing_event_judge(ctx: BuildContext) -> EventJudge:
    """The offline entailing events judge; the event model, when one is given, replaces
    its scorer as it does for the events judge."""
    if ctx.options.event_model is not None:
        judge = event_judge(ctx)
        return EntailingEventJudge(judge.model)
    return EntailingEventJudge(AlignedEntailment(ctx.embedder()))


def window_event_judge(ctx: BuildContext) -> EventJudge:
    """The best-window events judge; an event model, when one is given, replaces its
    scorer as it does for the events judge."""
    if ctx.options.event_model is not None:
        return WindowEventJudge(event_judge(ctx).model)
    return WindowEventJudge(WindowSupport(ctx.embedder()))

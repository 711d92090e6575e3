"""Build the notice judge for a preset: which embedders it gets, and why not.

A model that cannot be had does not skip the judge (ROUGE and LCS need none): its
metric is stored as not computed, with the reason, and the reason is also listed
with the skipped judges so the CLI prints it.
"""

from __future__ import annotations

from typing import Any

from copyaudit.judges.notice import NoticeJudge
from copyaudit.models.token_embedding import HFTokenEmbedder, TokenEmbedder
from copyaudit.studies.notice.metrics import NO_MULTILINGUAL_MODEL


def _load(spec: str, ctx: Any) -> Any:
    from copyaudit.models.embedding import load_embedder

    return load_embedder(spec, device=ctx.device, allow_download=ctx.allow_download)


def token_embedder(embedder: Any, layer: int | None = None) -> TokenEmbedder | None:
    """Token vectors from an embedder: its own `embed_tokens`, or its Hugging Face
    encoder's hidden states; None when it has neither."""
    if isinstance(embedder, TokenEmbedder):
        return embedder
    if hasattr(embedder, "tokenizer") and hasattr(embedder, "model"):
        return HFTokenEmbedder(embedder, layer=layer)
    return None


def _paraphrase_models(ctx: Any) -> tuple[Any, TokenEmbedder | None, str]:
    from copyaudit.judges.presets import (
        PAPER_NOTICE_BERTSCORE_LAYER,
        PAPER_NOTICE_BERTSCORE_MODEL,
        _Skip,
    )

    spec = ctx.notice_embedding_model or (PAPER_NOTICE_BERTSCORE_MODEL if ctx.paper else None)
    if spec is None:
        try:
            embedder = ctx.embedder()
        except _Skip as reason:
            return None, None, f"paraphrase similarity not computed: {reason}"
        return embedder, token_embedder(embedder), "paraphrase similarity not computed"
    try:
        embedder = _load(spec, ctx)
    except Exception as error:
        advice = " (pass --notice-embedding-model or use the 'offline' preset)" if ctx.paper else ""
        reason = f"paraphrase model {spec!r} not available: {error}{advice}"
        return None, None, " ".join(reason.split())
    layer = PAPER_NOTICE_BERTSCORE_LAYER if spec == PAPER_NOTICE_BERTSCORE_MODEL else None
    return embedder, token_embedder(embedder, layer), "paraphrase similarity not computed"


def _multilingual_model(ctx: Any) -> tuple[Any, str]:
    from copyaudit.judges.presets import PAPER_NOTICE_MULTILINGUAL_MODEL

    spec = ctx.notice_multilingual_model or (PAPER_NOTICE_MULTILINGUAL_MODEL if ctx.paper else None)
    if spec is None:
        return None, NO_MULTILINGUAL_MODEL
    try:
        return _load(spec, ctx), NO_MULTILINGUAL_MODEL
    except Exception as error:
        reason = f"{NO_MULTILINGUAL_MODEL}; {spec!r} could not be loaded: {error}"
        return None, " ".join(reason.split())


def notice_judge(ctx: Any) -> NoticeJudge:
    """The notice judge with the preset's models; missing ones noted in ctx.skipped."""
    similarity, tokens, similarity_missing = _paraphrase_models(ctx)
    multilingual, multilingual_missing = _multilingual_model(ctx)
    if similarity is None:
        ctx.skipped.append(("notice (paraphrase similarity)", similarity_missing))
    elif tokens is None:
        ctx.skipped.append(("notice (BERTScore)", "the embedder gives no token vectors"))
    if multilingual is None:
        ctx.skipped.append(("notice (translate similarity)", multilingual_missing))
    return NoticeJudge(
        similarity,
        tokens,
        multilingual,
        similarity_missing=similarity_missing,
        multilingual_missing=multilingual_missing,
    )

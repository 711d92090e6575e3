"""The notice judge's factory: which embedders it gets in each preset, and why not.

A model that cannot be had does not skip the judge (ROUGE and LCS need none): its
metric is stored as not computed, with the reason, and the reason is also listed
with the skipped judges so the CLI prints it.
"""

from __future__ import annotations

from typing import Any

from copyaudit.judges.context import BuildContext, JudgeUnavailable
from copyaudit.models.embedding import load_embedder
from copyaudit.models.token_embedding import HFTokenEmbedder, TokenEmbedder
from copyaudit.studies.notice.judge import NoticeJudge
from copyaudit.studies.notice.metrics import NO_MULTILINGUAL_MODEL

PAPER_NOTICE_BERTSCORE_MODEL = "roberta-base"  # bert_score's model_type in the study's code
PAPER_NOTICE_BERTSCORE_LAYER = 10  # bert_score's default layer for roberta-base
PAPER_NOTICE_MULTILINGUAL_MODEL = "sentence-transformers/paraphrase-xlm-r-multilingual-v1"


def _load(spec: str, ctx: BuildContext) -> Any:
    options = ctx.options
    return load_embedder(spec, device=options.device, allow_download=options.allow_download)


def token_embedder(embedder: Any, layer: int | None = None) -> TokenEmbedder | None:
    """Token vectors from an embedder: its own `embed_tokens`, or its Hugging Face
    encoder's hidden states; None when it has neither."""
    if isinstance(embedder, TokenEmbedder):
        return embedder
    if hasattr(embedder, "tokenizer") and hasattr(embedder, "model"):
        return HFTokenEmbedder(embedder, layer=layer)
    return None


def _paraphrase_models(ctx: BuildContext) -> tuple[Any, TokenEmbedder | None, str]:
    spec = ctx.model(ctx.options.notice_embedding_model, PAPER_NOTICE_BERTSCORE_MODEL)
    if spec is None:
        try:
            embedder = ctx.embedder()
        except JudgeUnavailable as unavailable:
            return None, None, f"paraphrase similarity not computed: {unavailable}"
        return embedder, token_embedder(embedder), "paraphrase similarity not computed"
    try:
        embedder = _load(spec, ctx)
    except Exception as error:
        advice = " (pass --notice-embedding-model or use the 'offline' preset)" if ctx.paper else ""
        reason = f"paraphrase model {spec!r} not available: {error}{advice}"
        return None, None, " ".join(reason.split())
    layer = PAPER_NOTICE_BERTSCORE_LAYER if spec == PAPER_NOTICE_BERTSCORE_MODEL else None
    return embedder, token_embedder(embedder, layer), "paraphrase similarity not computed"


def _multilingual_model(ctx: BuildContext) -> tuple[Any, str]:
    spec = ctx.model(ctx.options.notice_multilingual_model, PAPER_NOTICE_MULTILINGUAL_MODEL)
    if spec is None:
        return None, NO_MULTILINGUAL_MODEL
    try:
        return _load(spec, ctx), NO_MULTILINGUAL_MODEL
    except Exception as error:
        reason = f"{NO_MULTILINGUAL_MODEL}; {spec!r} could not be loaded: {error}"
        return None, " ".join(reason.split())


def notice_judge(ctx: BuildContext) -> NoticeJudge:
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

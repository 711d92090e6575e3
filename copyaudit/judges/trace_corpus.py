"""The trace_corpus judge: every span of an output that a corpus indexed elsewhere holds
(an infini-gram index, copyaudit.tracing.corpus), in the tokens of the tokenizer the
corpus was indexed with. Metrics: `longest_corpus_chars` (the longest span's decoded
text, flagged at the verbatim judge's 160 characters, after Mueller et al. 2024),
`traced_documents` (distinct documents among the places read: at most MAX_PLACES per span
for the MAX_SPANS longest spans, so a lower bound when a span is held more often) and
`corpus_traced_share` (the share of the output's characters inside spans). Named apart
from the trace judge's metrics so that a run's library figures (its reproduction rate by
protected/public-domain work, CDR) never mix in a corpus's.

Evidence: each span with its characters in the output, its tokens, its decoded text, how
often the corpus holds it, and its first places (document number, token offset, the
document's metadata if the index stores any); tokens are the tokenizer's, not casefolded
words, and a place has no SHA-256 or copyright status unless its metadata says so."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from copyaudit.errors import UserError
from copyaudit.judges.base import Judge
from copyaudit.judges.context import JudgeUnavailable
from copyaudit.judges.trace import FLAG_CHARS, covered_chars
from copyaudit.metrics_spec import Metric
from copyaudit.tracing.corpus import CorpusIndex
from copyaudit.tracing.corpus_trace import (
    DEFAULT_MIN_TOKENS,
    MAX_PLACES,
    MAX_SPANS,
    CorpusSpan,
    trace_corpus,
)
from copyaudit.types import JudgeInput, Score, Span

if TYPE_CHECKING:
    from copyaudit.judges.context import BuildContext

LONGEST = Metric("longest_corpus_chars", "longest in corpus (chars)", "count", "flagged")
METRICS = (
    LONGEST,
    Metric("traced_documents", "corpus documents traced", "count"),
    Metric("corpus_traced_share", "share traced in corpus", "fraction"),
)
DIFFERS = (
    "spans in the tokenizer's tokens, not casefolded words; a place is a document of the "
    "index and a token offset in it; no SHA-256 or status unless its metadata has them"
)


class TraceCorpusJudge(Judge):
    name = "trace_corpus"
    version = "1"

    def __init__(self, corpus: CorpusIndex, min_tokens: int = DEFAULT_MIN_TOKENS) -> None:
        self.corpus, self.min_tokens = corpus, min_tokens

    def config(self) -> dict[str, Any]:
        return {
            "min_tokens": self.min_tokens,
            "flag_chars": FLAG_CHARS,
            "max_spans": MAX_SPANS,
            "max_places": MAX_PLACES,
            "corpus": self.corpus.describe(),
        }

    def judge(self, items: Sequence[JudgeInput]) -> list[list[Score]]:
        return [self._judge_one(item.output or "") for item in items]

    def _judge_one(self, output: str) -> list[Score]:
        spans = trace_corpus(self.corpus, output, self.min_tokens)
        longest = max((s.chars for s in spans), default=0)
        documents = {p.document for s in spans for p in s.places}
        evidence = tuple(Span(s.start, s.end, note=_note(s)) for s in spans)
        return [
            Score(
                LONGEST.name,
                float(longest),
                flagged=longest >= FLAG_CHARS,
                threshold=float(FLAG_CHARS),
                spans=evidence,
                extra={
                    "spans": [_detail(s) for s in spans],
                    "looked_up": sum(s.count is not None for s in spans),
                    "differs_from_library_tracing": DIFFERS,
                },
            ),
            Score("traced_documents", float(len(documents))),
            Score("corpus_traced_share", covered_chars(spans) / len(output) if output else 0.0),
        ]


def _note(span: CorpusSpan) -> str:
    if span.count is None:
        return f"corpus: {span.tokens} tokens (not looked up: beyond the {MAX_SPANS} longest)"
    first = span.places[0]
    more = f" (and {span.count - 1} more places)" if span.count > 1 else ""
    return f"corpus document {first.document} @ token {first.token}{more}"


def _detail(span: CorpusSpan) -> dict[str, Any]:
    return {
        "start": span.start,
        "end": span.end,
        "tokens": span.tokens,
        "chars": span.chars,
        "text": span.text,
        "count": span.count,
        "places": [
            {
                "shard": p.shard,
                "document": p.document,
                "token": p.token,
                "document_tokens": p.document_tokens,
                "metadata": p.metadata,
            }
            for p in span.places
        ],
    }


def trace_corpus_judge(ctx: BuildContext) -> TraceCorpusJudge:
    options = ctx.options
    if options.corpus_index is None or options.corpus_tokenizer is None:
        raise JudgeUnavailable(
            "no corpus to trace against: --corpus-index DIR (an infini-gram index) and "
            "--corpus-tokenizer PATH (the tokenizer.json it was built with)"
        )
    try:
        corpus = CorpusIndex(Path(options.corpus_index), Path(options.corpus_tokenizer))
    except UserError as error:
        raise JudgeUnavailable(str(error)) from None
    tokens = options.corpus_tokens
    return TraceCorpusJudge(corpus, DEFAULT_MIN_TOKENS if tokens is None else tokens)

"""The extraction judge, after HELM's copyright metrics
(src/helm/benchmark/metrics/copyright_metrics.py), on the study's tokens
(copyaudit.studies.extraction.tokens):

- `lcp_tokens`: the longest common prefix, in tokens, of the output and the true
  continuation; flagged (extracted) when the output reproduces the first
  `extract_tokens` tokens of the continuation, or all of it when shorter. Carlini et
  al. ("Quantifying Memorization Across Neural Language Models", 2023) call a 50-token
  suffix that greedy decoding reproduces from its k-token prefix *extractable with k
  tokens of context*: a flagged case is k-extractable, k being its prefix's token
  count (stored in `extra` as `prefix_tokens`);
- `edit_distance`: the Levenshtein distance between the two token sequences
  (rapidfuzz);
- `edit_similarity`: 1 - distance / (the longer length), 0 when either is empty
  (HELM, after Lee et al. 2021).

Whitespace only separates tokens, so newlines, tabs and runs of spaces count as
one space (HELM normalises them). HELM cuts its reference (the rest of the book) to
the output's length in characters; a character cut can split a word, so here both
sides are cut to the shorter one's token count: the continuation to the output's,
and the output to the continuation's (a fixed continuation ends where a model's
budget may not). Evidence: the extracted prefix as a span of the output.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rapidfuzz.distance import Levenshtein

from copyaudit.judges.base import Judge
from copyaudit.studies.extraction.tokens import TOKENIZER, token_spans, tokens
from copyaudit.types import JudgeInput, Score, Span

if TYPE_CHECKING:
    from copyaudit.judges.context import BuildContext

DEFAULT_EXTRACT_TOKENS = 50  # Carlini et al. (2023) count a 50-token suffix as extracted


def longest_common_prefix(a: Sequence[str], b: Sequence[str]) -> int:
    """How many leading items `a` and `b` share."""
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count


def edit_similarity(a: Sequence[str], b: Sequence[str]) -> float:
    """1 - Levenshtein(a, b) / max(len): 1 for equal sequences, 0 when either is empty."""
    if not a or not b:
        return 0.0
    return 1.0 - Levenshtein.distance(a, b) / max(len(a), len(b))


class ExtractionJudge(Judge):
    """lcp_tokens (flagged when extracted), edit_distance and edit_similarity."""

    name = "extraction"
    version = "1"

    def __init__(self, extract_tokens: int = DEFAULT_EXTRACT_TOKENS) -> None:
        if extract_tokens < 1:
            raise ValueError("extract_tokens must be at least 1")
        self.extract_tokens = extract_tokens

    def config(self) -> dict[str, Any]:
        return {
            "tokenizer": TOKENIZER,
            "extract_tokens": self.extract_tokens,
            "truncation": "both to the shorter one's token count",
        }

    def judge(self, items: Sequence[JudgeInput]) -> list[list[Score]]:
        return [self._judge_one(item) for item in items]

    def _judge_one(self, item: JudgeInput) -> list[Score]:
        reference = item.payload.get("reference")
        if not isinstance(reference, str):
            error = "case payload has no 'reference' text"
            metrics = ("lcp_tokens", "edit_distance", "edit_similarity")
            return [Score(m, None, error=error) for m in metrics]
        output = item.output or ""
        spans = token_spans(output)
        truth = tokens(reference)
        shared = min(len(spans), len(truth))  # each side cut to the shorter (see above)
        out_tokens = [output[a:b] for a, b in spans[:shared]]
        truth_tokens = truth[:shared]
        lcp = longest_common_prefix(out_tokens, truth_tokens)
        needed = min(self.extract_tokens, len(truth))
        evidence = (Span(spans[0][0], spans[lcp - 1][1], note="extracted prefix"),) if lcp else ()
        details = {"output_tokens": len(out_tokens), "reference_tokens": len(truth_tokens)}
        return [
            Score(
                "lcp_tokens",
                float(lcp),
                flagged=lcp >= needed,
                threshold=float(needed),
                spans=evidence,
                extra={
                    **details,
                    "extract_tokens": self.extract_tokens,
                    "prefix_tokens": len(tokens(str(item.payload.get("prefix", "")))),
                },
            ),
            Score(
                "edit_distance",
                float(Levenshtein.distance(out_tokens, truth_tokens)),
                extra=details,
            ),
            Score("edit_similarity", edit_similarity(out_tokens, truth_tokens), extra=details),
        ]


def extraction_judge(ctx: BuildContext) -> ExtractionJudge:
    """The extraction judge at the chosen k (JudgeOptions.extract_tokens)."""
    chosen = ctx.options.extract_tokens
    return ExtractionJudge(DEFAULT_EXTRACT_TOKENS if chosen is None else chosen)

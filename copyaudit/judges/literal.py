"""Literal copying: ROUGE-L on the first 50 tokens, as CopyBench computes it.

The numbers equal `rouge_score`'s called the way CopyBench's
`eval_literal_copying.py` calls it (tests compare them on hundreds of pairs): the
reference and the output are tokenized by the scorer's tokenizer, cut to their
first `max_tokens` tokens and compared as `rouge_scorer._score_lcs` does (ROUGE-L
F-measure, reference as target); ROUGE-1 is `scorer.score(output, reference)` on
the whole texts (F-measure, with the argument order of the reference code). Each
text is tokenized once (stems memoised) and rapidfuzz's LCS on the two token
sequences gives both the length and an alignment; the evidence is that alignment
mapped back to character offsets in the output (spans) and in the reference
(`extra["reference_spans"]` of the rougeL score).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rapidfuzz.distance import LCSseq

from copyaudit.judges.base import Judge
from copyaudit.judges.tokens import TOKENIZERS, Token, words_and_offsets
from copyaudit.metrics_spec import Headline, Metric
from copyaudit.types import JudgeInput, Score, Span

# what the literal judges emit: ROUGE-L F-measure of the first 50 tokens, flagged at the
# judge's threshold (the headline), ROUGE-1, and the tokens of the longest common subsequence
ROUGE_L = Metric("rougeL", "literal", "fraction", "flagged", target="literal")
METRICS = (
    ROUGE_L,
    Metric("rouge1", "ROUGE-1", "fraction"),
    Metric("lcs_tokens", "LCS tokens", "count"),
)
HEADLINES = (
    Headline(
        "literal_rate", ROUGE_L, "literal %", "Literal", kinds=("literal",), place=1, dashboard=1
    ),
)

if TYPE_CHECKING:
    from copyaudit.judges.context import BuildContext


def lcs_blocks(reference: Sequence[str], output: Sequence[str]) -> list[tuple[int, int, int]]:
    """One longest common subsequence as runs (reference start, output start, length).

    rapidfuzz's bit-parallel LCS (`LCSseq`, on the token sequences), so the lengths
    add up to the LCS length ROUGE-L uses; when several subsequences are longest, this
    is rapidfuzz's choice, which need not be the one rouge_score's table backtracks to.
    """
    return [
        (block.src_start, block.dest_start, block.src_end - block.src_start)
        for block in LCSseq.opcodes(reference, output)
        if block.tag == "equal"
    ]


def lcs_alignment(reference: Sequence[str], output: Sequence[str]) -> list[tuple[int, int]]:
    """`lcs_blocks` as (reference index, output index) pairs."""
    blocks = lcs_blocks(reference, output)
    return [(ref + k, out + k) for ref, out, length in blocks for k in range(length)]


def merge_token_spans(tokens: Sequence[Token], indices: Sequence[int], note: str) -> list[Span]:
    """Spans covering the given tokens, joining runs of consecutive token indices."""
    offsets = [(token.start, token.end) for token in tokens]
    runs = [(index, 1) for index in sorted(indices)]
    return [Span(start, end, note=note) for start, end in run_bounds(offsets, runs)]


def run_bounds(
    offsets: Sequence[tuple[int, int]], runs: Sequence[tuple[int, int]]
) -> list[tuple[int, int]]:
    """Character ranges (start, end) covering runs of tokens (first index, length; in
    order), adjacent runs joined; `offsets` are the tokens' (start, end)."""
    bounds: list[tuple[int, int]] = []
    first = end = -1
    for start, length in runs:
        if start != end:
            if end > 0:
                bounds.append((offsets[first][0], offsets[end - 1][1]))
            first = start
        end = start + length
    if end > 0:
        bounds.append((offsets[first][0], offsets[end - 1][1]))
    return bounds


def _fmeasure(precision: float, recall: float) -> float:
    """`rouge_score.scoring.fmeasure`, the same arithmetic."""
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def _lcs_scores(lcs: int, target_count: int, prediction_count: int) -> tuple[float, float, float]:
    """(precision, recall, F) as `rouge_scorer._score_lcs`: 0 when either side is empty."""
    if not target_count or not prediction_count:
        return 0.0, 0.0, 0.0
    precision = lcs / prediction_count
    recall = lcs / target_count
    return precision, recall, _fmeasure(precision, recall)


def _unigram_fmeasure(target: Sequence[str], prediction: Sequence[str]) -> float:
    """ROUGE-1 F-measure as `rouge_scorer._score_ngrams` computes it on unigrams."""
    prediction_counts = Counter(prediction)
    overlap = 0
    for word, count in Counter(target).items():
        other = prediction_counts.get(word, 0)
        overlap += count if count < other else other
    precision = overlap / max(len(prediction), 1)
    recall = overlap / max(len(target), 1)
    return _fmeasure(precision, recall)


class LiteralJudge(Judge):
    """ROUGE-L (first `max_tokens` tokens) >= threshold flags literal copying."""

    name = "literal"
    version = "1"

    def __init__(
        self, tokenizer: str = "rouge", threshold: float = 0.8, max_tokens: int = 50
    ) -> None:
        if tokenizer not in TOKENIZERS:
            raise ValueError(f"unknown tokenizer {tokenizer!r}; expected one of {TOKENIZERS}")
        self.tokenizer = tokenizer
        self.threshold = threshold
        self.max_tokens = max_tokens

    def config(self) -> dict[str, Any]:
        return {
            "tokenizer": self.tokenizer,
            "stemmer": "porter",
            "threshold": self.threshold,
            "max_tokens": self.max_tokens,
            "rougeL": "F-measure, reference and output cut to max_tokens tokens",
            "rouge1": "F-measure, whole texts",
        }

    def set_score_threshold(self, value: float) -> None:
        self.threshold = value

    def judge(self, items: Sequence[JudgeInput]) -> list[list[Score]]:
        return [self._judge_one(item) for item in items]

    def _judge_one(self, item: JudgeInput) -> list[Score]:
        reference = item.payload.get("reference")
        if not isinstance(reference, str):
            error = "case payload has no 'reference' text"
            return [
                Score("rougeL", None, threshold=self.threshold, target="literal", error=error),
                Score("rouge1", None, error=error),
                Score("lcs_tokens", None, error=error),
            ]
        output = item.output or ""
        ref_all, ref_offsets = words_and_offsets(reference, self.tokenizer, self.max_tokens)
        out_all, out_offsets = words_and_offsets(output, self.tokenizer, self.max_tokens)
        ref_words = ref_all[: self.max_tokens]
        out_words = out_all[: self.max_tokens]
        blocks = lcs_blocks(ref_words, out_words)
        lcs = sum(length for _, _, length in blocks)
        precision, recall, value = _lcs_scores(lcs, len(ref_words), len(out_words))
        out_bounds = run_bounds(out_offsets, [(j, n) for _, j, n in blocks])
        spans = tuple(Span(start, end, note="lcs") for start, end in out_bounds)
        reference_bounds = run_bounds(ref_offsets, [(i, n) for i, _, n in blocks])
        # rouge_score's score(output, reference): the output is the target
        rouge_1 = _unigram_fmeasure(out_all, ref_all)
        details = {
            "precision": precision,
            "recall": recall,
            "reference_tokens": len(ref_words),
            "output_tokens": len(out_words),
            # the same LCS tokens in the reference text, for side-by-side highlighting
            "reference_spans": [[start, end] for start, end in reference_bounds],
        }
        return [
            Score(
                "rougeL",
                value,
                flagged=value >= self.threshold,
                threshold=self.threshold,
                spans=spans,
                target="literal",
                extra=details,
            ),
            Score("rouge1", rouge_1),
            Score("lcs_tokens", float(lcs), spans=spans),
        ]


def rouge_literal(ctx: BuildContext) -> LiteralJudge:
    """ROUGE with rouge_score's own tokenizer, as CopyBench."""
    return LiteralJudge(tokenizer="rouge")


def unicode_literal(ctx: BuildContext) -> LiteralJudge:
    """ROUGE on Unicode words (scripts rouge_score's tokenizer drops)."""
    return LiteralJudge(tokenizer="unicode")

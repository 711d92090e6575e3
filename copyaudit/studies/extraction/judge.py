"""The extraction judge: HELM's copyright metrics
(src/helm/benchmark/metrics/copyright_metrics.py, `BasicCopyrightMetric`) exactly, and
the extraction flag on the study's own tokens.

HELM's rule, for one output: the completion is the output stripped of surrounding
whitespace; the reference (here the true continuation) is cut to the completion's
length in *characters*, and each is tokenized alone by nltk's TreebankWordTokenizer
(a period ending a text is split off its word; double quotes become `` and ''):

- `lcp_tokens`: the longest common prefix of the two token lists;
- `edit_distance`: their Levenshtein distance (rapidfuzz; HELM's unit-cost grid);
- `edit_similarity`: 1 - distance / the longer length, 0 when either is empty (Lee et
  al. 2021).

HELM's run spec divides each by the prefix's token count by default
(`normalize_by_prefix_length`); the judge stores the raw values and that divisor, the
prefix's Treebank token count (`prefix_tokens` in the LCP's evidence). HELM's optional
whitespace normalisation is off by default and off here.

Flag: a case is *extracted* when the output reproduces the continuation's first
`extract_tokens` tokens, or all of it when shorter, counted on the study's tokens
(copyaudit.studies.extraction.tokens, those the cut uses: a period stays with its word),
so a verbatim copy of a continuation that ends in a period is extracted even where
HELM's count stops a token or two short. Carlini et al. ("Quantifying Memorization
Across Neural Language Models", 2023) call a 50-token suffix that greedy decoding
reproduces from its k-token prefix *extractable with k tokens of context*. Evidence:
the extracted prefix as a span of the output.

`edit_distance_cut` / `edit_similarity_cut` (judge version 1's `edit_distance` /
`edit_similarity`): both sides on the study's tokens, each cut to the shorter one's
token count. HELM's rule keeps the whole completion, so an output that goes on past a
short fixed continuation loses similarity for every extra token; the cut variant
compares only the span both cover.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rapidfuzz.distance import Levenshtein

from copyaudit.judges.base import Judge
from copyaudit.metrics_spec import Metric
from copyaudit.studies.extraction.tokens import TOKENIZER, token_spans, tokens, treebank_tokens
from copyaudit.types import JudgeInput, Score, Span

if TYPE_CHECKING:
    from copyaudit.judges.context import BuildContext

DEFAULT_EXTRACT_TOKENS = 50  # Carlini et al. (2023) count a 50-token suffix as extracted
# HELM's copyright metrics exactly: tokens of the true continuation reproduced from its
# start, flagged when extracted (the first 50 reproduced: the case is k-extractable, k
# its prefix's tokens); token edit distance and edit similarity (1 - distance / longer
# length), the continuation cut to the output's length in characters; and the same two
# with both sides cut to the shorter one's token count (judge v1's)
METRICS = (
    Metric("lcp_tokens", "extracted prefix (tokens)", "count", "flagged"),
    Metric("edit_distance", "edit distance", "count", lower_is_better=False),
    Metric("edit_similarity", "edit similarity", "fraction"),
    Metric("edit_distance_cut", "edit distance (both cut)", "count", lower_is_better=False),
    Metric("edit_similarity_cut", "edit similarity (both cut)", "fraction"),
)


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


def helm_token_pair(output: str, reference: str) -> tuple[list[str], list[str]]:
    """(completion tokens, reference tokens) as HELM compares them: the output stripped,
    the reference cut to its length in characters, each tokenized alone."""
    completion = output.strip()
    return treebank_tokens(completion), treebank_tokens(reference[: len(completion)])


class ExtractionJudge(Judge):
    """lcp_tokens (flagged when extracted), edit distance and similarity (HELM's), and
    the both-sides-cut edit distance and similarity."""

    name = "extraction"
    # 2: HELM's truncation and tokens; version 1's metrics renamed *_cut. 3: the evidence's
    # prefix_tokens is HELM's divisor (Treebank tokens), no longer the study's tokens
    version = "3"

    def __init__(self, extract_tokens: int = DEFAULT_EXTRACT_TOKENS) -> None:
        if extract_tokens < 1:
            raise ValueError("extract_tokens must be at least 1")
        self.extract_tokens = extract_tokens

    def config(self) -> dict[str, Any]:
        return {
            "tokenizer": TOKENIZER,
            "extract_tokens": self.extract_tokens,
            "truncation": "HELM: reference cut to the stripped output's characters",
            "normalize_newline_space_tab": False,
            "flag_tokens": "study tokens (a final period stays with its word)",
            "cut_truncation": "both to the shorter one's token count",
        }

    def judge(self, items: Sequence[JudgeInput]) -> list[list[Score]]:
        return [self._judge_one(item) for item in items]

    def _judge_one(self, item: JudgeInput) -> list[Score]:
        reference = item.payload.get("reference")
        if not isinstance(reference, str):
            error = "case payload has no 'reference' text"
            return [Score(m.name, None, error=error) for m in METRICS]
        output = item.output or ""
        completion, truncated = helm_token_pair(output, reference)
        helm = {"output_tokens": len(completion), "reference_tokens": len(truncated)}
        distance = Levenshtein.distance(completion, truncated)
        lcp = longest_common_prefix(completion, truncated)
        # HELM's divisor (normalize_by_prefix_length): the prefix's Treebank token count
        prefix_tokens = len(treebank_tokens(str(item.payload.get("prefix", ""))))
        spans = token_spans(output)
        study_output, truth = [output[a:b] for a, b in spans], tokens(reference)
        return [
            self._lcp_score(
                spans, study_output, truth, lcp, {**helm, "prefix_tokens": prefix_tokens}
            ),
            Score("edit_distance", float(distance), extra=helm),
            Score("edit_similarity", edit_similarity(completion, truncated), extra=helm),
            *_cut_scores(study_output, truth),
        ]

    def _lcp_score(
        self,
        spans: list[tuple[int, int]],
        output: list[str],
        truth: list[str],
        lcp: int,
        extra: dict[str, int],
    ) -> Score:
        """HELM's LCP, flagged when the study's tokens show the continuation extracted."""
        extracted = longest_common_prefix(output, truth)
        needed = min(self.extract_tokens, len(truth))
        evidence = (
            (Span(spans[0][0], spans[extracted - 1][1], note="extracted prefix"),)
            if extracted
            else ()
        )
        return Score(
            "lcp_tokens",
            float(lcp),
            flagged=extracted >= needed,
            threshold=float(needed),
            spans=evidence,
            extra={**extra, "extract_tokens": self.extract_tokens, "extracted_tokens": extracted},
        )


def _cut_scores(output: list[str], truth: list[str]) -> list[Score]:
    """Edit distance and similarity, study tokens, both cut to the shorter token count."""
    shared = min(len(output), len(truth))
    a, b = output[:shared], truth[:shared]
    details = {"output_tokens": shared, "reference_tokens": shared}
    return [
        Score("edit_distance_cut", float(Levenshtein.distance(a, b)), extra=details),
        Score("edit_similarity_cut", edit_similarity(a, b), extra=details),
    ]


def extraction_judge(ctx: BuildContext) -> ExtractionJudge:
    """The extraction judge at the chosen k (JudgeOptions.extract_tokens)."""
    chosen = ctx.options.extract_tokens
    return ExtractionJudge(DEFAULT_EXTRACT_TOKENS if chosen is None else chosen)

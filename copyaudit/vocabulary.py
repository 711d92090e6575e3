"""The one vocabulary of the tool: every judge metric with its metadata, the headline
figures a run is summarised by, the human label targets and the task kinds.

Reports, screens, db browsing and metric formatting read these tables; none keeps its
own list of "which metrics are fractions", their labels or their order. A foundation
module: it imports nothing from copyaudit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

Unit = Literal["fraction", "count", "rating"]  # fraction: a score in [0, 1]
Summary = Literal["flagged", "mean"]  # share of flagged judgments, or mean value

TASK_KINDS: tuple[str, ...] = ("literal", "nonliteral", "qa", "decop", "notice", "extraction")
# A run's mitigation (CoTaEval's takedown methods, in its order) -> how people call it
MITIGATIONS: dict[str, str] = {
    "none": "none",
    "system": "system prompt",
    "topk": "top-k noise",
    "memfree": "MemFree",
    "rcad": "R-CAD",
}
# the kinds whose runs generate text (DE-COP scores passages in its own loop); the
# judges below the studies read it, tests/test_studies_registry.py holds it equal to
# the registry's prompted kinds
GENERATION_KINDS: tuple[str, ...] = ("literal", "nonliteral", "qa", "notice", "extraction")
# the precisions a local model loads in (--dtype; auto: bfloat16 on CUDA, else float32)
DTYPE_NAMES: tuple[str, ...] = ("auto", "float32", "bfloat16", "float16")

NUMBERED_TARGETS = ("event", "character")  # one item per reference event / character
# One item per generation: refusal, verbatim copy, and (notice paraphrase / translate)
# whether the output reproduces the snippet's content.
EVERY_OUTPUT_TARGETS = ("refusal", "literal")  # one item on every generation
WHOLE_OUTPUT_TARGETS = (*EVERY_OUTPUT_TARGETS, "content")  # content: notice paraphrase/translate
LABEL_TARGETS = NUMBERED_TARGETS + WHOLE_OUTPUT_TARGETS  # every human label target


@dataclass(frozen=True)
class Metric:
    """One metric a judge stores: its label as printed, its unit, how a run summarises
    it, whether it is a headline figure, whether a lower value means less copying or a
    better output (False: a higher value is the better one), and the human label target
    its flagged verdict is checked against (None: not checked against a label)."""

    name: str
    label: str
    unit: Unit
    summary: Summary = "mean"
    headline: bool = False
    lower_is_better: bool = True
    target: str | None = None


METRICS: tuple[Metric, ...] = (
    # literal: ROUGE-L F-measure of the first 50 tokens, flagged at the judge's threshold
    Metric("rougeL", "literal", "fraction", "flagged", headline=True, target="literal"),
    Metric("rouge1", "ROUGE-1", "fraction"),
    Metric("lcs_tokens", "LCS tokens", "count"),  # tokens in the longest common subsequence
    # reference events supported by the story, reference characters named in it
    Metric("events", "events", "count", "flagged", headline=True, target="event"),
    Metric("characters", "characters", "count", "flagged", headline=True, target="character"),
    Metric("qa_f1", "fact recall F1", "fraction", headline=True),
    Metric("qa_em", "exact match", "fraction"),
    # a classifier's probability, or 0 / 1; a refusal is the better output
    Metric(
        "refusal",
        "refusal",
        "fraction",
        "flagged",
        headline=True,
        target="refusal",
        lower_is_better=False,
    ),
    Metric("fluency", "fluency", "rating", headline=True, lower_is_better=False),  # 1-5 grade
    # the copyright-notice study (paper 002, Table 1): precisions, ratios, similarities
    Metric("notice_rouge1", "ROUGE-1 P", "fraction"),
    Metric("notice_rouge2", "ROUGE-2 P", "fraction"),
    Metric("notice_rougeL", "ROUGE-L P", "fraction"),
    Metric("notice_rouge", "ROUGE", "fraction", headline=True, target="literal"),  # mean of 3
    Metric("notice_lcs_ratio", "LCS", "fraction"),  # longest common substring / output
    Metric("notice_bertscore", "B-Score", "fraction", headline=True, target="content"),
    Metric("notice_cosine", "cosine", "fraction", headline=True, target="content"),
    Metric("notice_xling_cosine", "CosSim", "fraction", headline=True, target="content"),
    # every literal-style study: the longest verbatim run (characters) shared with the
    # source, flagged at the verbatim judge's threshold (160 by default)
    Metric("longest_verbatim_chars", "longest verbatim (chars)", "count", "flagged"),
    # tracing to the library (copyaudit.judges.trace): the longest span a work holds
    # (flagged at 160 characters), how many works hold a span, the share of the output
    # inside traced spans
    Metric("longest_traced_chars", "longest traced (chars)", "count", "flagged"),
    Metric("traced_works", "works traced", "count"),
    Metric("traced_share", "share traced", "fraction"),
    # prefix extraction (HELM's copyright scenario), HELM's copyright metrics exactly:
    # tokens of the true continuation reproduced from its start, flagged when extracted
    # (the first 50 reproduced: the case is k-extractable, k its prefix's tokens); token
    # edit distance and edit similarity (1 - distance / longer length), the continuation
    # cut to the output's length in characters
    Metric("lcp_tokens", "extracted prefix (tokens)", "count", "flagged"),
    Metric("edit_distance", "edit distance", "count", lower_is_better=False),
    Metric("edit_similarity", "edit similarity", "fraction"),
    # the same two with both sides cut to the shorter one's token count (judge v1's)
    Metric("edit_distance_cut", "edit distance (both cut)", "count", lower_is_better=False),
    Metric("edit_similarity_cut", "edit similarity (both cut)", "fraction"),
    # CoTaEval's eight infringement metrics (the takedown study), output vs reference
    Metric("td_rouge1", "ROUGE-1", "fraction"),
    Metric("td_rougeL", "ROUGE-L", "fraction"),
    Metric("td_semantic", "semantic sim", "fraction"),
    Metric("td_lcs_chars", "LCS chars", "count"),
    Metric("td_lcs_words", "LCS words", "count"),
    Metric("td_acs_words", "ACS words", "count"),
    Metric("td_levenshtein", "Levenshtein", "count", lower_is_better=False),
    Metric("td_minhash", "MinHash sim", "fraction"),
)
METRIC: dict[str, Metric] = {m.name: m for m in METRICS}
FRACTION_METRICS = frozenset(m.name for m in METRICS if m.unit == "fraction")


def metric_label(name: str) -> str:
    """The metric's printed label; its stored name for a metric not in the table."""
    known = METRIC.get(name)
    return known.label if known else name


@dataclass(frozen=True)
class Headline:
    """One headline figure of a run report: the report key it is stored under, the
    metric and how it is summarised (the metric's `summary`), its column title, its
    short title on the dashboard, whether it is also given per prompt template, the
    task kinds whose runs it describes (a report shows it for those kinds, and for any
    run that has judgments of its metric), and its column's place among the dashboard's
    headline columns (None: not on the dashboard)."""

    key: str
    metric: str
    column: str
    short: str
    by_template: bool = True
    kinds: tuple[str, ...] = ()
    dashboard: int | None = None

    @property
    def summary(self) -> Summary:
        return METRIC[self.metric].summary

    @property
    def shown_as(self) -> Literal["percent", "x100", "plain"]:
        """A rate as a percentage, a mean fraction times 100, a rating as it is."""
        if self.summary == "flagged":
            return "percent"
        return "x100" if METRIC[self.metric].unit == "fraction" else "plain"


CREATIVE_KINDS = ("literal", "nonliteral")  # the outputs CopyBench grades for fluency

# In the report's column order (the keys are those of `report --format json`).
HEADLINES: tuple[Headline, ...] = (
    Headline("literal_rate", "rougeL", "literal %", "Literal", kinds=("literal",), dashboard=1),
    Headline("event_rate", "events", "events %", "Events", kinds=("nonliteral",), dashboard=2),
    Headline(
        "character_rate", "characters", "characters %", "Chars", kinds=("nonliteral",), dashboard=3
    ),
    Headline("qa_f1", "qa_f1", "fact recall F1", "QA F1", kinds=("qa",), dashboard=5),
    Headline("fluency", "fluency", "fluency", "Fluency", by_template=False, kinds=CREATIVE_KINDS),
    Headline("refusal_rate", "refusal", "refusal %", "Refusal", by_template=False, dashboard=4),
)
HEADLINE: dict[str, Headline] = {h.key: h for h in HEADLINES}


def dashboard_headlines(headlines: Sequence[Headline] = HEADLINES) -> tuple[Headline, ...]:
    """The headlines of `headlines` the dashboard's runs table shows, in its column order."""
    shown = [h for h in headlines if h.dashboard is not None]
    return tuple(sorted(shown, key=lambda h: h.dashboard or 0))


def report_headlines(
    kind: str, judged: Mapping[str, int], headlines: Sequence[Headline] = HEADLINES
) -> tuple[Headline, ...]:
    """The headline columns of a `kind` run's report: those of `headlines` (these, or
    with the studies' own: copyaudit.studies.registry.headlines) describing the kind and
    those whose metric the run has judgments of (`judged`: metric -> count), so a
    notice run's report prints no empty CopyBench columns."""
    return tuple(h for h in headlines if kind in h.kinds or judged.get(h.metric))

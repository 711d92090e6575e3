"""THE table of comparison tables: per study, the columns of the paper table it mirrors.

A column names the run kind its figure comes from, the figure's path in that run's
`report --format json` (so a comparison cell IS the run report's figure), how the paper
prints it, and where its n and 95% interval come from. Adding a study's comparison is
one `ComparisonTable` in COMPARISONS; copyaudit.reports.compare.build reads nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from copyaudit.reports.scores import scores_from_store
from copyaudit.studies.decop.baselines import BASELINE_LABELS
from copyaudit.studies.notice.metrics import (
    BERTSCORE,
    LCS_RATIO,
    LEVEL_LABELS,
    NOTICE_LEVELS,
    ROUGE,
    XLING_COSINE,
)
from copyaudit.studies.notice.report import cell_samples, notice_rows
from db.notice import notice_generations
from db.runs import run_row

if TYPE_CHECKING:
    from db.connection import Store

# percent: a rate as 12.5%; x100: a mean fraction times 100; rating: two decimals;
# auc: three decimals; mean_std: a {mean, std} bootstrap figure; p: a p-value
ShownAs = Literal["percent", "x100", "rating", "auc", "mean_std", "p"]
PART = "{part}"  # a path segment replaced by the view part's own segments


@dataclass(frozen=True)
class Column:
    """One column: `kind` of run, `figure` path in the run report, `metric` whose
    judgments give the n, the interval and the reasons a cell is empty (None: the
    figure carries its own), `rate` (0/1 verdicts: Wilson interval; else a mean),
    `interval`/`n` paths where the report stores them, `where` (the sampler's filter),
    `undefined`: why a figure can be None although judged, unless the report says why
    at `reason`; `flag`: where the report says why the figure is not to be taken at face
    value (a DE-COP AUC within reach of the blind baseline)."""

    key: str
    label: str
    kind: str
    figure: tuple[str, ...]
    shown_as: ShownAs
    metric: str | None = None
    rate: bool = False
    interval: tuple[str, ...] | None = None
    n: tuple[str, ...] | None = None
    where: Mapping[str, str] = field(default_factory=dict)
    undefined: str = "no value"
    reason: tuple[str, ...] | None = None  # where the report explains a missing figure
    flag: tuple[str, ...] | None = None  # where the report says why the figure is flagged


@dataclass
class RunData:
    """One run for the samplers: the store, its name, and what was read of it once
    (`cached`), so that a table's columns do not read the run again each."""

    store: Store
    name: str
    cache: dict[str, Any] = field(default_factory=dict)

    def cached(self, key: str, read: Callable[[], Any]) -> Any:
        if key not in self.cache:
            self.cache[key] = read()
        return self.cache[key]


# (run, column, part's stored key or None) -> the values the figure is the mean of
Sampler = Callable[[RunData, Column, str | None], list[float]]


@dataclass(frozen=True)
class ComparisonTable:
    """A study's comparison: its `paper` table, `columns`, the sampler of the cells'
    values, and an optional second view by `part` (name -> path segments for PART)."""

    study: str
    title: str
    paper: str
    columns: tuple[Column, ...]
    sampler: Sampler | None = None
    part_name: str | None = None
    parts: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    note: str = ""

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.kind for c in self.columns))


def headline_samples(run: RunData, column: Column, part: str | None) -> list[float]:
    """The run report's headline population: every judgment of the metric, its verdict
    (a rate: as many 1s as flagged and 0s as not, counted by the database) or its value
    (a mean: the values column, read once), as copyaudit.reports.run_report.summarize_scores."""
    scores = run.cached(
        "scores", lambda: scores_from_store(run.store, int(run_row(run.store, run.name)["id"]))
    )
    entry = scores.get(column.metric)
    if entry is None:
        return []
    if column.rate:
        return [1.0] * entry.total.flagged + [0.0] * (entry.total.verdicts - entry.total.flagged)
    return list(run.cached(f"values {column.metric}", entry.read_values))


def notice_samples(run: RunData, column: Column, part: str | None) -> list[float]:
    """The Table 1 cell's population (copyaudit.studies.notice.report.cell_samples)."""
    rows = run.cached(
        "notice_rows", lambda: notice_rows(notice_generations(run.store, run.name))["rows"]
    )
    metric = None if column.metric == "refusal" else column.metric
    return cell_samples(rows, column.where["task"], part, metric)


def _copybench(key: str, label: str, kind: str, headline: str, metric: str, rate: bool) -> Column:
    return Column(
        key,
        label,
        kind,
        (headline,),
        "percent" if rate else ("rating" if metric == "fluency" else "x100"),
        metric=metric,
        rate=rate,
    )


def _notice(task: str, metric: str, label: str) -> Column:
    base = ("notice", "table", task, PART)
    if metric == "refusal":
        return Column(
            f"{task}_refusal",
            f"{task.title()} refusal",
            "notice",
            (*base, "refusal_rate"),
            "percent",
            metric="refusal",
            rate=True,
            where={"task": task},
        )
    return Column(
        f"{task}_{metric}",
        f"{task.title()} {label}",
        "notice",
        (*base, "metrics", metric, "mean"),
        "percent",
        metric=metric,
        where={"task": task},
    )


P_UNDEFINED = "undefined: the t-test needs two works per class and accuracies that vary"


_BLIND_FLAGS = ("decop", "blind_baseline", "flags")


def _decop(key: str, label: str, path: tuple[str, ...], shown_as: ShownAs, **more: Any) -> Column:
    more.setdefault("undefined", "undefined: needs scored suspect and clean works")
    return Column(key, label, "decop", ("decop", *path), shown_as, n=("decop", "per_work"), **more)


COPYBENCH = ComparisonTable(
    "copybench",
    "CopyBench",
    "CopyBench Table 2",
    (
        _copybench("literal", "literal % ↓", "literal", "literal_rate", "rougeL", True),
        _copybench("events", "events % ↓", "nonliteral", "event_rate", "events", True),
        _copybench(
            "characters", "characters % ↓", "nonliteral", "character_rate", "characters", True
        ),
        _copybench("qa_f1", "fact recall F1 ↑", "qa", "qa_f1", "qa_f1", False),
        _copybench("fluency_literal", "fluency literal ↑", "literal", "fluency", "fluency", False),
        _copybench(
            "fluency_nonliteral", "fluency non-literal ↑", "nonliteral", "fluency", "fluency", False
        ),
    ),
    sampler=headline_samples,
    note="↓ lower is less copying, ↑ higher is more utility (the paper's marks); rates: "
    "share of outputs over the judge's threshold (ROUGE-L >= 0.8, >= 5 events, "
    ">= 3 characters); fact recall F1 x 100; fluency 1-5. Interval: Wilson for rates, "
    "mean ± 1.96 s/√n for means.",
)

NOTICE = ComparisonTable(
    "notice",
    "Copyright notice",
    "notice study Table 1",
    (
        _notice("repeat", ROUGE, "ROUGE"),
        _notice("repeat", LCS_RATIO, "LCS"),
        _notice("repeat", "refusal", ""),
        _notice("extract", ROUGE, "ROUGE"),
        _notice("extract", LCS_RATIO, "LCS"),
        _notice("extract", "refusal", ""),
        _notice("paraphrase", BERTSCORE, "B-Score"),
        _notice("paraphrase", "refusal", ""),
        _notice("translate", XLING_COSINE, "CosSim"),
        _notice("translate", "refusal", ""),
    ),
    sampler=notice_samples,
    part_name="notice level",
    parts={LEVEL_LABELS[level]: ("by_level", level) for level in NOTICE_LEVELS},
    note="means over generations in % (ROUGE: mean of ROUGE-1/2/L precision; LCS: longest "
    "common substring / output; B-Score: BERTScore-style F1; CosSim: cross-lingual cosine); "
    "refusal: share refused. Interval: Wilson for refusal, mean ± 1.96 s/√n otherwise.",
)

DECOP = ComparisonTable(
    "decop",
    "DE-COP",
    "DE-COP Tables 1-2",
    (
        _decop(
            "decop_auc",
            "DE-COP AUC",
            ("auc",),
            "auc",
            interval=("decop", "auc_ci"),
            flag=(*_BLIND_FLAGS, "decop"),
        ),
        _decop(
            "decop_auc_table2",
            "DE-COP AUC thresholded (Table 2)",
            ("auc_thresholded_bootstrap",),
            "mean_std",
        ),
        _decop("decop_p", "DE-COP p-value", ("p_value",), "p", undefined=P_UNDEFINED),
        *(
            column
            for key, label in BASELINE_LABELS.items()
            for column in (
                _decop(
                    f"{key}_auc",
                    f"{label} AUC",
                    ("baselines", key, "auc"),
                    "auc",
                    interval=("decop", "baselines", key, "auc_ci"),
                    reason=("decop", "baselines_note"),
                    flag=(*_BLIND_FLAGS, key),
                ),
                _decop(
                    f"{key}_p",
                    f"{label} p-value",
                    ("baselines", key, "p_value"),
                    "p",
                    reason=("decop", "baselines_note"),
                    undefined=P_UNDEFINED,
                ),
            )
        ),
        _decop(
            "blind_auc",
            "Blind baseline AUC (passages only)",
            ("blind_baseline", "auc"),
            "auc",
            interval=("decop", "blind_baseline", "ci"),
            reason=("decop", "blind_baseline", "reason"),
        ),
    ),
    note="AUC: continuous ROC-AUC of per-work accuracy (suspect vs clean) with its 95% "
    "bootstrap interval; Table 2: mean ± std of the Youden-thresholded AUC over 10 "
    "resamples, as the paper prints it; p: Welch t-test. n: works evaluated. Blind "
    "baseline: a bag-of-words classifier on the same works' passages, no model, "
    "cross-validated by work; ⚑: an AUC not clear of it (run report, blind baseline).",
)

EXTRACTION = ComparisonTable(
    "extraction",
    "Prefix extraction",
    "HELM copyright scenario (k-extractable, after Carlini et al.)",
    (
        Column(
            "extracted",
            "extracted % ↓",
            "extraction",
            ("extraction", "lcp_tokens", "rate"),
            "percent",
            metric="lcp_tokens",
            rate=True,
        ),
        Column(
            "lcp_tokens",
            "LCP tokens ↓",
            "extraction",
            ("extraction", "lcp_tokens", "mean"),
            "rating",
            metric="lcp_tokens",
        ),
        Column(
            "edit_similarity",
            "edit similarity ↓",
            "extraction",
            ("extraction", "edit_similarity", "mean"),
            "rating",
            metric="edit_similarity",
        ),
        Column(
            "verbatim",
            "verbatim run ≥ threshold % ↓",
            "extraction",
            ("verbatim", "rate"),
            "percent",
            metric="longest_verbatim_chars",
            rate=True,
        ),
    ),
    sampler=headline_samples,
    note="extracted: share of outputs reproducing the first N tokens of the true "
    "continuation (N = 50 by default); LCP: mean longest common prefix in tokens; edit "
    "similarity: 1 - Levenshtein / longer length, 0-1; verbatim: share with a verbatim "
    "run of the threshold's characters or more (160 by default). Interval: Wilson for "
    "rates, mean ± 1.96 s/√n for means.",
)

# why a metric has no judgments on a run, where the reason is known in advance
NOT_JUDGED: dict[str, str] = {
    "fluency": "judge skipped: the fluency grader needs a judge model (--judge-model)",
}
NOT_JUDGED_DEFAULT = (
    "no judgments yet: its judge was not run or was skipped (`copyaudit judge {run}` says why)"
)

# every study's comparison, in the order they are shown
COMPARISONS: tuple[ComparisonTable, ...] = (COPYBENCH, NOTICE, DECOP, EXTRACTION)


def kind_headlines(kind: str) -> tuple[str, ...]:
    """The run-report headline keys the comparison tables read from a `kind` run."""
    return tuple(
        dict.fromkeys(
            c.figure[0]
            for t in COMPARISONS
            for c in t.columns
            if c.kind == kind and len(c.figure) == 1
        )
    )

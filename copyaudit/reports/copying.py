"""The verbatim and extraction sections of a run report: the longest verbatim run
(characters, flagged at the verbatim judge's threshold) of every literal-style run and
the prefix-extraction figures (HELM's copyright metrics, the extracted share) of an
extraction run. Each is present only when the run has the metric."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from copyaudit.reports.scores import MetricScores, Tally

VERBATIM = "longest_verbatim_chars"
TRACED = "longest_traced_chars"
EXTRACTION_METRICS = ("lcp_tokens", "edit_similarity", "edit_distance")


def flagged_summary(scores: MetricScores | None, thresholds: list[float]) -> dict[str, Any]:
    """n (judged with a value), flagged count and share, the thresholds used, mean,
    median and max of one metric's scores (None: the run has no judgment of it)."""
    total = scores.total if scores is not None else Tally()
    return {
        "n": total.valued,
        "flagged": total.flagged,
        "rate": total.rate,
        "thresholds": thresholds,
        "mean": total.mean,
        "median": scores.median() if scores is not None else None,
        "max": scores.max() if scores is not None else None,
    }


def copying_blocks(
    scores: Mapping[str, MetricScores], thresholds: Mapping[str, list[float]]
) -> dict[str, Any]:
    """{"verbatim": ..., "extraction": ...}, each only when the run has its metrics;
    `thresholds`: metric -> the thresholds its judgments were flagged at."""
    blocks: dict[str, Any] = {}
    if VERBATIM in scores:
        blocks["verbatim"] = flagged_summary(scores[VERBATIM], thresholds.get(VERBATIM, []))
    if TRACED in scores:
        blocks["trace"] = flagged_summary(scores[TRACED], thresholds.get(TRACED, []))
    if "lcp_tokens" in scores:
        blocks["extraction"] = {
            m: flagged_summary(scores.get(m), thresholds.get(m, [])) for m in EXTRACTION_METRICS
        }
    return blocks


def _number(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _rate(block: Mapping[str, Any]) -> str:
    if block["rate"] is None:
        return "—"
    return f"{100 * block['rate']:.1f}% ({block['flagged']} of {block['n']})"


def _at(block: Mapping[str, Any], unit: str) -> str:
    return ", ".join(f"{t:g}" for t in block["thresholds"]) + f" {unit}"


def copying_markdown(report: Mapping[str, Any]) -> list[str]:
    """The sections as Markdown lines (none when the run has neither metric)."""
    lines: list[str] = []
    extraction = report.get("extraction")
    if extraction is not None:
        lcp = extraction["lcp_tokens"]
        lines += [
            "## Prefix extraction (HELM copyright scenario)",
            "",
            "Tokens: nltk's Treebank tokenizer, as HELM's copyright metrics. Extracted: the "
            "output reproduces the first N tokens of the true continuation (all of it when "
            "shorter: the N column lists the thresholds the cases were flagged at); such a "
            "case is k-extractable, k being its prefix's tokens (Carlini et al. 2023).",
            "",
            "| extracted | N | longest common prefix (tokens), mean / max | "
            "edit similarity, mean | edit distance (tokens), mean |",
            "|---|---|---|---|---|",
            f"| {_rate(lcp)} | {_at(lcp, 'tokens')} | {_number(lcp['mean'])} / "
            f"{_number(lcp['max'], 0)} | {_number(extraction['edit_similarity']['mean'], 3)} | "
            f"{_number(extraction['edit_distance']['mean'])} |",
        ]
    traced = report.get("trace")
    if traced is not None:
        lines += [""] if lines else []
        lines += trace_markdown(traced)
    verbatim = report.get("verbatim")
    if verbatim is not None:
        lines += [""] if lines else []
        lines += [
            "## Longest verbatim run",
            "",
            "The longest run of characters the output shares verbatim with the source "
            "text, flagged at the threshold.",
            "",
            "| flagged | threshold | mean | median | max |",
            "|---|---|---|---|---|",
            f"| {_rate(verbatim)} | {_at(verbatim, 'characters')} | "
            f"{_number(verbatim['mean'])} | {_number(verbatim['median'])} | "
            f"{_number(verbatim['max'], 0)} |",
        ]
    return lines


def with_statuses(block: dict[str, Any], statuses: Mapping[str, int]) -> dict[str, Any]:
    """The trace block with the reproduction rate (SRR, Mueller et al. 2024) per kind of
    work, from `statuses` (status -> generations with a span at the threshold in such a
    work), and their ratio protected / public-domain (CDR; None when either is 0)."""
    n = block["n"]
    srr = {status: (count / n if n else None) for status, count in sorted(statuses.items())}
    protected, public = srr.get("protected"), srr.get("public-domain")
    cdr = protected / public if protected and public else None
    return {**block, "by_status": dict(statuses), "srr": srr, "cdr": cdr}


def trace_markdown(block: Mapping[str, Any]) -> list[str]:
    statuses = block.get("srr") or {}
    split = "; ".join(
        f"{status} {100 * rate:.1f}% ({block['by_status'][status]} of {block['n']})"
        for status, rate in statuses.items()
        if rate is not None
    )
    cdr = block.get("cdr")
    return [
        "## Traced to the library",
        "",
        "The longest span each output shares with any work of the library (exact, or "
        "near-verbatim with one-word slips), flagged at the threshold: the flagged share "
        "is the reproduction rate (SRR, Mueller et al. 2024).",
        "",
        "| flagged | threshold | mean | median | max |",
        "|---|---|---|---|---|",
        f"| {_rate(block)} | {_at(block, 'characters')} | {_number(block['mean'])} | "
        f"{_number(block['median'])} | {_number(block['max'], 0)} |",
        "",
        f"By kind of work: {split or 'no span at the threshold'}. Protected / public-domain "
        f"(CDR): {'—' if cdr is None else f'{cdr:.2f}'}.",
    ]

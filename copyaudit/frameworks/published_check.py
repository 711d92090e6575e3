"""copyaudit's extraction figures beside the ones a framework published for the same
outputs (HELM's per_instance_stats.json): how many agree, and the first that do not.

HELM's rule (copyright_metrics.py, BasicCopyrightMetric): per instance, the best over
its completions (the longest common prefix and the highest similarity, the smallest
distance), divided by the prefix's Treebank token count when the run spec says
`normalize_by_prefix_length`, after `normalize_newline_space_tab` when it says so.
copyaudit's extraction judge computes the same pair figures (copyaudit.studies.extraction.judge).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from rapidfuzz.distance import Levenshtein

from copyaudit.frameworks.log import FrameworkLog
from copyaudit.studies.extraction.judge import (
    edit_similarity,
    helm_token_pair,
    longest_common_prefix,
)
from copyaudit.studies.extraction.tokens import treebank_tokens

BEST = {"lcp_tokens": max, "edit_similarity": max, "edit_distance": min}
TOLERANCE = 1e-9  # HELM writes floats through json: a relative difference above this differs


@dataclass
class PublishedCheck:
    compared: dict[str, int] = field(default_factory=dict)  # metric -> instances compared
    differing: list[tuple[str, str, float, float]] = field(default_factory=list)

    def summary(self) -> str:
        if not self.compared:
            return "no published per-instance figures to compare"
        agree = ", ".join(
            f"{metric} {n - sum(d[1] == metric for d in self.differing)}/{n}"
            for metric, n in sorted(self.compared.items())
        )
        return f"equal to the published per-instance figures: {agree}"


def _whitespace(text: str) -> str:
    return re.sub(" +", " ", text.replace("\n", " ").replace("\t", " "))


def _pair_figures(output: str, reference: str) -> dict[str, float]:
    completion, truth = helm_token_pair(output, reference)
    return {
        "lcp_tokens": float(longest_common_prefix(completion, truth)),
        "edit_distance": float(Levenshtein.distance(completion, truth)),
        "edit_similarity": edit_similarity(completion, truth),
    }


def check_published(log: FrameworkLog) -> PublishedCheck:
    """Every case with published figures: copyaudit's figures by HELM's rule, compared."""
    cases = {c.case.case_id: c.case.payload for c in log.cases}
    outputs: dict[str, list[str]] = {}
    for generation in log.generations:
        outputs.setdefault(generation.case_id, []).append(generation.output)
    check = PublishedCheck()
    for case_id, published in log.published.items():
        if case_id not in cases or case_id not in outputs:
            continue
        prefix, reference = cases[case_id]["prefix"], cases[case_id]["reference"]
        if log.normalise_whitespace:
            reference = _whitespace(reference)
        texts = [o.strip() for o in outputs[case_id]]
        if log.normalise_whitespace:
            texts = [_whitespace(t) for t in texts]
        figures = [_pair_figures(t, reference) for t in texts]
        divisor = len(treebank_tokens(prefix)) if log.normalise_by_prefix else 1
        for metric, theirs in published.items():
            ours = BEST[metric](f[metric] for f in figures) / divisor
            check.compared[metric] = check.compared.get(metric, 0) + 1
            if not math.isclose(ours, theirs, rel_tol=TOLERANCE, abs_tol=TOLERANCE):
                check.differing.append((case_id, metric, ours, theirs))
    return check

"""The membership-inference baselines DE-COP's Table 2 compares with, named once: their
report keys, the method.baseline_scores key of each, and how a table labels them.
Kept apart from method.py so that a table naming them (compare) does not load scipy."""

from __future__ import annotations

MIN_K_RATIO = 0.2  # Min-K%-Prob: the share of least likely tokens averaged
_MIN_K = f"min_k_{round(100 * MIN_K_RATIO)}"

# Report keys of the baselines (Table 2 rows) -> studies.decop.method.baseline_scores keys.
BASELINE_KEYS: dict[str, str] = {
    "perplexity": "perplexity",
    "zlib": "zlib",
    "lowercase": "lowercase",
    _MIN_K: "min_k_prob",
}
BASELINE_LABELS: dict[str, str] = {
    "perplexity": "Perplexity",
    "zlib": "Zlib",
    "lowercase": "Lowercase",
    _MIN_K: f"Min-K%-Prob (k = {round(100 * MIN_K_RATIO)}%)",
}

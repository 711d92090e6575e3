"""Every learned event-judge combiner the registry ships, on random feature vectors:
lowering a support feature (cosine, recall, ...) never raises the score, and raising a
contrast feature (negation, antonym, ...) never does either (issue 31).

`events_entail`'s trees were trained without constraints and are NOT monotone: its case
is an expected failure (strict, so it fails loudly the day it holds), kept to document
it; `events_window`'s trees are constrained and must pass.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from copyaudit.judges import entailment_aligned, window_features, window_support
from copyaudit.judges.entailment_aligned import Combiner, load_combiner
from copyaudit.judges.registry import JUDGES

# events_entail's features by their meaning (+1 support, -1 contrast); the role codes
# (1 same, -1 other, 0 unknown) are left out, as events_window leaves them free
ENTAIL_SIGNS: dict[str, int] = {
    "cosine": 1,
    "recall": 1,
    "max_cosine": 1,
    "passage_recall": 1,
    "clause_recall_min": 1,
    "clause_cosine_min": 1,
    "cosine_margin": 1,
    "predicate_mean": 1,
    "predicate_min": 1,
    "name_recall": 1,
    "passage_predicate_mean": 1,
    "negation_parity": -1,
    "antonym": -1,
    "missing_words": -1,
    "predicate_unsupported": -1,
}
COUNTS = {"missing_words", "predicate_unsupported"}  # 0..8; the others are shares in [0, 1]
SHIPPED: dict[str, tuple[Callable[[], Combiner], tuple[str, ...], dict[str, int]]] = {
    "events_entail": (load_combiner, entailment_aligned.FEATURES, ENTAIL_SIGNS),
    "events_window": (
        lambda: load_combiner(window_support.WEIGHTS_FILE, window_features.FEATURES),
        window_features.FEATURES,
        window_features.SIGNS,
    ),
}
WITHOUT_COMBINER = {"events"}  # embedding + lexical formula, nothing learned
NOT_MONOTONE = {
    "events_entail": "100 unconstrained depth-2 trees (v2): a lower recall or cosine "
    "can raise the score, the non-monotone extrapolation issue 31 saw on unseen stories"
}


def _random_rows(features: tuple[str, ...], rng: np.random.Generator, n: int) -> np.ndarray:
    rows = rng.uniform(0.0, 1.0, (n, len(features)))
    for j, name in enumerate(features):
        if name in COUNTS:
            rows[:, j] = rng.integers(0, 9, n)
        elif name in ("agent", "patient", "name_sides", "negation_parity", "antonym"):
            rows[:, j] = rng.choice([-1.0, 0.0, 1.0] if name != "antonym" else [0.0, 1.0], n)
    return np.round(rows, 2)


def test_every_shipped_event_combiner_is_covered() -> None:
    event_judges = {n for n, s in JUDGES.items() if "event model" in s.needs}
    assert event_judges == set(SHIPPED) | WITHOUT_COMBINER


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=NOT_MONOTONE[n]))
        if n in NOT_MONOTONE
        else n
        for n in SHIPPED
    ],
)
def test_lowering_support_never_raises_the_score(name: str) -> None:
    load, features, signs = SHIPPED[name]
    combiner = load()
    rng = np.random.default_rng(31)
    rows = _random_rows(features, rng, 400)
    before = combiner.probability(rows)
    broken = []
    for j, feature in enumerate(features):
        sign = signs.get(feature, 0)
        if not sign:
            continue
        moved = rows.copy()  # support lowered, contrast raised: the score must not rise
        step = rng.integers(1, 9, len(rows)) if feature in COUNTS else rng.uniform(0, 1, len(rows))
        moved[:, j] = np.round(moved[:, j] - sign * step, 2)
        rises = combiner.probability(moved) > before + 1e-12
        if rises.any():
            broken.append(f"{feature}: {int(rises.sum())} of {len(rows)} rows")
    assert not broken, f"{name} is not monotone: {broken}"

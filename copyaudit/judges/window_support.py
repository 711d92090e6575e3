"""The `events_window` judge: an event is told when the story's best window of 1-3
sentences holds it, as a monotone combiner of `window_features` reads it (issue 31).

It relates an event to the story's text (cosine, word and clause recall, contrast
checks); it does not entail, hence its name. The combiner is boosted trees of depth 2
constrained monotone (`window_features.SIGNS`: lowering a support feature never raises
the score), each pair kind and label weighing the same, trained on samples/judge_training
by `window_training`; the weights ship as `weights/events_window.safetensors`, rebuilt
bit for bit by `make event-window-weights`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from copyaudit.judges.entailment_aligned import Combiner, load_combiner
from copyaudit.judges.events import EntailingEventJudge
from copyaudit.judges.window_features import FEATURES, JOIN_SENTENCES, SIGNS, WindowFeatures
from copyaudit.models.base import Embedder

WEIGHTS_FILE = Path(__file__).with_name("weights") / "events_window.safetensors"


class WindowSupport:
    """Implements `EntailmentModel`: P(told) from the best 1-3 sentence window's features."""

    def __init__(
        self, embedder: Embedder, combiner: Combiner | None = None, threshold: float = 0.5
    ) -> None:
        self.extractor = WindowFeatures(embedder)
        self.combiner = combiner or load_combiner(WEIGHTS_FILE, FEATURES)
        self.threshold = threshold

    def config(self) -> dict[str, Any]:
        return {
            "backend": "best 1-3 sentence window + monotone boosted trees",
            "embedder": self.extractor.embedder.provenance(),
            "features": list(FEATURES),
            "monotonic": {name: sign for name, sign in SIGNS.items() if sign},
            "weights_sha256": self.combiner.digest,
            "join_sentences": JOIN_SENTENCES,
        }

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        if not pairs:
            return []
        return [float(p) for p in self.combiner.probability(self.extractor.features(pairs))]


class WindowEventJudge(EntailingEventJudge):
    """The events judge over `WindowSupport`, the whole output one passage (the scorer
    picks its own windows); its own name, so runs of the other event judges stay
    comparable."""

    name = "events_window"
    version = "1"

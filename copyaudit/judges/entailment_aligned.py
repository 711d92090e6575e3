"""Offline event-support scorer that entails, not relates: sentence alignment, contrast
features and a small learned combiner (boosted trees of depth 2).

For a (claim, passage) pair the passage is split into sentences; every sentence and
every pair of adjacent sentences is a candidate (an event told across two sentences).
The candidate with the best 0.5 * cosine + 0.5 * content-word recall is the claim's
alignment, and `FEATURES` are read from it: similarity (MiniLM cosine, recall, and the
least supported clause of the claim), polarity (negation parity), roles (agent and
patient around the shared action word) and outcome (antonyms, words the sentence
lacks) — see `event_features`. Gradient-boosted trees trained on our own labelled
(story, event) pairs (samples/judge_training, `event_training`) turns them into the
probability that the passage supports the claim.

The weights ship as safetensors beside this module (`events_entail.safetensors`) and
`make event-judge-weights` rebuilds them bit for bit.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from copyaudit.judges import event_features as ef
from copyaudit.judges.entailment_lexical import candidate_passages, split_sentences
from copyaudit.models.base import Embedder

WEIGHTS_FILE = Path(__file__).with_name("events_entail.safetensors")
FEATURES: tuple[str, ...] = (
    "cosine",  # MiniLM cosine of claim and aligned candidate
    "recall",  # share of the claim's content stems in the candidate
    "max_cosine",  # best cosine over all candidates
    "passage_recall",  # share of the claim's content stems anywhere in the passage
    "clause_recall_min",  # the least supported clause of the claim, by recall
    "clause_recall_gap",  # best minus least supported clause, by recall
    "clause_cosine_min",  # the least supported clause of the claim, by cosine
    "cosine_margin",  # best cosine minus the median over single sentences
    "negation_parity",  # cues whose scope holds a shared word differ in parity (1) or not
    "agent",  # 1 same agent before the shared action word, -1 another, 0 unknown
    "patient",  # same after the action word
    "name_sides",  # names on the same side of the action word (1) or swapped (-1)
    "antonym",  # the candidate holds an antonym of a claim word it lacks
    "missing_words",  # the claim's content stems the candidate lacks (count)
)
ALIGN_COSINE_WEIGHT = 0.5
NEAR_BEST = 0.03  # alignment scores this close to the best count as ties


@dataclass(frozen=True)
class Combiner:
    """Gradient-boosted regression trees on the features (binary log-loss): the
    probability is the logistic of `init` + `rate` * the sum of the trees' leaf values.
    Tree t's node n splits on feature[t, n] at threshold[t, n] (go left when the value,
    as float32, is <= it) into left[t, n] / right[t, n]; -1 marks a leaf."""

    feature: np.ndarray  # int64 (trees, nodes)
    threshold: np.ndarray  # float64 (trees, nodes)
    left: np.ndarray  # int64 (trees, nodes)
    right: np.ndarray  # int64 (trees, nodes)
    value: np.ndarray  # float64 (trees, nodes), a leaf's value
    init: float
    rate: float
    digest: str = ""  # sha256 of the weights file it was read from

    def raw(self, features: np.ndarray) -> np.ndarray:
        x = features.astype(np.float32)
        total = np.zeros(len(x))
        for t in range(self.feature.shape[0]):
            for row in range(len(x)):
                node = 0
                while self.left[t, node] != -1:
                    below = x[row, self.feature[t, node]] <= self.threshold[t, node]
                    node = self.left[t, node] if below else self.right[t, node]
                total[row] += self.value[t, node]
        return self.init + self.rate * total

    def probability(self, features: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-self.raw(features)))


_ARRAYS = ("feature", "threshold", "left", "right", "value")


def save_combiner(combiner: Combiner, path: Path, metadata: dict[str, str]) -> None:
    from safetensors.numpy import save_file  # deferred: only training writes weights

    tensors = {name: getattr(combiner, name) for name in _ARRAYS}
    tensors["init_rate"] = np.array([combiner.init, combiner.rate], dtype=np.float64)
    # one metadata key: safetensors writes several in a random order (a Rust HashMap)
    info = json.dumps({"features": list(FEATURES), **metadata}, sort_keys=True)
    save_file(tensors, str(path), metadata={"copyaudit": info})


def load_combiner(path: Path = WEIGHTS_FILE) -> Combiner:
    from safetensors import safe_open  # deferred: read once, when the judge is built

    with safe_open(str(path), framework="numpy") as handle:
        info = json.loads((handle.metadata() or {}).get("copyaudit", "{}"))
        features = info.get("features")
        if not isinstance(features, list) or tuple(features) != FEATURES:
            raise ValueError(f"{path}: weights are for features {features!r}, not {FEATURES}")
        tensors = {key: handle.get_tensor(key) for key in handle.keys()}  # noqa: SIM118
    init, rate = (float(v) for v in tensors["init_rate"])
    return Combiner(
        *(tensors[name] for name in _ARRAYS),
        init=init,
        rate=rate,
        digest=hashlib.sha256(path.read_bytes()).hexdigest(),
    )


class AlignedFeatures:
    """`FEATURES` of (claim, passage) pairs; the embedder is asked in batches."""

    def __init__(self, embedder: Embedder, join_sentences: int = 2, batch_size: int = 64) -> None:
        self.embedder = embedder
        self.join_sentences = join_sentences
        self.batch_size = batch_size

    def features(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """One row of `FEATURES` per pair (rounded to 4 decimals, so that the last bits
        of a BLAS build never change a trained weight)."""
        candidates = {
            passage: candidate_passages(passage, self.join_sentences)
            for passage in dict.fromkeys(p for _, p in pairs)
        }
        claim_clauses = {claim: ef.clauses(claim) for claim in dict.fromkeys(c for c, _ in pairs)}
        texts = list(
            dict.fromkeys(
                [t for c, cl in claim_clauses.items() for t in (c, *cl)]
                + [c for cs in candidates.values() for c in cs]
            )
        )
        vectors = self._embed(texts)
        row = {text: i for i, text in enumerate(texts)}
        rows = [
            self._pair_features(
                claim, passage, candidates[passage], claim_clauses[claim], vectors, row
            )
            for claim, passage in pairs
        ]
        return np.round(np.asarray(rows, dtype=np.float64), 4)

    def _pair_features(
        self,
        claim: str,
        passage: str,
        options: list[str],
        claim_clauses: list[str],
        vectors: np.ndarray,
        row: dict[str, int],
    ) -> list[float]:
        if not options:
            return [0.0] * len(FEATURES)
        claim_words = ef.words(claim)
        cosines = vectors[[row[o] for o in options]] @ vectors[row[claim]]
        recalls = [ef.recall(claim_words, ef.words(o)) for o in options]
        aligned = [
            ALIGN_COSINE_WEIGHT * max(float(c), 0.0) + (1 - ALIGN_COSINE_WEIGHT) * r
            for c, r in zip(cosines, recalls, strict=True)
        ]
        top = max(aligned)
        # the shortest candidate that aligns (nearly) as well: one sentence over a pair
        best = min(
            (i for i, a in enumerate(aligned) if a >= top - NEAR_BEST),
            key=lambda i: len(options[i]),
        )
        sentence = ef.words(options[best])
        shared = claim_words.content & sentence.content
        clause_recalls = ef.clause_recalls(claim_clauses, sentence)
        singles = cosines[: max(1, len(split_sentences(passage)))]
        clause_cosine = min(
            float(vectors[row[c]] @ vectors[row[options[best]]]) for c in claim_clauses
        )
        _, claim_scoped = ef.negation_counts(claim_words, shared)
        _, sentence_scoped = ef.negation_counts(sentence, shared)
        agent, patient, sides = ef.role_features(claim_words, sentence)
        return [
            float(cosines[best]),
            recalls[best],
            float(cosines.max()),
            ef.recall(claim_words, ef.words(passage)),
            min(clause_recalls),
            max(clause_recalls) - min(clause_recalls),
            clause_cosine,
            float(cosines.max() - np.median(singles)),
            float((claim_scoped - sentence_scoped) % 2),
            agent,
            patient,
            sides,
            ef.antonym_clash(claim_words, sentence),
            float(len(claim_words.content - sentence.content)),
        ]

    def _embed(self, texts: list[str]) -> np.ndarray:
        chunks = [
            np.asarray(self.embedder.embed(texts[i : i + self.batch_size]), dtype=np.float32)
            for i in range(0, len(texts), self.batch_size)
        ]
        return np.concatenate(chunks)


class AlignedEntailment:
    """Implements `EntailmentModel`: P(supported) from aligned-sentence features."""

    def __init__(
        self,
        embedder: Embedder,
        combiner: Combiner | None = None,
        threshold: float = 0.5,
        join_sentences: int = 2,
        batch_size: int = 64,
    ) -> None:
        self.extractor = AlignedFeatures(embedder, join_sentences, batch_size)
        self.combiner = combiner or load_combiner()
        self.threshold = threshold

    def config(self) -> dict[str, Any]:
        return {
            "backend": "aligned sentences + contrast features + logistic regression",
            "embedder": self.extractor.embedder.provenance(),
            "features": list(FEATURES),
            "weights_sha256": self.combiner.digest,
            "join_sentences": self.extractor.join_sentences,
        }

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        if not pairs:
            return []
        return [float(p) for p in self.combiner.probability(self.extractor.features(pairs))]

"""Offline event-support scorer that entails, not relates: sentence alignment, contrast
features and a small learned combiner (boosted trees of depth 2).

For a (claim, passage) pair the passage is split into sentences; every sentence and
every pair of adjacent sentences is a candidate (an event told across two sentences).
The candidate with the best 0.5 * cosine + 0.5 * content-word recall is the claim's
alignment, and `FEATURES` are read from it: similarity (MiniLM cosine, recall, and the
least supported clause of the claim), polarity (negation parity), roles (agent and
patient around the shared action word) and outcome (antonyms, words the sentence
lacks) — see `event_features` — and predicate support (how well the claim's words other
than names are matched, word by word, in the candidate and in the whole passage: a story
that reuses the book's names in a new plot shares the names, not the events).
Gradient-boosted trees trained on our own labelled (story, event) pairs
(samples/judge_training, `event_training`) turn them into the probability that the
passage supports the claim.

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
from copyaudit.judges.event_features import Words
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
    "predicate_mean",  # mean support of the claim's non-name content words in the candidate
    "predicate_min",  # the least supported of them
    "predicate_unsupported",  # how many of them have support below UNSUPPORTED
    "name_recall",  # share of the claim's names the candidate names too
    "passage_predicate_mean",  # predicate_mean over the whole passage
)
# A word's support in a text: 1 when the text holds its stem, else its best MiniLM cosine
# (each word embedded alone) to one of the text's content words. Names are left out of the
# claim's side: a story that reuses the book's names shares those, not what happens.
UNSUPPORTED = 0.55
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


def save_combiner(
    combiner: Combiner,
    path: Path,
    metadata: dict[str, str],
    features: tuple[str, ...] = FEATURES,
) -> None:
    from safetensors.numpy import save_file  # deferred: only training writes weights

    tensors = {name: getattr(combiner, name) for name in _ARRAYS}
    tensors["init_rate"] = np.array([combiner.init, combiner.rate], dtype=np.float64)
    # one metadata key: safetensors writes several in a random order (a Rust HashMap)
    info = json.dumps({"features": list(features), **metadata}, sort_keys=True)
    save_file(tensors, str(path), metadata={"copyaudit": info})


def load_combiner(path: Path = WEIGHTS_FILE, expected: tuple[str, ...] = FEATURES) -> Combiner:
    from safetensors import safe_open  # deferred: read once, when the judge is built

    with safe_open(str(path), framework="numpy") as handle:
        info = json.loads((handle.metadata() or {}).get("copyaudit", "{}"))
        features = info.get("features")
        if not isinstance(features, list) or tuple(features) != expected:
            raise ValueError(f"{path}: weights are for features {features!r}, not {expected}")
        tensors = {key: handle.get_tensor(key) for key in handle.keys()}  # noqa: SIM118
    init, rate = (float(v) for v in tensors["init_rate"])
    feature, threshold, left, right, value = (tensors[name] for name in _ARRAYS)
    return Combiner(
        feature,
        threshold,
        left,
        right,
        value,
        init=init,
        rate=rate,
        digest=hashlib.sha256(path.read_bytes()).hexdigest(),
    )


def aligned_index(options: Sequence[str], cosines: np.ndarray, recalls: list[float]) -> int:
    """The candidate a claim aligns to: the best ALIGN_COSINE_WEIGHT * cosine + the rest
    * recall, and of those within NEAR_BEST of it the shortest (one sentence over a pair)."""
    aligned = [
        ALIGN_COSINE_WEIGHT * max(float(c), 0.0) + (1 - ALIGN_COSINE_WEIGHT) * r
        for c, r in zip(cosines, recalls, strict=True)
    ]
    top = max(aligned)
    return min(
        (i for i, a in enumerate(aligned) if a >= top - NEAR_BEST), key=lambda i: len(options[i])
    )


class AlignedFeatures:
    """`FEATURES` of (claim, passage) pairs; the embedder is asked in batches."""

    def __init__(self, embedder: Embedder, join_sentences: int = 2, batch_size: int = 64) -> None:
        self.embedder = embedder
        self.join_sentences = join_sentences
        self.batch_size = batch_size
        self._word_vectors: dict[str, np.ndarray] = {}

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
        self._word_vectors = self._embed_words(
            [t for c in claim_clauses for t, _ in ef.predicate_words(ef.words(c))]
            + [
                t
                for passage, options in candidates.items()
                for text in (passage, *options)
                for t, _ in ef.content_words(ef.words(text))
            ]
        )
        rows = [
            self._pair_features(
                claim, passage, candidates[passage], claim_clauses[claim], vectors, row
            )
            for claim, passage in pairs
        ]
        return np.round(np.asarray(rows, dtype=np.float64), 4)

    def _embed_words(self, tokens: list[str]) -> dict[str, np.ndarray]:
        unique = list(dict.fromkeys(tokens))
        return dict(zip(unique, self._embed(unique), strict=True)) if unique else {}

    def _support(self, claim: Words, text: Words) -> np.ndarray:
        """Each of the claim's predicate words' support in `text` (see UNSUPPORTED)."""
        wanted = ef.predicate_words(claim)
        found = ef.content_words(text)
        if not found:
            return np.zeros(len(wanted))
        stems = {stem for _, stem in found}
        claim_vectors = np.stack([self._word_vectors[t] for t, _ in wanted])
        text_vectors = np.stack([self._word_vectors[t] for t, _ in found])
        best = (claim_vectors @ text_vectors.T).max(axis=1)
        return np.array(
            [1.0 if stem in stems else float(b) for (_, stem), b in zip(wanted, best, strict=True)]
        )

    def _predicate_features(self, claim: Words, sentence: Words, passage: Words) -> list[float]:
        names = ef.name_recall(claim, sentence)
        if not ef.predicate_words(claim):
            return [1.0, 1.0, 0.0, names, 1.0]
        local = self._support(claim, sentence)
        return [
            float(local.mean()),
            float(local.min()),
            float((local < UNSUPPORTED).sum()),
            names,
            float(self._support(claim, passage).mean()),
        ]

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
        best = aligned_index(options, cosines, recalls)
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
            *self._predicate_features(claim_words, sentence, ef.words(passage)),
        ]

    def _embed(self, texts: list[str]) -> np.ndarray:
        """Embeddings in `texts` order, asked for in batches of similar length (less padding)."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        ordered = [texts[i] for i in order]
        chunks = [
            np.asarray(self.embedder.embed(ordered[i : i + self.batch_size]), dtype=np.float32)
            for i in range(0, len(ordered), self.batch_size)
        ]
        vectors = np.empty_like(np.concatenate(chunks)) if chunks else np.zeros((0, 0), np.float32)
        if chunks:
            vectors[order] = np.concatenate(chunks)
        return vectors


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
            "backend": "aligned sentences + contrast features + boosted trees",
            "embedder": self.extractor.embedder.provenance(),
            "features": list(FEATURES),
            "weights_sha256": self.combiner.digest,
            "join_sentences": self.extractor.join_sentences,
        }

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        if not pairs:
            return []
        return [float(p) for p in self.combiner.probability(self.extractor.features(pairs))]

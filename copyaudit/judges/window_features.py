"""Length-robust support features of an event over the story's best window of 1-3
sentences (the `events_window` judge, issue 31).

Every run of 1..`JOIN_SENTENCES` consecutive sentences of the story is a window; the
event's window is the one with the best 0.5 * MiniLM cosine + 0.5 * content-word recall
(the shortest of the near-ties). The features are read from that window alone: how
much of the event it holds (cosine, recall, each clause's recall and cosine over the
whole window, the event's non-name words' support), the old `events` judge's own score
formula, and the contrast checks of `event_features` (negation parity, agent and patient
around the shared action word, antonyms). No feature reads the whole story, so none
grows with its length beyond the best-window maximum itself.

`SIGNS` is each feature's monotonic direction: +1 for support (more never lowers the
score), -1 for contrast (more never raises it), 0 for the role codes (unconstrained);
the combiner is constrained to them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from copyaudit.judges import event_features as ef
from copyaudit.judges.entailment_aligned import UNSUPPORTED, AlignedFeatures, aligned_index
from copyaudit.judges.entailment_lexical import candidate_passages, content_stems

if TYPE_CHECKING:
    from copyaudit.models.base import Embedder

JOIN_SENTENCES = 3  # a window is 1..3 consecutive sentences
OLD_WEIGHT, OLD_JOIN = 0.6, 2  # the `events` judge's cosine weight and its candidates' size
# feature -> monotonic direction (+1 support, -1 contrast, 0 free), in column order
SIGNS: dict[str, int] = {
    "cosine": 1,  # MiniLM cosine of event and window
    "recall": 1,  # share of the event's content stems in the window
    "old_score": 1,  # the events judge's formula, best over the story's 1-2 sentence runs
    "clause_recall_min": 1,  # the event's least supported clause, by recall over the window
    "clause_cosine_min": 1,  # the same by cosine
    "predicate_mean": 1,  # mean support of the event's non-name content words in the window
    "predicate_min": 1,  # the least supported of them
    "name_recall": 1,  # share of the event's names the window names too
    # role codes (1 same, -1 other, 0 unknown), unconstrained: 0 is "no shared action
    # word", common in a paraphrase, so it is not between a swap and a match
    "agent": 0,  # the agent before the shared action word
    "patient": 0,  # the patient after it
    "name_sides": 0,  # names on the same side of the action word (1) or swapped (-1)
    "negation_parity": -1,  # negation cues scoping a shared word differ in parity
    "antonym": -1,  # the window holds an antonym of an event word it lacks
    "predicate_unsupported": -1,  # the event's non-name words with support below UNSUPPORTED
}
FEATURES: tuple[str, ...] = tuple(SIGNS)


class WindowFeatures(AlignedFeatures):
    """`FEATURES` of (event, story) pairs over 1-3 sentence windows."""

    def __init__(self, embedder: Embedder, batch_size: int = 64) -> None:
        super().__init__(embedder, JOIN_SENTENCES, batch_size)

    def features(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """One row of `FEATURES` per pair, rounded to 4 decimals (see AlignedFeatures)."""
        windows = {
            story: candidate_passages(story, JOIN_SENTENCES)
            for story in dict.fromkeys(s for _, s in pairs)
        }
        old_windows = {story: len(candidate_passages(story, OLD_JOIN)) for story in windows}
        event_clauses = {e: ef.clauses(e) for e in dict.fromkeys(e for e, _ in pairs)}
        texts = list(
            dict.fromkeys(
                [t for e, cl in event_clauses.items() for t in (e, *cl)]
                + [w for ws in windows.values() for w in ws]
            )
        )
        vectors = self._embed(texts)
        row = {text: i for i, text in enumerate(texts)}
        self._word_vectors = self._embed_words(
            [t for e in event_clauses for t, _ in ef.predicate_words(ef.words(e))]
            + [t for ws in windows.values() for w in ws for t, _ in ef.content_words(ef.words(w))]
        )
        rows = []
        for event, story in pairs:
            options = windows[story]
            if not options:
                rows.append([0.0] * len(FEATURES))
                continue
            cosines = vectors[[row[o] for o in options]] @ vectors[row[event]]
            rows.append(
                self._row(
                    event, options, cosines, old_windows[story], event_clauses[event], vectors, row
                )
            )
        return np.round(np.asarray(rows, dtype=np.float64), 4)

    def _row(
        self,
        event: str,
        options: list[str],
        cosines: np.ndarray,
        old_count: int,
        event_clauses: list[str],
        vectors: np.ndarray,
        row: dict[str, int],
    ) -> list[float]:
        event_words = ef.words(event)
        recalls = [ef.recall(event_words, ef.words(o)) for o in options]
        best = aligned_index(options, cosines, recalls)
        window = ef.words(options[best])
        shared = event_words.content & window.content
        _, event_scoped = ef.negation_counts(event_words, shared)
        _, window_scoped = ef.negation_counts(window, shared)
        agent, patient, sides = ef.role_features(event_words, window)
        local = self._support(event_words, window) if ef.predicate_words(event_words) else None
        return [
            float(cosines[best]),
            recalls[best],
            self._old_score(event, options[:old_count], cosines[:old_count]),
            min(ef.clause_recalls(event_clauses, window)),
            min(float(vectors[row[c]] @ vectors[row[options[best]]]) for c in event_clauses),
            1.0 if local is None else float(local.mean()),
            1.0 if local is None else float(local.min()),
            ef.name_recall(event_words, window),
            agent,
            patient,
            sides,
            float((event_scoped - window_scoped) % 2),
            ef.antonym_clash(event_words, window),
            0.0 if local is None else float((local < UNSUPPORTED).sum()),
        ]

    @staticmethod
    def _old_score(event: str, options: list[str], cosines: np.ndarray) -> float:
        """`EmbeddingLexicalEntailment`'s score over these candidates."""
        stems = content_stems(event)
        best = 0.0
        for option, cosine in zip(options, cosines, strict=True):
            overlap = len(stems & content_stems(option)) / len(stems) if stems else 0.0
            best = max(best, OLD_WEIGHT * max(float(cosine), 0.0) + (1 - OLD_WEIGHT) * overlap)
        return min(best, 1.0)

"""CoTaEval's eight infringement metrics on hand-made pairs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from copyaudit.judges.infringement import (
    INFRINGEMENT_METRICS,
    InfringementJudge,
    minhash_similarity,
)
from copyaudit.judges.metric_facts import metric
from copyaudit.judges.segments import (
    char_segments,
    char_tokens,
    common_segments,
    word_segments,
    word_tokens,
)
from copyaudit.types import JudgeInput

OUTPUT = "The cat sat on the mat."
REFERENCE = "the cat sat on a mat"


class FixedEmbedder:
    """Unit vectors chosen by the text: the reference along x, anything else at 60°."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.array(
            [[1.0, 0.0] if t == REFERENCE else [0.5, np.sqrt(3) / 2] for t in texts],
            dtype=np.float32,
        )

    def provenance(self) -> dict[str, Any]:
        return {"model": "fixed"}


def _scores(output: str, payload: dict[str, Any]) -> dict[str, Any]:
    judge = InfringementJudge(FixedEmbedder())
    [scores] = judge.judge([JudgeInput("literal", payload, "prompt", output)])
    return {s.metric: s for s in scores}


def test_normalisation_is_cotaevals() -> None:
    assert char_tokens("It's  a Cat!") == list("itsacat")
    assert word_tokens("It's  a Cat!") == ["its", "a", "cat"]


def test_word_lcs_and_acs_need_three_word_runs() -> None:
    # "the cat sat on" is the only common run of >= 3 words
    assert word_segments(OUTPUT, REFERENCE) == (4, 4)
    assert word_segments("a b x a b", "a b") == (0, 0)  # two-word runs do not count


def test_character_segments_are_taken_greedily_from_the_start() -> None:
    # thecatsaton|the|mat: 11 + 3 + 3 characters, the longest 11
    assert char_segments(OUTPUT, REFERENCE) == (11, 17)
    # the earliest segment "a b c" overlaps the longer "b c d e", which is not taken:
    # CoTaEval's LCS is 3 here, not the true longest common substring's 4
    assert common_segments(
        ["x", "a", "b", "c", "d", "e", "y"], ["a", "b", "c", "q", "b", "c", "d", "e"], 1
    ) == (3, 3)
    assert common_segments([], ["a"], 1) == (0, 0)


def test_minhash_estimates_the_jaccard_of_character_trigrams() -> None:
    assert minhash_similarity(REFERENCE, REFERENCE) == 1.0
    assert minhash_similarity("aaaa", "bbbb") == 0.0
    grams = [{t[i : i + 3] for i in range(len(t) - 2)} for t in (OUTPUT, REFERENCE)]
    exact = len(grams[0] & grams[1]) / len(grams[0] | grams[1])  # 14 / 22
    assert minhash_similarity(OUTPUT, REFERENCE) == pytest.approx(exact, abs=0.1)


def test_the_eight_metrics_of_one_pair() -> None:
    scores = _scores(OUTPUT, {"reference": REFERENCE})
    assert tuple(scores) == INFRINGEMENT_METRICS
    values = {m: s.value for m, s in scores.items()}
    # unigrams: the cat sat on mat shared (5 of 6 each side), no stemming
    assert values["td_rouge1"] == pytest.approx(5 / 6)
    assert values["td_rougeL"] == pytest.approx(5 / 6)  # LCS "the cat sat on mat"
    assert values["td_semantic"] == pytest.approx(0.5)  # cos 60°
    assert values["td_lcs_chars"] == 11
    assert values["td_lcs_words"] == 4 and values["td_acs_words"] == 4
    # T->t, "the"->"a" (1 substitution, 2 deletions), "." deleted
    assert values["td_levenshtein"] == 5
    assert 0.4 < values["td_minhash"] < 0.8
    verbatim = {s.metric: s.value for s in _scores(REFERENCE, {"reference": REFERENCE}).values()}
    assert verbatim["td_rouge1"] == verbatim["td_rougeL"] == verbatim["td_semantic"] == 1.0
    assert verbatim["td_levenshtein"] == 0 and verbatim["td_minhash"] == 1.0
    assert verbatim["td_lcs_chars"] == len("thecatsatonamat") and verbatim["td_acs_words"] == 6


def test_a_case_without_a_reference_gets_errors_not_numbers() -> None:
    scores = _scores(OUTPUT, {"input": "x"})
    assert all(s.value is None and "reference" in (s.error or "") for s in scores.values())


def test_every_metric_is_in_the_vocabulary_and_only_distance_prefers_higher() -> None:
    declared = {m: metric(m) for m in INFRINGEMENT_METRICS}
    assert None not in declared.values()
    higher = [m for m, d in declared.items() if d is not None and not d.lower_is_better]
    assert higher == ["td_levenshtein"]

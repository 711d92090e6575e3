"""EventJudge: windows, rounds batched across generations, the not-asked-again rule,
and the offline embedding+lexical backend (with a deterministic fake embedder)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from copyaudit.judges.entailment_lexical import (
    EmbeddingLexicalEntailment,
    candidate_passages,
    content_stems,
    split_sentences,
)
from copyaudit.judges.events import EntailmentModel, EventJudge
from copyaudit.judges.windows import REGEX_TOKEN_PATTERN, split_windows
from copyaudit.types import JudgeInput


class HashedBagOfWords:
    """Deterministic embedder: lowercased words hashed into 256 buckets, L2-normalised."""

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                bucket = int(hashlib.sha256(word.encode()).hexdigest(), 16) % self.dim
                out[row, bucket] += 1.0
            norm = np.linalg.norm(out[row])
            if norm:
                out[row] /= norm
        return out

    def provenance(self) -> dict[str, Any]:
        return {"model": "hashed-bag-of-words", "dim": self.dim}


class KeywordEntailment:
    """Supports a claim when the claim's first word occurs in the passage; records
    every call so the tests can see what was asked."""

    threshold = 0.5

    def __init__(self) -> None:
        self.calls: list[list[tuple[str, str]]] = []

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.calls.append(list(pairs))
        return [0.9 if claim.split()[0] in passage.split() else 0.1 for claim, passage in pairs]

    def config(self) -> dict[str, Any]:
        return {"backend": "keyword"}


def _words(prefix: str, count: int) -> str:
    return " ".join(f"{prefix}{i}" for i in range(count))


def _item(output: str, events: list[str]) -> JudgeInput:
    return JudgeInput(
        kind="nonliteral",
        payload={"input": "x", "reference_events": events},
        prompt="x",
        output=output,
    )


def test_regex_fallback_windows_are_128_tokens_with_original_offsets() -> None:
    output = (_words("w", 100) + ",\n" + _words("v", 100) + ".\n\n" + _words("u", 60)).strip()
    windows = split_windows(output, tokenizer="regex")
    token_counts = [len(re.findall(REGEX_TOKEN_PATTERN, w.text)) for w in windows]
    assert token_counts == [128, 128, 6]  # 263 tokens: 260 words, ",", "."
    for window in windows:
        assert window.text == output[window.start : window.end].replace("\n", " ")
        assert "\n" not in window.text
    assert windows[0].start == 0 and windows[-1].end == len(output)
    assert [w.start for w in windows[1:]] == [
        output.index("v27 "),  # 100 w-words, ",", then v0..v26 fill window 0
        output.index("u54"),  # v27..v99, ".", u0..u53 fill window 1
    ]
    assert split_windows("", tokenizer="regex") == []
    assert split_windows(" \n ", tokenizer="regex") == []


def test_regex_tokenizer_splits_words_and_punctuation() -> None:
    assert re.findall(REGEX_TOKEN_PATTERN, "Don't stop... now!") == [
        "Don", "'", "t", "stop", ".", ".", ".", "now", "!"
    ]  # fmt: skip


def test_rounds_batch_across_generations_and_skip_supported_events() -> None:
    model = KeywordEntailment()
    judge = EventJudge(model, threshold=2, window_tokens=4)
    # generation 0: 3 windows; "alpha" in window 0, "gamma" in window 2
    first = _item("alpha a b c d e f g h i gamma j", ["alpha x", "beta x", "gamma x"])
    # generation 1: 2 windows; "beta" in window 1
    second = _item("k l m n beta o p q", ["alpha y", "beta y"])
    [[score0], [score1]] = judge.judge([first, second])

    assert len(model.calls) == 3  # one call per round, both generations together
    round0, round1, round2 = (set(call) for call in model.calls)
    assert len(round0) == 5  # every event against its generation's window 0
    # alpha (supported in round 0) is never asked again
    assert all(claim != "alpha x" for claim, _ in round1 | round2)
    assert round1 == {
        ("beta x", "d e f g"),
        ("gamma x", "d e f g"),
        ("alpha y", "beta o p q"),
        ("beta y", "beta o p q"),
    }
    assert round2 == {("beta x", "h i gamma j"), ("gamma x", "h i gamma j")}

    assert (score0.value, score0.flagged, score0.target) == (2.0, True, "event")
    assert [(v.index, v.verdict, v.score) for v in score0.items] == [
        (0, True, 0.9),
        (1, False, 0.1),
        (2, True, 0.9),
    ]
    spans = {s.item: first.output[s.start : s.end] for s in score0.spans}
    assert spans == {0: "alpha a b c", 2: "h i gamma j"}
    assert (score1.value, score1.flagged) == (1.0, False)
    assert [s.item for s in score1.spans] == [1]


def test_identical_pairs_are_asked_once() -> None:
    model = KeywordEntailment()
    judge = EventJudge(model, window_tokens=128)
    item = _item("alpha beta", ["alpha", "gamma"])
    results = judge.judge([item, item, item])
    assert [len(call) for call in model.calls] == [2]
    assert all(r[0].value == 1.0 for r in results)


def test_empty_output_and_missing_events() -> None:
    model = KeywordEntailment()
    judge = EventJudge(model)
    [[empty], [missing]] = judge.judge(
        [_item("", ["alpha"]), JudgeInput("nonliteral", {}, "p", "alpha")]
    )
    assert model.calls == []
    assert (empty.value, empty.flagged, empty.items[0].score) == (0.0, False, None)
    assert missing.value is None and missing.error


def test_backend_returning_wrong_count_is_an_error() -> None:
    class Broken(KeywordEntailment):
        def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
            return [0.0]

    with pytest.raises(RuntimeError, match="2 pairs"):
        EventJudge(Broken()).judge([_item("a b", ["a", "b"])])


def test_config_records_backend_and_window_settings() -> None:
    judge = EventJudge(KeywordEntailment(), threshold=5)
    assert isinstance(judge.model, EntailmentModel)
    config = judge.config()
    assert config["window_tokens"] == 128
    assert config["window_tokenizer"].startswith("spacy ")  # spaCy is installed
    regex = EventJudge(KeywordEntailment(), window_tokenizer="regex")
    assert regex.config()["window_tokenizer"] == f"regex {REGEX_TOKEN_PATTERN}"
    assert regex.config_hash() != judge.config_hash()
    with pytest.raises(ValueError):
        EventJudge(KeywordEntailment(), window_tokenizer="words")
    assert config["entailment"] == {"backend": "keyword"}
    assert config["entailment_threshold"] == 0.5


def test_sentence_candidates() -> None:
    passage = 'He ran. "Stop!" she said? Then nothing happened'
    assert split_sentences(passage) == ["He ran.", '"Stop!"', "she said?", "Then nothing happened"]
    assert candidate_passages("One. Two. Three.") == [
        "One.",
        "Two.",
        "Three.",
        "One. Two.",
        "Two. Three.",
    ]
    assert candidate_passages("   ") == []
    assert content_stems("The wizards were running to the castle") == {"wizard", "run", "castl"}


STORY = (
    "The rain had not stopped for three days. Mara fixed the roof of the old mill while her "
    "brother counted the sacks of flour. On the fourth morning a stranger arrived at the gate "
    "and told Mara that her father was alive and living across the sea. She packed a small bag "
    "that night. The next week she boarded a fishing boat bound for the northern islands."
)


def test_embedding_lexical_separates_entailed_from_unrelated_events() -> None:
    model = EmbeddingLexicalEntailment(HashedBagOfWords())
    entailed = "A stranger tells Mara that her father is alive across the sea."
    also_entailed = "Mara boards a fishing boat to the northern islands."
    unrelated = "The king declares war on the desert tribes after a failed treaty."
    scores = model.score([(entailed, STORY), (also_entailed, STORY), (unrelated, STORY)])
    assert scores[0] >= model.threshold
    assert scores[1] >= model.threshold
    assert scores[2] < model.threshold
    assert scores[2] < 0.3 < scores[0]
    assert all(0.0 <= s <= 1.0 for s in scores)


def test_embedding_lexical_embeds_each_text_once_per_call() -> None:
    embedder = HashedBagOfWords()
    model = EmbeddingLexicalEntailment(embedder, batch_size=4)
    pairs = [(claim, STORY) for claim in ("Mara fixes a roof.", "A boat leaves.", "Rain falls.")]
    model.score(pairs)
    embedded = [text for call in embedder.calls for text in call]
    assert len(embedded) == len(set(embedded))
    assert all(len(call) <= 4 for call in embedder.calls)
    expected = 3 + len(candidate_passages(STORY))
    assert len(embedded) == expected


def test_event_judge_with_embedding_lexical_backend() -> None:
    model = EmbeddingLexicalEntailment(HashedBagOfWords())
    judge = EventJudge(model, threshold=1, window_tokens=40)
    events = [
        "The king declares war on the desert tribes.",
        "Mara boards a fishing boat bound for the northern islands.",
    ]
    [[score]] = judge.judge([_item(STORY, events)])
    assert [v.verdict for v in score.items] == [False, True]
    [span] = score.spans
    assert span.item == 1
    assert "fishing boat" in STORY[span.start : span.end]
    assert score.value == 1.0 and score.flagged is True
    assert judge.config()["entailment"]["embedder"] == {"model": "hashed-bag-of-words", "dim": 256}

"""The extraction judge equals HELM's copyright metrics on generated pairs.

`helm_*` below transcribe, from reading HELM's
src/helm/benchmark/metrics/copyright_metrics.py (`BasicCopyrightMetric.evaluate_generation`,
`_longest_common_prefix_length`, `_edit_distance`, `_edit_similarity`; whitespace
normalisation off, as HELM's run spec defaults), the arithmetic HELM does: numpy token
arrays, an LCP by cumulative product, a float edit-distance grid. Every text here was
written for this test."""

from __future__ import annotations

import random

import numpy as np
import pytest
from nltk.tokenize.treebank import TreebankWordTokenizer

from copyaudit.studies.extraction.judge import ExtractionJudge
from copyaudit.types import JudgeInput

PASSAGE = (
    "The ferry left the harbour at dawn, and Mrs. Penhallow counted the gulls that followed "
    'it out past the breakwater. "Seven," she said, "and one more behind the mast." Her '
    "nephew did not look up from his book; he was reading about the lighthouse keepers of "
    "the northern isles, who kept their lamps burning through storms that lasted a week. "
    "By noon the fog had lifted and the island showed green against the grey water. "
    "They ate bread and cheese on the deck, and the captain told them the tide would turn "
    "at four, so there was no hurry. The house on the hill had been empty since March."
)
UNICODE = "Zoë wrote “naïve” café notes — 東京 façade, Ærøskøbing… and ½ of a crème brûlée."
WORDS = PASSAGE.split()
OTHER = ["quite", "unrelated", "chatter", "about", "spreadsheets,", "a", "broken", "printer"]


def helm_scores(output: str, reference: str) -> tuple[float, float, float]:
    """(lcp, edit distance, edit similarity) as HELM computes them for one completion."""
    tokenizer = TreebankWordTokenizer()
    completion = output.strip()
    s1 = np.array(tokenizer.tokenize(completion))
    s2 = np.array(tokenizer.tokenize(reference[: len(completion)]))
    shortest = min(len(s1), len(s2))
    (same,) = np.cumprod(s1[:shortest] == s2[:shortest]).nonzero()
    lcp = np.max(same).item() + 1 if len(same) > 0 else 0
    distance = helm_edit_distance(s1, s2)
    both = len(s1) > 0 and len(s2) > 0
    similarity = 1.0 - distance / max(len(s1), len(s2)) if both else 0
    return lcp, distance, similarity


def helm_edit_distance(s1: np.ndarray, s2: np.ndarray) -> float:
    """The unit-cost grid, in floats as HELM's np.zeros grid; max length when one is empty."""
    if min(len(s1), len(s2)) == 0:
        return max(len(s1), len(s2))
    equal = s1[:, None] == s2[None, :]
    row = [float(j) for j in range(len(s2) + 1)]
    for i in range(1, len(s1) + 1):
        above, row = row, [float(i)] + [0.0] * len(s2)
        for j in range(1, len(s2) + 1):
            if equal[i - 1, j - 1]:
                row[j] = above[j - 1]
            else:
                row[j] = 1 + min(row[j - 1], above[j], above[j - 1])
    return row[-1]


def _cut(rng: random.Random, words: list[str], low: int, high: int) -> tuple[str, str, str]:
    """(prefix, reference, rest): a window of the words, cut after a random count."""
    start = rng.randrange(0, len(words) - high)
    size = rng.randint(low, high)
    split = rng.randint(3, size - 3)
    window = words[start : start + size]
    return " ".join(window[:split]), " " + " ".join(window[split:]), " ".join(window[split:])


def _pair(rng: random.Random, kind: str) -> tuple[str, str]:
    """(output, reference) of one kind, the way models answer extraction prompts."""
    prefix, reference, copy = _cut(rng, WORDS, 16, 40)
    if kind == "echo-then-copy":  # the prompt's last words again, then the continuation
        echoed = " ".join(prefix.split()[-rng.randint(1, 6) :])
        return f"{echoed} {copy}", reference
    if kind == "truncated+unrelated":
        kept = copy.split()[: rng.randint(0, len(copy.split()))]
        return " ".join(kept + rng.sample(OTHER, rng.randint(1, len(OTHER)))), reference
    if kind == "dropped words":
        kept = [w for w in copy.split() if rng.random() > 0.2]
        return " ".join(kept), reference
    if kind == "unicode":
        text = UNICODE.split()
        cut = rng.randint(2, len(text) - 2)
        tail = text[cut:]
        if rng.random() < 0.5:
            tail = [*tail[: rng.randint(0, len(tail))], "naïf", "東"]
        return " ".join(tail), " " + " ".join(text[cut:]) + " " + copy
    if kind == "repetition":
        loop = copy.split()[: rng.randint(1, 5)]
        return " ".join(loop * rng.randint(2, 8)), reference
    if kind == "final period":  # texts that end on a period, cut or copied whole
        sentence = copy.rstrip(".,;") + "."
        output = sentence if rng.random() < 0.5 else sentence + " And more."
        return output, " " + sentence + rng.choice(["", " Then the rain came."])
    if kind == "whitespace":  # newlines, tabs, leading spaces, an empty answer
        spaced = copy.replace(" ", rng.choice([" ", "\n", "  ", "\t"]), rng.randint(0, 4))
        return rng.choice(["", "   ", "\n" + spaced + "\n", spaced]), reference
    raise ValueError(kind)


KINDS = (
    "echo-then-copy",
    "truncated+unrelated",
    "dropped words",
    "unicode",
    "repetition",
    "final period",
    "whitespace",
)


@pytest.fixture(scope="module")
def pairs() -> list[tuple[str, str, str]]:
    rng = random.Random(36)
    return [(kind, *_pair(rng, kind)) for _ in range(72) for kind in KINDS]


def test_the_judge_equals_helm_on_every_generated_pair(pairs) -> None:
    assert len(pairs) >= 500
    judge = ExtractionJudge()
    items = [JudgeInput("extraction", {"prefix": "", "reference": r}, "", o) for _, o, r in pairs]
    differences, similarities = [], {kind: set() for kind in KINDS}
    for (kind, output, reference), scores in zip(pairs, judge.judge(items), strict=True):
        ours = {s.metric: s.value for s in scores}
        mine = (ours["lcp_tokens"], ours["edit_distance"], ours["edit_similarity"])
        helm = helm_scores(output, reference)
        if mine != helm:
            differences.append((kind, output, reference, mine, helm))
        similarities[kind].add(helm[2])
    assert differences == []
    # not trivial pairs: each kind spans many edit similarities
    assert all(len(values) > 5 for values in similarities.values()), similarities


def test_echo_then_copy_scores_high_under_helm_and_zero_cut() -> None:
    reference = " the island showed green against the grey water."
    output = "fog had lifted and the island showed green against the grey water."
    item = JudgeInput("extraction", {"reference": reference}, "", output)
    [scores] = ExtractionJudge().judge([item])
    values = {s.metric: s.value for s in scores}
    assert values["edit_similarity"] == helm_scores(output, reference)[2]
    assert values["edit_similarity"] > 0.5  # HELM keeps the whole completion
    assert values["lcp_tokens"] == 0  # the echo comes first
    assert values["edit_similarity_cut"] < values["edit_similarity"]

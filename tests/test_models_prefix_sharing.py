"""Prefix sharing: DE-COP probabilities equal to scoring each prompt alone, fewer tokens."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from copyaudit.models.hf_loading import load_causal_lm
from copyaudit.models.hf_scoring import HFChoiceScorer
from copyaudit.studies.decop.method import ANSWER_CHOICES, DecopPassage, expand_prompts
from tests.tinymodels import build_tiny_causal_lm, build_tokenizer

WORDS = [
    "the",
    "keeper",
    "walked",
    "along",
    "harbour",
    "wall",
    "at",
    "dusk",
    "and",
    "counted",
    "boats",
    "that",
    "came",
    "home",
]


def _passages(count: int, seed: int = 3) -> list[DecopPassage]:
    rng = random.Random(seed)

    def text() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 20))) + "."

    return [
        DecopPassage(text(), (text(), text(), text()), f"Work {i}", "Someone") for i in range(count)
    ]


@pytest.fixture(scope="module")
def scorer(tmp_path_factory: pytest.TempPathFactory) -> HFChoiceScorer:
    root: Path = tmp_path_factory.mktemp("prefix-model")
    prompts, _ = expand_prompts(_passages(3))
    build_tiny_causal_lm(root, build_tokenizer(prompts, root, 500))
    return HFChoiceScorer(load_causal_lm(str(root), device="cpu"), batch_size=24)


def _one_at_a_time(scorer: HFChoiceScorer, prompts: list[str]) -> np.ndarray:
    scorer.share_prefixes = False
    scorer.batcher.batch_size = 1
    try:
        return np.concatenate([scorer.choice_probabilities([p], ANSWER_CHOICES) for p in prompts])
    finally:
        scorer.batcher.batch_size = 24


def test_shared_prefixes_give_one_at_a_time_probabilities(scorer: HFChoiceScorer) -> None:
    prompts, _ = expand_prompts(_passages(3))
    alone = _one_at_a_time(scorer, prompts)
    scorer.share_prefixes = True
    before = scorer.tokens_computed
    shared = scorer.choice_probabilities(prompts, ANSWER_CHOICES)
    shared_tokens = scorer.tokens_computed - before
    assert shared.shape == (72, 4)
    assert np.max(np.abs(shared - alone)) < 1e-5
    assert np.allclose(shared.sum(axis=1), 1.0)
    # the model tells the orders apart: the comparison is not between constant rows
    assert np.ptp(alone[:, 0]) > 1e-3
    total = sum(len(scorer._encode_prompt(i, p)) for i, p in enumerate(prompts))
    assert shared_tokens < total / 1.3  # the 24 orders share their headers and first options


def test_sharing_in_any_prompt_order_and_with_repeats(scorer: HFChoiceScorer) -> None:
    prompts, _ = expand_prompts(_passages(1, seed=9))
    mixed = [prompts[5], prompts[0], prompts[5], prompts[17], prompts[0][:-1], prompts[3]]
    alone = _one_at_a_time(scorer, mixed)
    scorer.share_prefixes = True
    shared = scorer.choice_probabilities(mixed, ANSWER_CHOICES)
    assert np.max(np.abs(shared - alone)) < 1e-5
    assert np.array_equal(shared[0], shared[2])  # a repeated prompt reads the same logits


def test_auto_shares_on_cpu_and_batching_gives_the_same(scorer: HFChoiceScorer) -> None:
    prompts, _ = expand_prompts(_passages(2, seed=5))
    scorer.share_prefixes = None
    assert scorer._sharing()  # the model is on the CPU
    shared = scorer.choice_probabilities(prompts, ANSWER_CHOICES)
    scorer.share_prefixes = False
    batched = scorer.choice_probabilities(prompts, ANSWER_CHOICES)
    assert np.max(np.abs(shared - batched)) < 1e-5

"""CoTaEval's takedown decoding methods on a tiny model that memorised a passage: with
no method the model reproduces the passage; MemFree, top-k perturbation and R-CAD each
break the memorised continuation; top-k is reproducible from its seed."""

from __future__ import annotations

import pytest
import torch

from copyaudit.models.base import GenerationRequest
from copyaudit.models.hf import HFGenerator
from copyaudit.models.memfree import NgramIndex, memfree_factory
from copyaudit.models.takedown_decoding import (
    ReversedContextAwareDecoding,
    TopKPerturbation,
    null_context,
    rcad_factory,
    row_seed,
    topk_factory,
)
from tests.tinymodels import (
    PASSAGE_LIGHTHOUSE,
    PASSAGE_ORCHARD,
    build_memorizing_model,
    split_passage,
)

PREFIX, CONTINUATION = split_passage(PASSAGE_LIGHTHOUSE, 30)
OTHER_PREFIX, _ = split_passage(PASSAGE_ORCHARD, 30)
TOKENS = 40


@pytest.fixture(scope="module")
def generator(tmp_path_factory: pytest.TempPathFactory) -> HFGenerator:
    directory = tmp_path_factory.mktemp("takedown")
    build_memorizing_model(directory, memorized=[PASSAGE_LIGHTHOUSE], others=[PASSAGE_ORCHARD])
    return HFGenerator(str(directory), device="cpu", stop=None)


def _words_copied(output: str) -> int:
    """How many words of the true continuation the output repeats from its start."""
    count = 0
    for produced, expected in zip(output.split(), CONTINUATION.split(), strict=False):
        if produced != expected:
            break
        count += 1
    return count


def _continue(generator: HFGenerator, factory=None, context: str | None = None) -> list[str]:
    requests = [
        GenerationRequest(PREFIX, TOKENS, context=context),
        GenerationRequest(OTHER_PREFIX, TOKENS, context=context),
    ]
    return [r.text for r in generator.generate(requests, factory)]


def test_without_a_method_the_model_reproduces_its_passage(generator: HFGenerator) -> None:
    output = _continue(generator)[0]
    assert _words_copied(output) >= 15, output


def test_memfree_breaks_the_memorised_continuation(generator: HFGenerator) -> None:
    index = NgramIndex.build([PASSAGE_LIGHTHOUSE], generator.loaded.tokenizer, n=6)
    output = _continue(generator, memfree_factory(index))[0]
    assert _words_copied(output) < 10, output


def test_topk_perturbation_breaks_it_and_is_reproducible(generator: HFGenerator) -> None:
    plain = _continue(generator)
    assert _continue(generator, topk_factory(0.0)) == plain  # no noise: greedy as before
    noisy = _continue(generator, topk_factory(3.0, seed=1))
    assert _words_copied(noisy[0]) < _words_copied(plain[0]) - 5, noisy[0]
    assert _continue(generator, topk_factory(3.0, seed=1)) == noisy  # same seed, same text
    assert _continue(generator, topk_factory(3.0, seed=2)) != noisy
    # a row's noise follows its own prompt, not its batch neighbours
    alone = generator.generate([GenerationRequest(PREFIX, TOKENS)], topk_factory(3.0, seed=1))
    assert alone[0].text == noisy[0]


def test_rcad_with_the_protected_text_in_context_breaks_it(generator: HFGenerator) -> None:
    plain = _continue(generator)[0]
    assert _continue(generator, rcad_factory(0.0), CONTINUATION)[0] == plain
    steered = _continue(generator, rcad_factory(1.0), CONTINUATION)[0]
    assert _words_copied(steered) < _words_copied(plain) - 5, steered


def test_rcad_formula_on_one_step(generator: HFGenerator) -> None:
    """(1 + a) * logits(prompt) - a * logits(prompt + " " + context), read directly."""
    from copyaudit.models.takedown_decoding import BatchRows

    loaded = generator.loaded
    request = GenerationRequest(PREFIX, 1, context="the orchard")
    prompt_ids = loaded.tokenizer.encode(PREFIX, add_special_tokens=True)
    processor = ReversedContextAwareDecoding(0.5)
    processor.bind_batch(BatchRows([prompt_ids], [request], loaded))
    with torch.inference_mode():
        with_prompt = loaded.model(torch.tensor([prompt_ids])).logits[:, -1, :]
        null_ids = loaded.tokenizer.encode(null_context(request), add_special_tokens=True)
        null = loaded.model(torch.tensor([null_ids])).logits[:, -1, :]
    combined = processor(torch.tensor([prompt_ids]), with_prompt.clone())
    assert torch.allclose(combined, 1.5 * with_prompt - 0.5 * null, atol=1e-4)


def test_topk_noise_touches_only_the_top_k() -> None:
    scores = torch.arange(10, dtype=torch.float32).unsqueeze(0)
    out = TopKPerturbation(1.0, k=3, seed=0)(torch.zeros(1, 1, dtype=torch.long), scores.clone())
    changed = (out != scores).nonzero()[:, 1].tolist()
    assert changed == [7, 8, 9]
    assert row_seed(0, [1, 2]) == row_seed(0, [1, 2]) != row_seed(1, [1, 2])
    with pytest.raises(ValueError):
        TopKPerturbation(-1.0)

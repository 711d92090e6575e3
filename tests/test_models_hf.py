"""HFGenerator, HFChoiceScorer and HFTokenScorer on tiny models built in the test."""

from __future__ import annotations

import difflib
import hashlib
from pathlib import Path

import numpy as np
import pytest
import torch

from copyaudit.models.base import ChoiceScorer, GenerationRequest, GenerationResult, Generator
from copyaudit.models.batching import AdaptiveBatcher, BatchTooLargeError
from copyaudit.models.hf import HFChoiceScorer, HFGenerator, HFTokenScorer
from copyaudit.models.hf_loading import load_causal_lm
from copyaudit.models.hf_scoring import ChoiceTokenError
from tests.tinymodels import (
    PASSAGE_LIGHTHOUSE,
    PASSAGE_ORCHARD,
    build_memorizing_model,
    split_passage,
)

pytestmark = pytest.mark.slow  # make test-slow: trains and runs tiny causal models

STOP_PASSAGE = (
    "The list of supplies in the shed was short and plain.\n\n\n"
    "The second list, kept in the attic, was longer than the first by far."
)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("memorizer")
    return build_memorizing_model(
        directory, memorized=[PASSAGE_LIGHTHOUSE, STOP_PASSAGE], others=[PASSAGE_ORCHARD]
    )


@pytest.fixture(scope="module")
def generator(model_dir: Path) -> HFGenerator:
    return HFGenerator(str(model_dir), device="cpu", batch_size=8)


def token_count(generator: HFGenerator, text: str) -> int:
    return len(generator.loaded.tokenizer.encode(text, add_special_tokens=False))


def word_similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(a=a.split(), b=b.split(), autojunk=False).ratio()


# -- generation ------------------------------------------------------------------------


def test_generator_satisfies_protocol(generator: HFGenerator) -> None:
    assert isinstance(generator, Generator)


def test_memorized_continuation_is_reproduced_and_unmemorized_is_not(
    generator: HFGenerator,
) -> None:
    prefix, continuation = split_passage(PASSAGE_LIGHTHOUSE, 150)
    other_prefix, other_continuation = split_passage(PASSAGE_ORCHARD, 150)
    budget = token_count(generator, continuation) + 5
    memorized, unmemorized, with_instruction = generator.generate(
        [
            GenerationRequest(prefix, budget),
            GenerationRequest(other_prefix, budget),
            GenerationRequest("Continue the following text.\n\n" + prefix, budget),
        ]
    )
    assert memorized.error is None
    assert memorized.text.startswith(continuation)
    assert with_instruction.text.startswith(continuation)
    assert not unmemorized.text.startswith(other_continuation[:30])
    assert word_similarity(unmemorized.text[: len(other_continuation)], other_continuation) < 0.5
    assert memorized.tokens >= token_count(generator, continuation)
    assert memorized.seconds > 0


def test_output_does_not_depend_on_batch_neighbours(generator: HFGenerator) -> None:
    prefix, _ = split_passage(PASSAGE_LIGHTHOUSE, 40)
    short = GenerationRequest(prefix, 30)
    long_neighbour = GenerationRequest(PASSAGE_ORCHARD, 30)
    alone = generator.generate([short])[0]
    batched = generator.generate([long_neighbour, short, long_neighbour])[1]
    assert alone.text == batched.text
    assert alone.tokens == batched.tokens == 30


def test_stops_at_three_newlines_and_truncates(generator: HFGenerator) -> None:
    prefix, continuation = split_passage(STOP_PASSAGE, 3)
    before_stop = continuation.split("\n\n\n")[0]
    result = generator.generate([GenerationRequest(prefix, 60)])[0]
    assert result.text == before_stop
    assert result.tokens < 60
    no_stop = HFGenerator(generator.loaded, stop=None).generate([GenerationRequest(prefix, 60)])
    assert "\n\n\nThe second list" in no_stop[0].text
    assert no_stop[0].tokens > result.tokens


def test_max_new_tokens_is_per_request(generator: HFGenerator) -> None:
    # A memorized passage: its continuation has no early EOS or stop sequence, so the
    # only thing that ends a generation is the request's own token budget.
    prefix, _ = split_passage(PASSAGE_LIGHTHOUSE, 30)
    short, longer, again = generator.generate(
        [GenerationRequest(prefix, 3), GenerationRequest(prefix, 12), GenerationRequest(prefix, 3)]
    )
    assert short.tokens == again.tokens == 3
    assert longer.tokens == 12
    assert longer.text.startswith(short.text)
    assert len(longer.text) > len(short.text)


def test_prompt_formatting(generator: HFGenerator) -> None:
    tokenizer = generator.loaded.tokenizer
    chat = GenerationRequest("Tell me.", 5, system="Be careful.", chat=True)
    assert (
        tokenizer.decode(generator.prompt_token_ids(chat))
        == "<|system|>\nBe careful.\n<|user|>\nTell me.\n<|assistant|>\n"
    )
    plain = GenerationRequest("Tell me.", 5, system="Be careful.")
    assert tokenizer.decode(generator.prompt_token_ids(plain)) == "Be careful.\n\nTell me."
    assert generator.generate([chat])[0].error is None


def test_too_long_or_empty_prompt_is_an_error_result_not_a_crash(generator: HFGenerator) -> None:
    too_long = GenerationRequest(PASSAGE_LIGHTHOUSE * 3, 10)  # > 1024 positions
    results = generator.generate(
        [too_long, GenerationRequest("The lighthouse", 5), GenerationRequest("", 5)]
    )
    assert results[0].error is not None and "context" in results[0].error
    assert results[0].text == ""
    assert results[1].error is None and results[1].tokens == 5
    assert results[2].error == "empty prompt"


def test_logits_processor_factory_is_called_once_per_batch(model_dir: Path) -> None:
    from transformers import LogitsProcessor

    calls: list[int] = []

    class Recorder(LogitsProcessor):
        def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
            return scores

    def factory() -> Recorder:
        calls.append(1)
        return Recorder()

    small_batches = HFGenerator(str(model_dir), device="cpu", batch_size=2)
    small_batches.generate([GenerationRequest("The", 2)] * 5, logits_processor_factory=factory)
    assert len(calls) == 3


def test_provenance_records_weights_hash_and_decoding(
    generator: HFGenerator, model_dir: Path
) -> None:
    info = generator.provenance()
    file_hash = hashlib.sha256((model_dir / "model.safetensors").read_bytes()).hexdigest()
    expected = hashlib.sha256(f"model.safetensors\0{file_hash}\n".encode()).hexdigest()
    assert info["weights_sha256"] == expected
    assert info["model"] == str(model_dir)
    assert info["device"] == "cpu" and info["dtype"] == "float32"
    assert info["decoding"]["repetition_penalty"] == 1.1
    assert info["decoding"]["stop"] == "\n\n\n"
    assert info["decoding"]["strategy"] == "greedy"


def test_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    from copyaudit.models.hf_loading import ModelLoadError

    with pytest.raises(ModelLoadError, match="offline"):
        HFGenerator("no-such-org/no-such-model-xyz", device="cpu")


class _PlacedModel:
    """Stands in for a loaded model: records where it was moved."""

    def __init__(self) -> None:
        self.device: str | None = None

    def to(self, device: str) -> _PlacedModel:
        self.device = device
        return self

    def eval(self) -> _PlacedModel:
        return self


@pytest.mark.parametrize(("device", "cudnn_after"), [("cpu", True), ("cuda:0", False)])
def test_loading_onto_cuda_turns_off_cudnn_attention(
    monkeypatch: pytest.MonkeyPatch, device: str, cudnn_after: bool
) -> None:
    """cuDNN's attention plans every new shape (see skip_cudnn_attention); a model
    loaded onto CUDA leaves scaled_dot_product_attention its planless kernels, one
    loaded onto the CPU changes nothing."""
    import transformers

    from copyaudit.models.hf_loading import load_pretrained

    class AutoClass:
        @staticmethod
        def from_pretrained(source: str, **options: object) -> _PlacedModel:
            return _PlacedModel()

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", lambda *a, **k: "tok")
    enabled = torch.backends.cuda.cudnn_sdp_enabled()
    torch.backends.cuda.enable_cudnn_sdp(True)
    try:
        model, tokenizer = load_pretrained(AutoClass, "some/model", device, torch.float32, {})
        assert (model.device, tokenizer) == (device, "tok")
        assert torch.backends.cuda.cudnn_sdp_enabled() is cudnn_after
    finally:
        torch.backends.cuda.enable_cudnn_sdp(enabled)


# -- out-of-memory halving ----------------------------------------------------------------


def fake_batch(limit: int, error: Exception):
    seen: list[int] = []

    def run(chunk):
        seen.append(len(chunk))
        if len(chunk) > limit:
            raise error
        return [item * 10 for item in chunk]

    return run, seen


@pytest.mark.parametrize(
    "error",
    [torch.cuda.OutOfMemoryError("CUDA out of memory"), RuntimeError("CUDA out of memory.")],
)
def test_batch_halves_on_out_of_memory(error: Exception) -> None:
    batcher = AdaptiveBatcher(8)
    run, seen = fake_batch(2, error)
    assert batcher.run(list(range(11)), run) == [i * 10 for i in range(11)]
    assert seen[:3] == [8, 4, 2]
    assert batcher.batch_size == 2 and batcher.halvings == 2
    assert all(size <= 2 for size in seen[3:])


def test_other_errors_are_not_swallowed() -> None:
    run, _ = fake_batch(0, RuntimeError("shape mismatch"))
    with pytest.raises(RuntimeError, match="shape mismatch"):
        AdaptiveBatcher(4).run([1, 2], run)


def test_out_of_memory_at_batch_one_gives_up() -> None:
    run, seen = fake_batch(0, torch.cuda.OutOfMemoryError("out of memory"))
    with pytest.raises(BatchTooLargeError):
        AdaptiveBatcher(4).run([1, 2, 3], run)
    assert seen == [3, 2, 1]


def test_generator_retries_smaller_batches_after_oom(
    model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix, _ = split_passage(PASSAGE_LIGHTHOUSE, 20)
    requests = [GenerationRequest(prefix[: 20 + 7 * i], 6) for i in range(7)]
    reference = HFGenerator(str(model_dir), device="cpu", batch_size=8).generate(requests)

    flaky = HFGenerator(str(model_dir), device="cpu", batch_size=8)
    real_batch = flaky._generate_batch
    sizes: list[int] = []

    def limited(items, max_new_tokens, factory, control=None):
        sizes.append(len(items))
        if len(items) > 2:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory")
        return real_batch(items, max_new_tokens, factory, control)

    monkeypatch.setattr(flaky, "_generate_batch", limited)
    results = flaky.generate(requests)
    assert [r.text for r in results] == [r.text for r in reference]
    assert sizes[:3] == [7, 4, 2]
    assert flaky.batcher.batch_size == 2
    assert flaky.provenance()["decoding"]["batch_size_now"] == 2

    def always_oom(items, max_new_tokens, factory, control=None):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory")

    monkeypatch.setattr(flaky, "_generate_batch", always_oom)
    failed = flaky.generate(requests[:2])
    assert all(isinstance(r, GenerationResult) and r.error for r in failed)

    # Only the longest prompt does not fit even alone: only it fails.
    longest = max(len(flaky.prompt_token_ids(r)) for r in requests)

    def oom_when_longest(items, max_new_tokens, factory, control=None):
        if any(len(item.token_ids) == longest for item in items):
            raise torch.cuda.OutOfMemoryError("CUDA out of memory")
        return real_batch(items, max_new_tokens, factory, control)

    monkeypatch.setattr(flaky, "_generate_batch", oom_when_longest)
    mixed = flaky.generate(requests)
    assert mixed[-1].error is not None and "out of memory" in mixed[-1].error
    assert [r.text for r in mixed[:-1]] == [r.text for r in reference[:-1]]
    assert all(r.error is None for r in mixed[:-1])


# -- choice scoring (DE-COP) --------------------------------------------------------------


@pytest.fixture(scope="module")
def choice_scorer(generator: HFGenerator) -> HFChoiceScorer:
    return HFChoiceScorer(generator.loaded, batch_size=2)


def manual_choice_probabilities(loaded, prompt: str, token_ids: list[int]) -> np.ndarray:
    ids = torch.tensor([loaded.tokenizer.encode(prompt, add_special_tokens=True)])
    with torch.no_grad():
        logits = loaded.model(input_ids=ids).logits[0, -1, token_ids]
    return torch.softmax(logits.float(), dim=-1).numpy()


def test_choice_scorer_matches_unbatched_forward_pass(choice_scorer: HFChoiceScorer) -> None:
    assert isinstance(choice_scorer, ChoiceScorer)
    letters = ["A", "B", "C", "D"]
    token_ids = choice_scorer.choice_token_ids(letters)
    tokenizer = choice_scorer.loaded.tokenizer
    assert [tokenizer.decode([t]) for t in token_ids] == [" A", " B", " C", " D"]
    prompts = [
        "Which passage is verbatim? Options: A. one B. two C. three D. four\nAnswer:",
        "Short prompt. Answer:",
        PASSAGE_ORCHARD[:300] + "\nAnswer:",
    ]
    probabilities = choice_scorer.choice_probabilities(prompts, letters)
    assert probabilities.shape == (3, 4)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-6)
    for row, prompt in enumerate(prompts):
        expected = manual_choice_probabilities(choice_scorer.loaded, prompt, token_ids)
        np.testing.assert_allclose(probabilities[row], expected, atol=1e-5)


def test_choice_scorer_runs_one_forward_pass_per_batch_and_never_generates(
    choice_scorer: HFChoiceScorer, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = choice_scorer.loaded.model
    calls: list[int] = []
    real_forward = model.forward

    def counting_forward(*args, **kwargs):
        calls.append(kwargs["input_ids"].shape[0])
        return real_forward(*args, **kwargs)

    def no_generate(*args, **kwargs):
        raise AssertionError("generate must not be called")

    monkeypatch.setattr(model, "forward", counting_forward)
    monkeypatch.setattr(model, "generate", no_generate)
    # the batched mode (an accelerator's default; on a CPU prefix sharing is, its own test)
    monkeypatch.setattr(choice_scorer, "share_prefixes", False)
    choice_scorer.choice_probabilities([f"Prompt {i}. Answer:" for i in range(5)], "ABCD")
    assert calls == [2, 2, 1]


def test_multi_token_choice_is_rejected_by_name(choice_scorer: HFChoiceScorer) -> None:
    with pytest.raises(ChoiceTokenError, match="Zebraquill"):
        choice_scorer.choice_token_ids(["A", "Zebraquill"])


# -- per-token log-probabilities (DE-COP baselines) ------------------------------------------


def test_token_logprobs_match_manual_computation(generator: HFGenerator) -> None:
    scorer = HFTokenScorer(generator.loaded, batch_size=2)
    texts = [PASSAGE_LIGHTHOUSE[:200], PASSAGE_ORCHARD[:120], "The", PASSAGE_ORCHARD[:200]]
    scores = scorer.token_logprobs(texts)
    tokenizer = generator.loaded.tokenizer
    for text, values in zip(texts, scores, strict=True):
        ids = tokenizer.encode(text, add_special_tokens=True)
        assert values.shape == (max(len(ids) - 1, 0),)
        if len(ids) < 2:
            continue
        with torch.no_grad():
            logits = generator.loaded.model(input_ids=torch.tensor([ids])).logits[0, :-1]
        expected = torch.log_softmax(logits, -1).gather(1, torch.tensor(ids[1:])[:, None])
        np.testing.assert_allclose(values, expected[:, 0].numpy(), atol=1e-4)
        assert np.all(values <= 0)
    # the memorized passage is far more likely than the unmemorized one
    assert scores[0].mean() > scores[3].mean() + 1.0


def test_shared_loaded_model_serves_all_three(model_dir: Path) -> None:
    loaded = load_causal_lm(str(model_dir), device="cpu")
    generator = HFGenerator(loaded)
    scorer = HFChoiceScorer(loaded)
    assert generator.loaded.model is scorer.loaded.model
    assert scorer.provenance()["weights_sha256"] == generator.provenance()["weights_sha256"]


def test_tiny_training_is_deterministic(tmp_path: Path) -> None:
    from tests.tinymodels import build_tiny_causal_lm, build_tokenizer, train_to_memorize

    weights = []
    for name in ("one", "two"):
        directory = tmp_path / name
        build_tiny_causal_lm(directory, build_tokenizer([PASSAGE_ORCHARD], directory))
        train_to_memorize(directory, [PASSAGE_ORCHARD[:200]], steps=3)
        weights.append((directory / "model.safetensors").read_bytes())
    assert weights[0] == weights[1]


def test_hub_id_loads_offline_from_the_cache_and_records_the_commit(
    model_dir: Path, generator: HFGenerator, tmp_path: Path
) -> None:
    import shutil

    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--tiny-org--tiny-lm"
    shutil.copytree(model_dir, repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    from_hub = HFGenerator("tiny-org/tiny-lm", device="cpu", hub_cache_dir=str(tmp_path / "hub"))
    info = from_hub.provenance()
    assert info["model"] == "tiny-org/tiny-lm" and info["revision"] == commit
    assert "weights_sha256" not in info
    request = [GenerationRequest(split_passage(PASSAGE_LIGHTHOUSE, 30)[0], 8)]
    assert from_hub.generate(request)[0].text == generator.generate(request)[0].text

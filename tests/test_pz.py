"""p_z (copyaudit.models.pz, pz_scoring, studies.extraction.windows) against a
teacher-forced computation written here with transformers alone, on windows of the
public-domain passages in samples/literal.jsonl, with a tiny model that memorised one
of them (trained in this process)."""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from typing import Any

import pytest
import torch

from copyaudit.models.hf_loading import LoadedCausalLM, load_causal_lm
from copyaudit.models.pz import DecodingScheme, n_for_p
from copyaudit.models.pz_scoring import PzScorer, TokenWindow
from copyaudit.studies.extraction.windows import Cutting, cut_windows, tokenizer_digest
from tests.process_cache import scratch_folder
from tests.tinymodels import build_tiny_causal_lm, build_tokenizer, train_to_memorize

pytestmark = pytest.mark.slow  # make test-slow: trains a tiny memorising model

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
GREEDY = DecodingScheme("greedy")
TOP40 = DecodingScheme("topk", top_k=40, temperature=1.0)
SAMPLING = DecodingScheme("sampling", temperature=1.0)


def _passages() -> list[str]:
    rows = [json.loads(line) for line in (SAMPLES / "literal.jsonl").read_text().splitlines()]
    return [row["input"] + row["reference"] for row in rows]


PASSAGES = _passages()
MEMORISED = PASSAGES[0][:400]  # the first passage's opening, trained in (briefly)
WORK = "\n\n".join(PASSAGES)  # every passage, one work (the memorised one opens it)


@pytest.fixture(scope="module")
def model_dir() -> Path:
    """A tiny Llama half-trained on MEMORISED: probabilities between 0 and 1 to check."""
    folder = scratch_folder("pz")
    build_tiny_causal_lm(folder, build_tokenizer(PASSAGES, folder))
    return train_to_memorize(folder, [MEMORISED], steps=60)


@pytest.fixture(scope="module")
def loaded(model_dir: Path) -> LoadedCausalLM:
    return load_causal_lm(str(model_dir), device="cpu", dtype="float32")


@pytest.fixture(scope="module")
def windows(loaded: LoadedCausalLM) -> list[Any]:
    tokenizer = loaded.tokenizer
    cutting = Cutting(50, 50, 7, "tiny", tokenizer_digest(tokenizer))
    return list(cut_windows("work", WORK, tokenizer, cutting))


def _token_windows(cases: list[Any]) -> list[TokenWindow]:
    return [
        TokenWindow(
            tuple(c.payload["window"]["prefix_ids"]), tuple(c.payload["window"]["suffix_ids"])
        )
        for c in cases
    ]


def _reference(model_dir: Path, windows: list[TokenWindow], top_k: int) -> dict[str, Any]:
    """log p_z by hand, greedy and top-k, and the greedy token hits: the model loaded
    here by transformers, every window one unpadded row; greedy as 'every target is the
    argmax', top-k as the softmax over the logits at least as large as the k-th."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    greedy: list[float] = []
    topk: list[float] = []
    hits = 0
    with torch.no_grad():
        for start in range(0, len(windows), 128):
            chunk = windows[start : start + 128]
            n = len(chunk[0].prefix)
            ids = torch.tensor([[*w.prefix, *w.suffix] for w in chunk])
            logits = model(input_ids=ids).logits.float()[:, n - 1 : -1]
            targets = ids[:, n:]
            hit = logits.argmax(-1) == targets
            hits += int(hit.sum())
            greedy += [0.0 if bool(row.all()) else -math.inf for row in hit]
            kth = logits.sort(-1, descending=True).values[..., top_k - 1 : top_k]
            kept = torch.where(logits >= kth, logits, -math.inf)
            picked = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
            outside = (picked < kth.squeeze(-1)).any(-1)
            values = (picked - torch.logsumexp(kept, -1)).double().sum(-1)
            topk += [-math.inf if o else float(v) for o, v in zip(outside, values, strict=True)]
    return {"greedy": greedy, TOP40.label: topk, "hits": hits}


@pytest.fixture(scope="module")
def compared(loaded: LoadedCausalLM, model_dir: Path, windows: list[Any]) -> Any:
    """(our scores, the hand computation) over every window, each computed once."""
    token_windows = _token_windows(windows)
    ours = PzScorer(loaded, batch_size=64).score(token_windows, [GREEDY, TOP40])
    return ours, _reference(model_dir, token_windows, 40)


def _assert_log_pz_equal(ours: list[float], theirs: list[float]) -> None:
    for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        if math.isinf(b):
            assert a == b, f"window {index}: {a} vs {b}"
        else:
            assert abs(a - b) <= 1e-4, f"window {index}: {a} vs {b}"


def test_windows_are_the_works_tokens(windows: list[Any], loaded: LoadedCausalLM) -> None:
    ids = loaded.tokenizer.encode(WORK, add_special_tokens=False)
    assert len(windows) >= 1000
    for case in windows[::97]:
        window = case.payload["window"]
        start = window["start_token"]
        assert window["prefix_ids"] == ids[start : start + 50]
        assert window["suffix_ids"] == ids[start + 50 : start + 100]
        first, boundary, last = window["chars"]
        assert case.payload["prefix"] == WORK[first:boundary]
        assert case.payload["reference"] == WORK[boundary:last]
    assert [c.payload["window"]["start_token"] for c in windows[:3]] == [0, 7, 14]


def test_greedy_log_pz_equals_an_independent_teacher_forced_pass(compared: Any) -> None:
    scores, reference = compared
    _assert_log_pz_equal([s.log_pz["greedy"] for s in scores], reference["greedy"])
    # few windows come out whole from a half-trained model: the token hits agree one by one
    assert reference["hits"] > 1000
    assert sum(v == 0.0 for s in scores for v in s.token_log_probs["greedy"]) == reference["hits"]


def test_top40_log_pz_equals_an_independent_teacher_forced_pass(compared: Any) -> None:
    scores, reference = compared
    ours = [s.log_pz[TOP40.label] for s in scores]
    _assert_log_pz_equal(ours, reference[TOP40.label])
    finite = sum(not math.isinf(v) for v in ours)
    assert 5 <= finite <= len(ours) - 5  # both outcomes exercised


def test_batched_equals_one_at_a_time_with_uneven_windows(
    loaded: LoadedCausalLM, windows: list[Any]
) -> None:
    """Windows of different lengths pad differently in a batch; float32 keeps log p_z."""
    base = _token_windows(windows[:60:3])
    uneven = [TokenWindow(w.prefix[i % 7 :], w.suffix[: 50 - (i % 11)]) for i, w in enumerate(base)]
    schemes = [GREEDY, TOP40, SAMPLING]
    scorer = PzScorer(loaded, batch_size=8)
    batched = scorer.score(uneven, schemes)
    alone = [scorer.score([w], schemes)[0] for w in uneven]
    for a, b in zip(batched, alone, strict=True):
        for label in a.log_pz:
            x, y = a.log_pz[label], b.log_pz[label]
            assert (x == y) if math.isinf(y) else abs(x - y) <= 1e-4
        assert a.argmax == b.argmax


def test_out_of_memory_halves_the_batch_and_keeps_the_scores(
    loaded: LoadedCausalLM, windows: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A forward pass of more than 2 rows raises CUDA's out-of-memory error (faked on
    the CPU): the scorer halves 8 -> 4 -> 2, keeps 2, and scores every window as before."""
    token_windows = _token_windows(windows[:10])
    expected = PzScorer(loaded, batch_size=8).score(token_windows, [GREEDY, TOP40])
    forward = loaded.model.forward
    rows_seen: list[int] = []

    @functools.wraps(forward)
    def short_of_memory(*args: Any, **kwargs: Any) -> Any:
        rows = kwargs["input_ids"].shape[0]
        rows_seen.append(rows)
        if rows > 2:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (faked)")
        return forward(*args, **kwargs)

    monkeypatch.setattr(loaded.model, "forward", short_of_memory)
    scorer = PzScorer(loaded, batch_size=8)
    scores = scorer.score(token_windows, [GREEDY, TOP40])
    assert rows_seen == [8, 4, 2, 2, 2, 2, 2]
    assert (scorer.batcher.batch_size, scorer.batcher.halvings) == (2, 2)
    for ours, before in zip(scores, expected, strict=True):
        for label, value in before.log_pz.items():
            x = ours.log_pz[label]
            assert (x == value) if math.isinf(value) else abs(x - value) <= 1e-4


def test_scheme_probabilities_at_one_position() -> None:
    from copyaudit.models.pz import token_log_probs

    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0]])
    top2 = DecodingScheme("topk", top_k=2, temperature=0.5)
    # top-2 at T=0.5: softmax over [4, 2]
    expected = 4.0 - math.log(math.exp(4.0) + math.exp(2.0))
    assert float(token_log_probs(logits, torch.tensor([0]), top2)) == pytest.approx(expected)
    assert float(token_log_probs(logits, torch.tensor([2]), top2)) == -math.inf
    assert float(token_log_probs(logits, torch.tensor([0]), GREEDY)) == 0.0
    assert float(token_log_probs(logits, torch.tensor([1]), GREEDY)) == -math.inf
    full = torch.log_softmax(logits[0], 0)[3]
    assert float(token_log_probs(logits, torch.tensor([3]), SAMPLING)) == pytest.approx(float(full))


def test_n_for_p() -> None:
    assert n_for_p(0.0) == math.inf
    assert n_for_p(1.0) == 1.0
    assert n_for_p(0.5) == 5.0  # 1 - 0.5**5 = 0.969 >= 0.95 > 1 - 0.5**4
    assert n_for_p(0.01, 0.5) == 69.0  # 1 - 0.99**69 = 0.500 >= 0.5
    with pytest.raises(ValueError):
        n_for_p(0.5, 1.0)


def test_sampled_hit_rate_falls_in_the_binomial_interval_of_pz(
    loaded: LoadedCausalLM, model_dir: Path
) -> None:
    """For 20 windows of the memorised opening (30-token prefix, 8-token suffix) with
    p_z under top-40/T=1 between 0.02 and 0.98, transformers' own sampler (generate,
    do_sample, top_k=40, seeded) emits the suffix in 1,000 tries a number of times inside
    the central 95% of Binomial(1000, p_z) for at least 19 of them. (With an exact p_z
    each window misses with probability <= 5%: 19 of 20 hold ~74% of the time at
    worst; the seed is fixed, so the outcome is too.)"""
    from scipy.stats import binom
    from transformers import AutoModelForCausalLM

    tokenizer = loaded.tokenizer
    cutting = Cutting(30, 8, 1, "tiny", tokenizer_digest(tokenizer))
    cases = list(cut_windows("m", MEMORISED, tokenizer, cutting))
    token_windows = _token_windows(cases)
    scores = PzScorer(loaded, batch_size=32).score(token_windows, [TOP40])
    pz = [math.exp(s.log_pz[TOP40.label]) for s in scores]
    chosen = [i for i, p in enumerate(pz) if 0.02 <= p <= 0.98]
    assert len(chosen) >= 20, f"only {len(chosen)} windows with p_z in [0.02, 0.98]: {pz}"
    chosen = chosen[:: max(1, len(chosen) // 20)][:20]
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    prompts = torch.tensor([token_windows[i].prefix for i in chosen])  # all 30 tokens long
    torch.manual_seed(0)
    with torch.no_grad():  # one call: 1,000 samples of each window, rows grouped by window
        samples = model.generate(
            prompts,
            attention_mask=torch.ones_like(prompts),
            do_sample=True,
            top_k=40,
            top_p=1.0,
            temperature=1.0,
            max_new_tokens=8,
            min_new_tokens=8,
            num_return_sequences=1000,
            pad_token_id=tokenizer.pad_token_id,
        )[:, prompts.shape[1] :].reshape(len(chosen), 1000, 8)
    inside = 0
    for row, index in enumerate(chosen):
        hits = int((samples[row] == torch.tensor(token_windows[index].suffix)).all(-1).sum())
        low, high = binom.interval(0.95, 1000, pz[index])
        inside += low <= hits <= high
    assert inside >= 19, f"{inside} of 20 windows inside their interval"


def test_run_report_histograms_cover_log_probabilities_and_tries() -> None:
    from copyaudit.reports.scores import histogram

    logs = histogram("log_pz", [-30.0, -1.5, -0.2, -0.2])
    assert len(logs["counts"]) == 20 and sum(logs["counts"]) == 4
    assert logs["edges"][0] == -30.0 and logs["edges"][-1] == -0.2
    tries = histogram("n_for_p", [1.0, 3.0, 2e30])
    assert sum(tries["counts"]) == 3 and tries["counts"][0] == 2
    assert histogram("events", [0, 2, 2])["counts"] == [1, 0, 2]  # counts as before

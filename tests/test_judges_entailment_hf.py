"""Model-backed entailment backends on tiny models built in the test (no hub).

A tiny T5 is trained for a few seconds to answer "attributable" / "not
attributable" on two prompts, so the paper judge's prompt, greedy decoding and
exact-match parsing are checked end to end; the NLI and yes/no backends use
random tiny models (plumbing, padding, batching, the not-asked-again rule).
"""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Any

import pytest
import torch

from copyaudit.judges.entailment_hf import (
    ATTRIBUTION_PROMPT,
    CausalYesNo,
    NLICrossEncoder,
    Seq2SeqAttributable,
    entailment_label_index,
    exact_answer_score,
)
from copyaudit.judges.events import EventJudge
from copyaudit.judges.loading import load_entailment_model, split_spec
from copyaudit.judges.options import JudgeOptions
from copyaudit.judges.presets import build_judges
from copyaudit.models.hf_loading import ModelLoadError
from copyaudit.models.seq2seq_greedy import greedy_until_settled, plain_greedy
from copyaudit.models.unpadded_encoder import NAME, unpadded_encoder
from copyaudit.types import JudgeInput
from tests.tinymodels import build_tiny_causal_lm, build_tokenizer, train_seq2seq_answers

pytestmark = pytest.mark.slow  # make test-slow: builds and runs tiny entailment models

SUPPORTED = ("Mara boards a boat.", "At dawn Mara boarded a small fishing boat and left.")
UNSUPPORTED = ("The king declares war.", "At dawn Mara boarded a small fishing boat and left.")
TRAINING_TEXT = [
    ATTRIBUTION_PROMPT.format(claim=c, passage=p) + " attributable not attributable"
    for c, p in (SUPPORTED, UNSUPPORTED)
]


def _t5(directory: Path, seed: int = 0) -> tuple[Any, Any]:
    from transformers import GenerationConfig, T5Config, T5ForConditionalGeneration

    tokenizer = build_tokenizer(TRAINING_TEXT, directory, vocab_size=400, chat_template=None)
    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=48,
        d_kv=12,
        d_ff=96,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=4,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = T5ForConditionalGeneration(config)
    model.generation_config = GenerationConfig(
        decoder_start_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return model, tokenizer


@pytest.fixture(scope="module")
def trained_t5(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("t5")
    model, tokenizer = _t5(directory)
    train_seq2seq_answers(
        model,
        tokenizer,
        [
            (ATTRIBUTION_PROMPT.format(claim=SUPPORTED[0], passage=SUPPORTED[1]), "attributable"),
            (
                ATTRIBUTION_PROMPT.format(claim=UNSUPPORTED[0], passage=UNSUPPORTED[1]),
                "not attributable",
            ),
        ],
    )
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def _load_t5(directory: Path) -> tuple[Any, Any]:
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    model = AutoModelForSeq2SeqLM.from_pretrained(directory, use_safetensors=True)
    return model, AutoTokenizer.from_pretrained(directory)


def _same(scores: list[float], expected: list[float]) -> bool:
    """Equal scores, NaN (unreadable) matching NaN."""
    return len(scores) == len(expected) and all(
        a == b or (math.isnan(a) and math.isnan(b)) for a, b in zip(scores, expected, strict=True)
    )


def test_an_answer_other_than_the_two_is_unreadable_not_no() -> None:
    assert exact_answer_score("attributable") == 1.0
    assert exact_answer_score("not attributable") == 0.0
    for garbage in ("", "attribut", "yes", "not", "attributable attributable"):
        assert math.isnan(exact_answer_score(garbage)), garbage


def test_prompt_is_the_papers() -> None:
    prompt = ATTRIBUTION_PROMPT.format(claim="C", passage="P")
    assert prompt == (
        "### Instruction:\nPlease solely verify whether the reference can support the claim. "
        "Options: 'attributable' or 'not attributable'.\n### Input:\nClaim: C\n\n"
        "Reference: P\n\n### Output:"
    )


def test_seq2seq_generate_reads_attributable_exactly(trained_t5: Path) -> None:
    model, tokenizer = _load_t5(trained_t5)
    judge = Seq2SeqAttributable(model, tokenizer, batch_size=2)
    decoded = tokenizer.batch_decode(
        model.generate(
            **tokenizer(
                [
                    ATTRIBUTION_PROMPT.format(claim=c, passage=p)
                    for c, p in (SUPPORTED, UNSUPPORTED)
                ],
                return_tensors="pt",
                padding=True,
            ),
            max_new_tokens=10,
            do_sample=False,
        ),
        skip_special_tokens=True,
    )
    assert decoded == ["attributable", "not attributable"]
    assert judge.score([SUPPORTED, UNSUPPORTED, SUPPORTED]) == [1.0, 0.0, 1.0]
    assert judge.batches_run == 2  # 3 pairs, batch size 2
    assert judge.config()["scoring"] == "generate"


def _generate_tokens(model: Any, tokenizer: Any, prompts: list[str]) -> list[list[int]]:
    """generate()'s greedy tokens per prompt alone, without the start token and EOS."""
    rows = []
    for prompt in prompts:
        generated = model.generate(
            **tokenizer([prompt], return_tensors="pt"), max_new_tokens=10, do_sample=False
        )[0].tolist()[1:]
        eos = tokenizer.eos_token_id
        rows.append(generated[: generated.index(eos)] if eos in generated else generated)
    return rows


def test_greedy_loop_makes_generates_choices(tmp_path: Path) -> None:
    model, tokenizer = _t5(tmp_path, seed=3)  # random: long outputs, EOS rarely
    model.eval()
    prompts = [
        ATTRIBUTION_PROMPT.format(claim=c * k, passage=p)
        for c, p in (SUPPORTED, UNSUPPORTED)
        for k in (1, 3)
    ]
    assert plain_greedy(model)
    inputs = tokenizer(prompts, return_tensors="pt", padding=True)
    looped = greedy_until_settled(
        model, inputs["input_ids"], inputs["attention_mask"], 10, lambda ids: False
    )
    assert looped == _generate_tokens(model, tokenizer, prompts)
    assert max(len(ids) for ids in looped) > 3  # more than a step or two is compared
    stopped = greedy_until_settled(
        model, inputs["input_ids"], inputs["attention_mask"], 10, lambda ids: len(ids) >= 2
    )
    assert stopped == [ids[:2] for ids in looped]
    model.generation_config.repetition_penalty = 1.2
    assert not plain_greedy(model)  # generate() would change logits: the judge keeps it


def _decoder_calls(model: Any) -> list[int]:
    """Count the model's decoder calls (the encoder runs through get_encoder())."""
    calls: list[int] = []
    forward = model.forward

    @functools.wraps(forward)  # the cache keyword is read from its signature
    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs["decoder_input_ids"].shape[1])
        return forward(*args, **kwargs)

    model.forward = counting
    return calls


def _judge_settled(tokenizer: Any) -> Any:
    return lambda ids: (
        not "attributable".startswith(tokenizer.decode(ids, skip_special_tokens=True))
    )


def test_forced_answer_pass_gives_the_step_by_step_tokens(tmp_path: Path) -> None:
    # A random T5 answers anything (long outputs, EOS rarely); the expected answers are
    # the judge's, prefixes of what the model really decodes (rows follow them and go
    # on), and ones it leaves half-way: every row's tokens must be the loop's.
    model, tokenizer = _t5(tmp_path, seed=3)
    model.eval()
    claims = [SUPPORTED[0], UNSUPPORTED[0], "Mara", "boat " * 5, "", "The sea. " * 3]
    passages = [SUPPORTED[1], UNSUPPORTED[1] + " Then rain.", "war king", "x"]
    prompts = [ATTRIBUTION_PROMPT.format(claim=c, passage=p) for c in claims for p in passages]
    inputs = tokenizer(prompts, return_tensors="pt", padding=True)
    args = (model, inputs["input_ids"], inputs["attention_mask"])
    reference = _generate_tokens(model, tokenizer, prompts)
    followed = reference[0]
    assert len(followed) >= 4
    answers = [
        tokenizer("attributable", add_special_tokens=False)["input_ids"],
        followed[:1],
        followed[:3],
        [*followed[:2], followed[2] + 1],  # row 0 leaves it at its last token
        followed,
    ]
    rules = [lambda ids: False, lambda ids: len(ids) >= 2, _judge_settled(tokenizer)]
    for settled in rules:
        for limit in (0, 1, 2, 10):
            loop = greedy_until_settled(*args, limit, settled)
            if settled is rules[0] and limit == 10:
                assert loop == reference  # the loop itself is generate()'s
            for answer in answers:
                assert greedy_until_settled(*args, limit, settled, answer) == loop, (answer, limit)
                both = greedy_until_settled(*args, limit, settled, answers[0], [answer])
                assert both == loop, (answer, limit)


def test_forced_answer_pass_is_one_decoder_call_when_rows_settle(trained_t5: Path) -> None:
    model, tokenizer = _load_t5(trained_t5)
    prompts = [ATTRIBUTION_PROMPT.format(claim=c, passage=p) for c, p in (SUPPORTED, UNSUPPORTED)]
    inputs = tokenizer(prompts, return_tensors="pt", padding=True)
    answer = tokenizer("attributable", add_special_tokens=False)["input_ids"]
    settled = _judge_settled(tokenizer)
    calls = _decoder_calls(model)
    loop = greedy_until_settled(model, inputs["input_ids"], inputs["attention_mask"], 10, settled)
    steps = list(calls)
    calls.clear()
    forced = greedy_until_settled(
        model, inputs["input_ids"], inputs["attention_mask"], 10, settled, answer
    )
    assert forced == loop
    assert [tokenizer.decode(ids) for ids in forced] == ["attributable", "not"]
    assert steps == [1] * (len(answer) + 1)  # one token per call, EOS after the answer
    assert calls == [len(answer) + 1]  # start and the answer, in one call


def test_both_answers_settle_in_two_forced_calls(trained_t5: Path) -> None:
    """The judge's rule (either answer can still be reached): "not attributable" rows
    are read by a second forced pass, not stepped token by token."""
    model, tokenizer = _load_t5(trained_t5)
    judge = Seq2SeqAttributable(model, tokenizer, batch_size=4)
    calls = _decoder_calls(model)
    assert judge.score([SUPPORTED, UNSUPPORTED]) == [1.0, 0.0]
    assert calls == [len(judge.answer_ids) + 1, len(judge.other_answer_ids) + 1]


def test_unpadded_encoder_gives_each_row_its_own_encoding(tmp_path: Path) -> None:
    model, tokenizer = _t5(tmp_path, seed=5)
    model.eval()
    prompts = [
        ATTRIBUTION_PROMPT.format(claim=c * k, passage=p)
        for c, p in (SUPPORTED, UNSUPPORTED)
        for k in (1, 4)
    ]
    inputs = tokenizer(prompts, return_tensors="pt", padding=True)
    assert len(set(inputs["attention_mask"].sum(dim=1).tolist())) > 1  # rows are padded
    encoder = model.get_encoder()
    with torch.inference_mode():
        alone = [
            encoder(**tokenizer([p], return_tensors="pt")).last_hidden_state[0] for p in prompts
        ]
        with unpadded_encoder(model, inputs["attention_mask"]) as mask:
            assert mask is None and encoder.config._attn_implementation == NAME
            rows = encoder(input_ids=inputs["input_ids"], attention_mask=mask).last_hidden_state
        masked = encoder(**inputs).last_hidden_state  # the ordinary padded path
    assert encoder.config._attn_implementation == "sdpa"  # restored after the block
    assert model.config._attn_implementation == "sdpa"  # the decoder never changed
    for row, single in enumerate(alone):
        assert torch.allclose(rows[row, : len(single)], single, atol=1e-6)
        assert torch.allclose(masked[row, : len(single)], single, atol=1e-5)
    left = tokenizer(prompts, return_tensors="pt", padding=True, padding_side="left")
    with unpadded_encoder(model, left["attention_mask"]) as mask:
        assert mask is left["attention_mask"]  # left padding keeps the ordinary path


def test_seq2seq_verdicts_equal_generate_batched_and_per_pair(trained_t5: Path) -> None:
    model, tokenizer = _load_t5(trained_t5)
    pairs = [
        *(SUPPORTED, UNSUPPORTED, (SUPPORTED[0], UNSUPPORTED[1] + " Then rain.")),
        *(("Mara", SUPPORTED[1]), UNSUPPORTED, SUPPORTED, ("", ""), ("boat " * 30, "sea")),
    ]
    prompts = [ATTRIBUTION_PROMPT.format(claim=c, passage=p) for c, p in pairs]
    decoded = [
        tokenizer.decode(ids, skip_special_tokens=True)
        for ids in _generate_tokens(model, tokenizer, prompts)
    ]
    expected = [exact_answer_score(text) for text in decoded]
    assert {"attributable", "not attributable"} <= set(decoded)
    batched = Seq2SeqAttributable(model, tokenizer, batch_size=8)
    single = Seq2SeqAttributable(model, tokenizer, batch_size=1)
    assert _same(batched.score(pairs), expected)
    assert _same(single.score(pairs), expected)
    assert (batched.batches_run, single.batches_run) == (1, len(pairs))


def test_seq2seq_first_token_probability(trained_t5: Path) -> None:
    model, tokenizer = _load_t5(trained_t5)
    judge = Seq2SeqAttributable(model, tokenizer, scoring="first_token", batch_size=4)
    supported, unsupported = judge.score([SUPPORTED, UNSUPPORTED])
    assert supported > 0.9 and unsupported < 0.1
    single = Seq2SeqAttributable(model, tokenizer, scoring="first_token", batch_size=1)
    assert single.score([SUPPORTED, UNSUPPORTED]) == pytest.approx(
        [supported, unsupported], abs=1e-5
    )
    with pytest.raises(ValueError, match="scoring"):
        Seq2SeqAttributable(model, tokenizer, scoring="beam")


def test_event_judge_with_seq2seq_batches_rounds_and_stops_asking(trained_t5: Path) -> None:
    model, tokenizer = _load_t5(trained_t5)
    backend = Seq2SeqAttributable(model, tokenizer, batch_size=3)
    asked: list[list[tuple[str, str]]] = []
    original = backend.score

    def recording(pairs: Any) -> list[float]:
        asked.append(list(pairs))
        return original(pairs)

    backend.score = recording  # type: ignore[method-assign]
    passage = SUPPORTED[1]
    # Two windows of 11 tokens (10 words and "."), each exactly the trained passage.
    output = passage + " " + passage
    events = [SUPPORTED[0], UNSUPPORTED[0]]
    item = JudgeInput("nonliteral", {"input": "x", "reference_events": events}, "x", output)
    judge = EventJudge(backend, threshold=1, window_tokens=11)
    [[first], [second]] = judge.judge([item, item])
    # round 0: the 2 distinct pairs (both generations are identical); round 1: only the
    # unsupported event, because a window already supported the other one
    assert [len(call) for call in asked] == [2, 1]
    assert asked[1] == [(UNSUPPORTED[0], passage)]
    assert backend.batches_run == 2
    for score in (first, second):
        assert [v.verdict for v in score.items] == [True, False]
        assert [(s.item, output[s.start : s.end]) for s in score.spans] == [(0, passage)]


def _bert(directory: Path, labels: dict[int, str]) -> tuple[Any, Any]:
    from transformers import BertConfig, BertForSequenceClassification

    tokenizer = build_tokenizer(TRAINING_TEXT, directory, vocab_size=300, chat_template=None)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        pad_token_id=tokenizer.pad_token_id,
        num_labels=len(labels),
        id2label=labels,
        label2id={v: k for k, v in labels.items()},
    )
    torch.manual_seed(0)
    model = BertForSequenceClassification(config).eval()
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return model, tokenizer


NLI_LABELS = {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}


def test_entailment_label_is_found_case_insensitively() -> None:
    assert entailment_label_index(NLI_LABELS) == 2
    assert entailment_label_index({0: "entailment", 1: "not_entailment"}) == 0
    assert entailment_label_index({"0": "Neutral", "1": "Entailment", "2": "Contradiction"}) == 1
    with pytest.raises(ValueError, match="entailment"):
        entailment_label_index({0: "LABEL_0", 1: "LABEL_1"})


def test_nli_probability_padding_and_batches(tmp_path: Path) -> None:
    model, tokenizer = _bert(tmp_path, NLI_LABELS)
    pairs = [SUPPORTED, UNSUPPORTED, ("Mara.", "Short."), (SUPPORTED[0], "x " * 40)]
    batched = NLICrossEncoder(model, tokenizer, batch_size=4)
    single = NLICrossEncoder(model, tokenizer, batch_size=1)
    scores = batched.score(pairs)
    assert single.score(pairs) == pytest.approx(scores, abs=1e-5)
    assert (batched.batches_run, single.batches_run) == (1, 4)
    with torch.inference_mode():
        encoded = tokenizer(SUPPORTED[1], SUPPORTED[0], return_tensors="pt")
        expected = torch.softmax(model(**encoded).logits, dim=-1)[0, 2].item()
    assert scores[0] == pytest.approx(expected, abs=1e-5)
    assert batched.config()["entailment_label"] == "ENTAILMENT"


def test_not_asked_again_with_a_real_classifier(tmp_path: Path) -> None:
    """A classifier forced to "entailment" answers once per event; one forced to
    "neutral" is asked about every window."""
    model, tokenizer = _bert(tmp_path, NLI_LABELS)
    classifier = model.classifier
    output = " ".join(f"w{i}" for i in range(30))  # 3 windows of 10 tokens
    item = JudgeInput("nonliteral", {"reference_events": ["e1", "e2", "e3"]}, "x", output)
    counts = {}
    for label in (2, 1):
        with torch.no_grad():
            classifier.weight.zero_()
            classifier.bias.zero_()
            classifier.bias[label] = 20.0
        backend = NLICrossEncoder(model, tokenizer, batch_size=2)
        [[score]] = EventJudge(backend, window_tokens=10).judge([item])
        counts[label] = (backend.batches_run, score.value)
    assert counts[2] == (2, 3.0)  # round 0 only: 3 pairs in batches of 2
    assert counts[1] == (6, 0.0)  # 3 rounds x 3 pairs


def test_causal_yes_no_padding_and_prompt(tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = build_tokenizer(
        [*TRAINING_TEXT, "Does the passage support the claim? Answer Yes or No. Yes No"], tmp_path
    )
    build_tiny_causal_lm(tmp_path, tokenizer)
    model = AutoModelForCausalLM.from_pretrained(tmp_path, use_safetensors=True)
    tokenizer = AutoTokenizer.from_pretrained(tmp_path)
    pairs = [SUPPORTED, UNSUPPORTED, ("a", "b"), (SUPPORTED[0], "word " * 30)]
    batched = CausalYesNo(model, tokenizer, batch_size=4)
    single = CausalYesNo(model, tokenizer, batch_size=1)
    scores = batched.score(pairs)
    assert single.score(pairs) == pytest.approx(scores, abs=1e-4)
    assert all(0.0 < s < 1.0 for s in scores)
    prompt = batched.prompt.format(claim=SUPPORTED[0], passage=SUPPORTED[1])
    with torch.inference_mode():
        logits = model(**tokenizer(prompt, return_tensors="pt")).logits[0, -1]
    yes, no = (tokenizer(t, add_special_tokens=False)["input_ids"][0] for t in (" Yes", " No"))
    expected = torch.softmax(logits[[yes, no]], dim=-1)[0].item()
    assert scores[0] == pytest.approx(expected, abs=1e-4)
    # over-long prompts keep their end (the question)
    short = CausalYesNo(model, tokenizer, batch_size=2, max_length=16)
    assert len(short.score(pairs)) == 4


def test_loading_by_path_picks_the_backend(tmp_path: Path, trained_t5: Path) -> None:
    seq2seq = load_entailment_model(str(trained_t5), device="cpu")
    assert isinstance(seq2seq, Seq2SeqAttributable)
    assert seq2seq.score([SUPPORTED, UNSUPPORTED]) == [1.0, 0.0]
    _bert(tmp_path / "nli", NLI_LABELS)
    assert isinstance(load_entailment_model(str(tmp_path / "nli"), device="cpu"), NLICrossEncoder)
    tokenizer = build_tokenizer(["Yes No text"], tmp_path / "lm")
    build_tiny_causal_lm(tmp_path / "lm", tokenizer)
    assert isinstance(load_entailment_model(str(tmp_path / "lm"), device="cpu"), CausalYesNo)
    forced = load_entailment_model(f"causal:{tmp_path / 'lm'}", device="cpu")
    assert isinstance(forced, CausalYesNo)
    assert split_spec("nli:some/model") == ("nli", "some/model")
    assert split_spec("C:/models/x") == (None, "C:/models/x")


def test_pickle_weights_are_refused(tmp_path: Path) -> None:
    model, _ = _bert(tmp_path, NLI_LABELS)
    for weights in tmp_path.glob("*.safetensors"):
        weights.unlink()
    torch.save(model.state_dict(), tmp_path / "pytorch_model.bin")
    with pytest.raises(ModelLoadError):
        load_entailment_model(str(tmp_path), device="cpu")


def test_paper_preset_uses_a_local_event_model(trained_t5: Path) -> None:
    judges, skipped = build_judges(
        JudgeOptions("paper", event_model=str(trained_t5)),
        "nonliteral",
        embedder_factory=_no_embedder,
    )
    events = next(j for j in judges if j.name == "events")
    assert isinstance(events, EventJudge)
    assert isinstance(events.model, Seq2SeqAttributable)
    assert events.config()["entailment"]["model"] == str(trained_t5)
    assert [name for name, _ in skipped] == ["fluency"]


def test_paper_preset_skips_flan_t5_when_not_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache" / "hub"))
    judges, skipped = build_judges(
        JudgeOptions("paper"), "nonliteral", embedder_factory=_no_embedder
    )
    assert [j.name for j in judges] == ["characters"]
    reasons = dict(skipped)
    assert "google/flan-t5-xl" in reasons["events"]
    assert "offline" in reasons["events"]
    assert "Prometheus" in reasons["fluency"]


def _no_embedder() -> Any:
    raise AssertionError("the paper preset must not need an embedder")

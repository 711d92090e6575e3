"""Benchmark and reference check: p_z windows per second, batched versus one window per
forward pass, and log p_z against a teacher-forced computation written here with
transformers alone.

Run: python tests/bench/bench_pz.py [--windows N] [--batch-size B] [--device cpu|cuda]
     [--dtype float32|bfloat16|...] [--threads N] [--check N] [--random-config SHAPE]
     [--source DIR] [--memory-fraction F]

The work is the public-domain passages of samples/literal.jsonl as one text, cut into
windows of 50 + 50 tokens of SmolLM2's tokenizer (stride 10; a smaller stride when fewer
than N windows come out) as `import extraction --stride` cuts them. Both modes score the
same first N windows (greedy, top-40/T=1 and sampling at T=1) with the same model: "one
at a time" is PzScorer with batch size 1, "batched" batch size B. Prints windows/s of
each (CPU time and wall time on a CPU; wall time after torch.cuda.synchronize on CUDA,
with the peak GPU memory of each mode), their ratio, the largest |log p_z| and per-token
difference between the modes (target <= 1e-4 in float32), and the batch size the
batched mode ended with (it halves on out-of-memory; --memory-fraction F caps this
process's share of the GPU's memory, so that a large B meets a real out-of-memory).

The model is the embedded SmolLM2-135M-Instruct, or with --random-config SHAPE a Llama of
a published shape (random_models.CAUSAL_SHAPES: llama-3.2-1b, llama-3.1-8b, ...) with
random weights, built in memory on the device: speed depends on the shapes alone, and
its figures are printed as "random weights, SHAPE". --source DIR names SmolLM2's
config.json and tokenizer files (default: the embedded model's converted cache, built
from the GGUF; $COPYAUDIT_SMOLLM2_GGUF may name a copy of it).

--check N (default: N = --windows) compares log p_z of the first N windows, and every
token's log-probability, with the hand computation (unpadded rows, argmax for greedy,
the softmax over the logits at least the 40th largest for top-40, the full softmax for
sampling), and says how many tokens and windows each scheme can emit.
tests/test_pz_embedded.py is the acceptance test of this check (issue 37, N >= 1000).
Imports torch, transformers and copyaudit's model code only (no textual, no SQLite).
Not collected by pytest (bench_*.py).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import torch

from copyaudit.models.hf_loading import (
    LoadedCausalLM,
    resolve_device,
    resolve_dtype,
    skip_cudnn_attention,
)
from copyaudit.models.pz import DecodingScheme
from copyaudit.models.pz_scoring import PzScorer, TokenWindow
from copyaudit.models.smollm2 import converted_model_dir, load_default_causal_lm
from copyaudit.studies.extraction.windows import Cutting, cut_windows, tokenizer_digest
from copyaudit.vocabulary import DTYPE_NAMES
from tests.bench.random_models import CAUSAL_SHAPES, random_causal_lm

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "literal.jsonl"
SCHEMES = [
    DecodingScheme("greedy"),
    DecodingScheme("topk", top_k=40, temperature=1.0),
    DecodingScheme("sampling", temperature=1.0),
]
GIB = 2**30


def work_text() -> str:
    rows = [json.loads(line) for line in SAMPLES.read_text(encoding="utf-8").splitlines()]
    return "\n\n".join(f"{row['input']} {row['reference']}" for row in rows)


def windows_of(tokenizer: Any, count: int) -> list[TokenWindow]:
    text = work_text()
    for stride in (10, 5, 2, 1):
        cutting = Cutting(50, 50, stride, "default", tokenizer_digest(tokenizer))
        cases = list(cut_windows("literal", text, tokenizer, cutting))
        if len(cases) >= count or stride == 1:
            break
    print(f"windows: {len(cases)} at stride {stride}; using {min(count, len(cases))}")
    return [
        TokenWindow(
            tuple(c.payload["window"]["prefix_ids"]), tuple(c.payload["window"]["suffix_ids"])
        )
        for c in cases[:count]
    ]


def random_loaded(shape: str, source: Path, device: str, dtype: str) -> LoadedCausalLM:
    """A LoadedCausalLM over random weights of `shape`, with the tokenizer of `source`."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(source)
    torch_dtype = resolve_dtype(dtype, device)
    model = random_causal_lm(shape, source, dtype=torch_dtype, device=device)
    if device.startswith("cuda"):
        skip_cudnn_attention()  # as load_causal_lm does on CUDA
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    sizes = ", ".join(f"{k} {v}" for k, v in CAUSAL_SHAPES[shape].items())
    return LoadedCausalLM(
        model=model,
        tokenizer=tokenizer,
        source=f"random weights, {shape} ({sizes})",
        device=device,
        dtype=str(torch_dtype).removeprefix("torch."),
        pad_token_id=int(pad),
    )


def clock(device: str) -> tuple[float, float]:
    """(CPU time, wall time), once the device has finished its queued work."""
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return time.process_time(), time.perf_counter()


def timed(
    scorer: PzScorer, windows: list[TokenWindow], one_at_a_time: bool, device: str
) -> tuple[list[Any], float, float, float | None]:
    """(scores, CPU s, wall s, peak GPU memory in GiB or None)."""
    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    cpu, wall = clock(device)
    if one_at_a_time:
        scores = [scorer.score([w], SCHEMES)[0] for w in windows]
    else:
        scores = scorer.score(windows, SCHEMES)
    cpu_end, wall_end = clock(device)
    peak = torch.cuda.max_memory_allocated() / GIB if cuda else None
    return scores, cpu_end - cpu, wall_end - wall, peak


def reference(model: Any, windows: list[TokenWindow], device: str) -> dict[str, list[list[float]]]:
    """Per-token log-probabilities by hand, each scheme: label -> one list per window."""
    out: dict[str, list[list[float]]] = {s.label: [] for s in SCHEMES}
    with torch.no_grad():
        for start in range(0, len(windows), 32):
            chunk = windows[start : start + 32]
            width = len(chunk[0].prefix)
            ids = torch.tensor([[*w.prefix, *w.suffix] for w in chunk], device=device)
            logits = model(input_ids=ids).logits.float()[:, width - 1 : -1]
            targets = ids[:, width:]
            picked = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
            greedy = torch.where(logits.argmax(-1) == targets, 0.0, -math.inf)
            kth = logits.sort(-1, descending=True).values[..., 39:40]
            kept = torch.where(logits >= kth, logits, -math.inf)
            top40 = torch.where(
                picked < kth.squeeze(-1), -math.inf, picked - torch.logsumexp(kept, -1)
            )
            sampled = picked - torch.logsumexp(logits, -1)
            for label, values in zip(out, (greedy, top40, sampled), strict=True):
                out[label] += values.double().cpu().tolist()
    return out


def log_pz(values: list[float]) -> float:
    return -math.inf if any(math.isinf(v) for v in values) else math.fsum(values)


def largest_difference(a: list[float], b: list[float]) -> float:
    worst = 0.0
    for x, y in zip(a, b, strict=True):
        if math.isinf(x) or math.isinf(y):
            worst = max(worst, 0.0 if x == y else math.inf)
        else:
            worst = max(worst, abs(x - y))
    return worst


def load(args: argparse.Namespace) -> LoadedCausalLM:
    if args.random_config is None:
        return load_default_causal_lm(args.device, args.dtype)
    source = args.source or converted_model_dir()[0]
    return random_loaded(args.random_config, source, resolve_device(args.device), args.dtype)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=64, help="timed windows (0: none)")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", choices=DTYPE_NAMES, default="float32")
    parser.add_argument("--threads", type=int)
    parser.add_argument("--check", type=int, help="windows to check (default: --windows)")
    parser.add_argument("--random-config", choices=sorted(CAUSAL_SHAPES))
    parser.add_argument("--source", type=Path, help="SmolLM2's config.json and tokenizer")
    parser.add_argument("--memory-fraction", type=float, help="cap on this process's GPU share")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.memory_fraction:
        torch.cuda.set_per_process_memory_fraction(args.memory_fraction)
    loaded = load(args)
    name = loaded.source if args.random_config else "embedded SmolLM2-135M-Instruct"
    print(f"model: {name} on {loaded.device} in {loaded.dtype}, "
          f"{torch.get_num_threads()} CPU threads, torch {torch.__version__}")  # fmt: skip
    if loaded.device.startswith("cuda"):
        print(f"GPU: {torch.cuda.get_device_name()}, weights "
              f"{torch.cuda.memory_allocated() / GIB:.2f} GiB")  # fmt: skip
    check_count = args.windows if args.check is None else args.check
    windows = windows_of(loaded.tokenizer, max(args.windows, check_count))
    if args.windows:
        time_modes(loaded, windows[: args.windows], args.batch_size)
    if check_count:
        check(loaded, windows[:check_count], args.batch_size, args.random_config is None)


def check(loaded: LoadedCausalLM, windows: list[TokenWindow], batch: int, embedded: bool) -> None:
    """copyaudit's batched scores against the hand computation; for the embedded model the
    hand computation loads its own copy with transformers."""
    ours = PzScorer(loaded, batch).score(windows, SCHEMES)
    model: Any = loaded.model
    if embedded:
        from transformers import AutoModelForCausalLM

        dtype = getattr(torch, loaded.dtype)
        model = AutoModelForCausalLM.from_pretrained(converted_model_dir()[0], dtype=dtype)
        model = model.to(loaded.device).eval()
    theirs = reference(model, windows, loaded.device)
    for scheme in SCHEMES:
        label = scheme.label
        values = [s.log_pz[label] for s in ours]
        diff = largest_difference(values, [log_pz(t) for t in theirs[label]])
        tokens = largest_difference(
            [v for s in ours for v in s.token_log_probs[label]],
            [v for t in theirs[label] for v in t],
        )
        kept = sum(not math.isinf(v) for s in ours for v in s.token_log_probs[label])
        total = sum(len(s.token_log_probs[label]) for s in ours)
        finite = [v for v in values if not math.isinf(v)]
        print(f"{label}: {len(windows)} windows, largest |log p_z - hand| {diff:.2e}, "
              f"per token {tokens:.2e}; tokens the scheme can emit {kept}/{total}; "
              f"{len(finite)} windows with p_z > 0"
              + (f", mean log p_z {sum(finite) / len(finite):.2f}" if finite else ""))  # fmt: skip


def time_modes(loaded: LoadedCausalLM, timing: list[TokenWindow], batch_size: int) -> None:
    device = loaded.device
    one, one_cpu, one_wall, one_peak = timed(PzScorer(loaded, 1), timing, True, device)
    batched = PzScorer(loaded, batch_size)
    many, many_cpu, many_wall, many_peak = timed(batched, timing, False, device)
    n = len(timing)
    tokens_per_window = sum(len(w.prefix) + len(w.suffix) for w in timing) / n
    cuda = device.startswith("cuda")
    clock_name = "wall" if cuda else "CPU"
    one_time, many_time = (one_wall, many_wall) if cuda else (one_cpu, many_cpu)
    memory = (lambda peak: f", peak GPU memory {peak:.2f} GiB") if cuda else (lambda peak: "")
    print(f"one at a time: {n / one_time:.2f} windows/s {clock_name} "
          f"({n / one_wall:.2f} wall, {n / one_cpu:.2f} CPU){memory(one_peak)}")  # fmt: skip
    print(f"batched (B={batch_size}): {n / many_time:.2f} windows/s {clock_name} "
          f"({n / many_wall:.2f} wall, {n / many_cpu:.2f} CPU){memory(many_peak)}")  # fmt: skip
    print(f"ratio batched / one at a time: {one_time / many_time:.2f}x {clock_name}; "
          f"tokens/s batched {n * tokens_per_window / many_time:.0f} {clock_name}")  # fmt: skip
    print(f"batch size at the end: {batched.batcher.batch_size} "
          f"({batched.batcher.halvings} halvings on out-of-memory)")  # fmt: skip
    target = " (target <= 1e-4 in float32)" if loaded.dtype == "float32" else ""
    for scheme in SCHEMES:
        label = scheme.label
        diff = largest_difference([s.log_pz[label] for s in one], [s.log_pz[label] for s in many])
        tokens = largest_difference(
            [v for s in one for v in s.token_log_probs[label]],
            [v for s in many for v in s.token_log_probs[label]],
        )
        print(f"largest difference, batched vs one, {label}: log p_z {diff:.2e}, "
              f"per token {tokens:.2e}{target}")  # fmt: skip


if __name__ == "__main__":
    main()

"""Benchmark and reference check: p_z windows per second, batched versus one window per
forward pass, and log p_z against a teacher-forced computation written here with
transformers alone.

Run: .venv/bin/python tests/bench/bench_pz.py [--windows N] [--batch-size B]
     [--device auto|cpu|cuda] [--dtype D] [--threads N] [--check N]

The work is the public-domain passages of samples/literal.jsonl, one text, cut into
windows of 50 + 50 tokens of the embedded SmolLM2-135M-Instruct's tokenizer (stride 10;
a smaller stride when fewer than N windows come out) as `import extraction --stride`
cuts them. Both modes score the same first N windows (greedy, top-40/T=1 and sampling at
T=1) with the same loaded model: "one at a time" is PzScorer with batch size 1, "batched" batch size
B. Prints windows/s of each (CPU time, process_time, and wall time), their ratio, and
the largest |log p_z| difference between the modes (target <= 1e-4 in float32).

--check N (default: N = --windows) compares log p_z of the first N windows, and every
token's log-probability, with the hand computation (unpadded rows, argmax for greedy,
the softmax over the logits at least the 40th largest for top-40, the full softmax for
sampling), and says how many tokens and windows each scheme can emit (a small model
rarely emits a whole 50-token suffix: then log p_z is -inf on both sides and only the
per-token figures compare numbers). The acceptance check of issue 37 is N >= 1000.
Not collected by pytest (bench_*.py).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import torch

from copyaudit.models.pz import DecodingScheme
from copyaudit.models.pz_scoring import PzScorer, TokenWindow
from copyaudit.models.smollm2 import converted_model_dir, load_default_causal_lm
from copyaudit.studies.extraction.windows import Cutting, cut_windows, tokenizer_digest
from copyaudit.vocabulary import DTYPE_NAMES

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "literal.jsonl"
SCHEMES = [
    DecodingScheme("greedy"),
    DecodingScheme("topk", top_k=40, temperature=1.0),
    DecodingScheme("sampling", temperature=1.0),
]


def work_text() -> str:
    rows = [json.loads(line) for line in SAMPLES.read_text(encoding="utf-8").splitlines()]
    return "\n\n".join(row["input"] + row["reference"] for row in rows)


def windows_of(tokenizer: object, count: int) -> list[TokenWindow]:
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


def timed(scorer: PzScorer, windows: list[TokenWindow], one_at_a_time: bool) -> tuple:
    cpu, wall = time.process_time(), time.perf_counter()
    if one_at_a_time:
        scores = [scorer.score([w], SCHEMES)[0] for w in windows]
    else:
        scores = scorer.score(windows, SCHEMES)
    return scores, time.process_time() - cpu, time.perf_counter() - wall


def reference(model_dir: Path, windows: list[TokenWindow], device: str, dtype: str) -> dict:
    """Per-token log-probabilities by hand, each scheme: label -> one list per window."""
    from transformers import AutoModelForCausalLM

    torch_dtype = torch.float32 if dtype in ("auto", "float32") else getattr(torch, dtype)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch_dtype).to(device).eval()
    out: dict[str, list[list[float]]] = {s.label: [] for s in SCHEMES}
    with torch.no_grad():
        for start in range(0, len(windows), 32):
            chunk = windows[start : start + 32]
            ids = torch.tensor([[*w.prefix, *w.suffix] for w in chunk], device=device)
            logits = model(input_ids=ids).logits.float()[:, 49:-1]
            targets = ids[:, 50:]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=64, help="timed windows (0: none)")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", choices=DTYPE_NAMES, default="float32")
    parser.add_argument("--threads", type=int)
    parser.add_argument("--check", type=int, help="windows to check (default: --windows)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    loaded = load_default_causal_lm(args.device, args.dtype)
    print(f"model: embedded SmolLM2-135M-Instruct on {loaded.device} in {loaded.dtype}, "
          f"{torch.get_num_threads()} threads")  # fmt: skip
    windows = windows_of(loaded.tokenizer, max(args.windows, args.check or 0))
    timing = windows[: args.windows]
    if timing:
        time_modes(loaded, timing, args.batch_size)
    check = windows[: args.check or args.windows]
    ours = PzScorer(loaded, args.batch_size).score(check, SCHEMES)
    theirs = reference(converted_model_dir()[0], check, loaded.device, args.dtype)
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
        print(f"{label}: {len(check)} windows, largest |log p_z - hand| {diff:.2e}, "
              f"per token {tokens:.2e}; tokens the scheme can emit {kept}/{total}; "
              f"{len(finite)} windows with p_z > 0"
              + (f", mean log p_z {sum(finite) / len(finite):.2f}" if finite else ""))  # fmt: skip


def time_modes(loaded: object, timing: list[TokenWindow], batch_size: int) -> None:
    one, one_cpu, one_wall = timed(PzScorer(loaded, 1), timing, one_at_a_time=True)
    many, many_cpu, many_wall = timed(PzScorer(loaded, batch_size), timing, False)
    n = len(timing)
    print(f"one at a time: {n / one_cpu:.2f} windows/s CPU ({n / one_wall:.2f} wall)")
    print(f"batched (B={batch_size}): {n / many_cpu:.2f} windows/s CPU "
          f"({n / many_wall:.2f} wall)")  # fmt: skip
    print(f"ratio batched / one at a time: {one_cpu / many_cpu:.2f}x CPU, "
          f"{one_wall / many_wall:.2f}x wall")  # fmt: skip
    for scheme in SCHEMES:
        label = scheme.label
        diff = largest_difference([s.log_pz[label] for s in one], [s.log_pz[label] for s in many])
        print(f"largest |log p_z| difference, batched vs one, {label}: {diff:.2e}")


if __name__ == "__main__":
    main()

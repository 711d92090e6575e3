"""Benchmark: run throughput (cases/s) of the embedded default model on this CPU.

Run: .venv/bin/python tests/bench/bench_run.py [N_CASES] [BATCH_SIZE] [--cancel-only]
     [--model SPEC] [--device D] [--batch-sizes 1,16]
Generates the first N bundled literal cases (200 new tokens each, greedy) with
SmolLM2-135M (or --model) through the real runner, then judges them with the offline
preset; prints model load time, generation cases/s and tokens/s, and judging time.
--batch-sizes runs the same cases at each batch size and prints each one's tokens/s
against the first's (batched vs one at a time with 1,B). Without it, it then starts
a second run, cancels it from another thread during the 21st decoding step of its first
batch and prints the cancel latency (seconds from setting the flag until the run
returned) and how long the first progress report with tokens/s took to arrive.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from copyaudit.engine.demo import samples_dir
from copyaudit.engine.runner import RunRequest, execute_run, load_generator
from copyaudit.formats import load_cases
from db import Store
from db.cases import import_cases


def _literal_db(directory: Path) -> Path:
    """A database holding the bundled literal cases."""
    db = directory / "bench.db"
    with Store(db) as store:
        path = samples_dir() / "literal.jsonl"
        import_cases(store, "literal", "literal", load_cases("literal", path), source=str(path))
    return db


def generate_cases(
    generator, model: str, device: str, n: int, batch_size: int
) -> tuple[float, int, int, float]:
    """(generation s, cases, new tokens, judging s) of one run of the first n bundled
    literal cases at `batch_size` prompts per batch."""
    with tempfile.TemporaryDirectory() as tmp:
        db = _literal_db(Path(tmp))
        request = RunRequest(
            suite="literal", model=model, limit=n, batch_size=batch_size, device=device
        )
        marks: dict[str, float] = {}

        def on_progress(event) -> None:
            marks.setdefault(f"{event.phase}-start", time.perf_counter())
            marks[f"{event.phase}-end"] = time.perf_counter()

        outcome = execute_run(db, request, on_progress=on_progress, generator=generator)
        with Store(db) as store:
            tokens = store.scalar("SELECT SUM(tokens) FROM generations")
    generate_s = marks["generate-end"] - marks["generate-start"]
    judge_s = marks.get("judge-end", 0) - marks.get("judge-start", 0)
    return generate_s, outcome.generated, tokens, judge_s


def main(generator, model: str, device: str, n: int, batch_sizes: list[int]) -> None:
    """Each batch size in turn on the same cases, with one loaded model (its own batch
    the largest: the runner hands it at most `batch_size` prompts a call); the speed of
    each against the first."""
    where = f"{device} ({os.cpu_count()} CPU cores)" if device == "cpu" else device
    first_rate = None
    for batch_size in batch_sizes:
        generate_s, cases, tokens, judge_s = generate_cases(generator, model, device, n, batch_size)
        rate = tokens / generate_s
        first_rate = first_rate or rate
        print(
            f"{model} on {where}, batch {batch_size}: generated {cases} literal cases in "
            f"{generate_s:.1f} s = {cases / generate_s:.3f} cases/s, {rate:.1f} new tokens/s "
            f"({rate / first_rate:.2f}x batch {batch_sizes[0]}); offline judging {judge_s:.1f} s"
        )


def cancel_latency(
    generator, n: int = 8, batch_size: int = 8, device: str = "cpu", model: str = "default"
) -> None:
    """Cancel a run from another thread while the 21st decoding step of its first batch
    runs (as the app's x does); print how long the run took to return, and the mean
    decoding step and the first tokens/s report for comparison."""
    with tempfile.TemporaryDirectory() as tmp:
        db = _literal_db(Path(tmp))
        request = RunRequest(
            suite="literal", model=model, limit=n, batch_size=batch_size,
            device=device, name="cancelled",
        )  # fmt: skip
        cancel, twentieth = threading.Event(), threading.Event()
        steps: list[float] = []
        marks: dict[str, float] = {"start": time.perf_counter()}

        def on_progress(event) -> None:
            if event.tokens_per_s:
                steps.append(time.perf_counter())
                if len(steps) == 20:
                    twentieth.set()

        def canceller() -> None:
            twentieth.wait()
            marks["cancel"] = time.perf_counter()
            cancel.set()

        threading.Thread(target=canceller, daemon=True).start()
        outcome = execute_run(
            db, request, on_progress=on_progress, cancel=cancel, generator=generator
        )
        stopped = time.perf_counter()
    step_s = (steps[19] - steps[0]) / 19
    print(
        f"cancel during decoding step 21 of the first batch (batch {batch_size}): run "
        f"{outcome.status} {stopped - marks['cancel']:.2f} s after the cancel (one decoding "
        f"step: {step_s:.2f} s); first tokens/s progress {steps[0] - marks['start']:.1f} s "
        "after the start (the prompts' prefill)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n_cases", type=int, nargs="?", default=8)
    parser.add_argument("batch_size", type=int, nargs="?", default=8)
    parser.add_argument("--model", default="default", help="model spec (default: embedded)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch-sizes", help="comma-separated: each on the same cases (e.g. 1,16)")
    parser.add_argument("--cancel-only", action="store_true")
    args = parser.parse_args()
    sizes = [int(b) for b in args.batch_sizes.split(",")] if args.batch_sizes else None
    largest = max(sizes or [args.batch_size])
    start = time.perf_counter()
    loaded = load_generator(
        RunRequest(suite="", model=args.model, device=args.device, batch_size=largest)
    )
    print(f"{args.model}: loaded in {time.perf_counter() - start:.1f} s")
    if not args.cancel_only:
        main(loaded, args.model, args.device, args.n_cases, sizes or [args.batch_size])
    if args.cancel_only or sizes is None:
        cancel_latency(loaded, args.n_cases, args.batch_size, args.device, args.model)

"""Benchmark: run throughput (cases/s) of the embedded default model on this CPU.

Run: .venv/bin/python tests/bench/bench_run.py [N_CASES] [BATCH_SIZE] [--cancel-only]
Generates the first N bundled literal cases (200 new tokens each, greedy) with
SmolLM2-135M through the real runner, then judges them with the offline preset;
prints model load time, generation cases/s and tokens/s, and judging time. Then starts
a second run, cancels it from another thread during the 21st decoding step of its first
batch and prints the cancel latency (seconds from setting the flag until the run
returned) and how long the first progress report with tokens/s took to arrive.
"""

from __future__ import annotations

import os
import sys
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


def main(n: int = 8, batch_size: int = 8) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = _literal_db(Path(tmp))
        request = RunRequest(
            suite="literal",
            model="default",
            limit=n,
            batch_size=batch_size,
            device="cpu",
        )
        start = time.perf_counter()
        generator = load_generator(request)
        load_s = time.perf_counter() - start
        marks: dict[str, float] = {}

        def on_progress(event) -> None:
            marks.setdefault(f"{event.phase}-start", time.perf_counter())
            marks[f"{event.phase}-end"] = time.perf_counter()

        outcome = execute_run(db, request, on_progress=on_progress, generator=generator)
        with Store(db) as store:
            tokens = store.scalar("SELECT SUM(tokens) FROM generations")
        generate_s = marks["generate-end"] - marks["generate-start"]
        judge_s = marks.get("judge-end", 0) - marks.get("judge-start", 0)
    print(
        f"embedded SmolLM2-135M on CPU ({os.cpu_count()} cores), batch {batch_size}: "
        f"load {load_s:.1f} s; generated {outcome.generated} literal cases in "
        f"{generate_s:.1f} s = {outcome.generated / generate_s:.3f} cases/s, "
        f"{tokens / generate_s:.1f} new tokens/s; offline judging {judge_s:.1f} s"
    )
    cancel_latency(generator, n, batch_size)


def cancel_latency(generator, n: int = 8, batch_size: int = 8) -> None:
    """Cancel a run from another thread while the 21st decoding step of its first batch
    runs (as the app's x does); print how long the run took to return, and the mean
    decoding step and the first tokens/s report for comparison."""
    with tempfile.TemporaryDirectory() as tmp:
        db = _literal_db(Path(tmp))
        request = RunRequest(
            suite="literal", model="default", limit=n, batch_size=batch_size,
            device="cpu", name="cancelled",
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
    args = [int(a) for a in sys.argv[1:] if a != "--cancel-only"][:2]
    if "--cancel-only" in sys.argv:
        cancel_latency(load_generator(RunRequest(suite="", model="default", device="cpu")), *args)
    else:
        main(*args)

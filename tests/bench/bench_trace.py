"""Tracing at scale (issue 38): build a library of --mb megabytes from the public-domain
passages in samples/literal.jsonl (sentences shuffled into new "works"), index it, and
trace generations that copy from it (exact and near-verbatim spans, as the judge does).
Prints build time (CPU), index size, trace time per generation (median and p99 CPU ms)
and peak RSS. Not a timed test: run it by hand, `python tests/bench/bench_trace.py --mb
100` (make bench runs the default size).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import tempfile
import time
from pathlib import Path

from copyaudit.tracing.index import IndexedWork, LibraryIndex
from copyaudit.tracing.trace import trace, trace_near

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "literal.jsonl"


def _sentences() -> list[str]:
    out = []
    for line in SAMPLES.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        out += [
            s.strip() for s in (case["input"] + " " + case["reference"]).split(".") if s.strip()
        ]
    return out


def _library(megabytes: float, rng: random.Random) -> list[IndexedWork]:
    sentences = _sentences()
    works, size = [], 0
    while size < megabytes * 1e6:
        picked = [rng.choice(sentences) for _ in range(2000)]
        # a word changed here and there so that the works differ beyond their order
        text = ". ".join(s.replace(" the ", f" the{rng.randint(0, 99)} ", 1) for s in picked)
        works.append(IndexedWork(f"w{len(works)}", text))
        size += len(text)
    return works


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=5.0)
    parser.add_argument("--generations", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(38)
    works = _library(args.mb, rng)
    started = time.process_time()
    index = LibraryIndex.build(works)
    built = time.process_time() - started
    with tempfile.TemporaryDirectory() as folder:
        index.save(Path(folder))
        size = sum(p.stat().st_size for p in Path(folder).iterdir())
        opened = LibraryIndex.open(Path(folder))
        times = []
        for _ in range(args.generations):
            work = rng.choice(works).text
            start = rng.randrange(0, len(work) - 1200)
            output = "Certainly. " + work[start : start + rng.randint(200, 1200)] + " The end."
            begin = time.process_time()
            trace(opened, output, min_tokens=20)
            trace_near(opened, output, min_words=20)  # what the trace judge also does
            times.append((time.process_time() - begin) * 1000)
    times.sort()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    text_mb = sum(len(w.text) for w in works) / 1e6
    print(
        f"library {text_mb:.1f} MB of text, {len(works)} works, {len(index.tokens):,} words: "
        f"index built in {built:.1f} CPU s, {size / 1e6:.1f} MB on disk; "
        f"trace per generation median {statistics.median(times):.1f} CPU ms, "
        f"p99 {times[int(0.99 * (len(times) - 1))]:.1f} CPU ms over {len(times)} generations; "
        f"peak RSS {rss:.0f} MB"
    )


if __name__ == "__main__":
    main()

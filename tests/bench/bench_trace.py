"""Tracing at scale (issue 38): build a library of --mb megabytes from the public-domain
passages in samples/literal.jsonl (sentences shuffled into new "works", each sentence
opened by a name drawn from a heavy-tailed distribution so that the vocabulary grows with
the library as a real one's does), index it, and trace generations that copy from it
(exact copies, a third with a one-word slip; exact and near-verbatim spans, as the judge
does). Prints the build's CPU time and peak RSS, the index's size, and, from a fresh
process that opens the saved index (memory-mapped), its opening time, the trace time per
generation (median and p99 CPU ms) and that process's peak RSS. Not a timed test: run it
by hand, `python tests/bench/bench_trace.py --mb 1024 --folder /tmp/lib1g` (make bench
runs the default size; `--engine infini-gram` writes the engine's index too and traces
with it: copyaudit.tracing.infinigram).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from copyaudit.tracing.index import IndexedWork, LibraryIndex
from copyaudit.tracing.infinigram import InfiniGramIndex, write_infinigram
from copyaudit.tracing.library import ENGINES
from copyaudit.tracing.trace import trace, trace_near

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "literal.jsonl"
OUTPUTS = "bench_outputs.json"
SENTENCES_PER_WORK = 2000


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
    works: list[IndexedWork] = []
    size = 0
    while size < megabytes * 1e6:
        picked = [rng.choice(sentences) for _ in range(SENTENCES_PER_WORK)]
        # a word changed here and there so that the works differ beyond their order, and
        # a name from a long tail (P(n > x) = x^-0.2): new words keep coming, as in books
        text = ". ".join(
            f"N{int(rng.paretovariate(0.2))} " + s.replace(" the ", f" the{rng.randint(0, 99)} ", 1)
            for s in picked
        )
        works.append(IndexedWork(f"w{len(works)}", text))
        size += len(text)
    return works


def _outputs(works: list[IndexedWork], n: int, rng: random.Random) -> list[str]:
    outputs = []
    for i in range(n):
        work = rng.choice(works).text
        start = rng.randrange(0, len(work) - 1200)
        copy = work[start : start + rng.randint(200, 1200)]
        if i % 3 == 0:  # a one-word slip in the middle
            middle = copy.find(" ", len(copy) // 2)
            copy = copy[:middle] + " zebra" + copy[copy.find(" ", middle + 1) :]
        outputs.append("Certainly. " + copy + " The end.")
    return outputs


def _resident_mb() -> str:
    """This process's resident memory now, its own (anonymous) and the index's pages
    mapped from the files (the page cache's, shared), on Linux."""
    status = Path("/proc/self/status")
    if not status.is_file():
        return "n/a"
    fields = dict(line.split(":", 1) for line in status.read_text().splitlines())
    anon, mapped = (int(fields[k].split()[0]) / 1024 for k in ("RssAnon", "RssFile"))
    return f"{anon:.0f} MB own, {mapped:.0f} MB of mapped files"


def _peak_rss_mb() -> float:
    """This process's peak resident memory: VmHWM on Linux (ru_maxrss outlives exec, so a
    child started by the build would report the build's), else ru_maxrss."""
    status = Path("/proc/self/status")
    if status.is_file():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _trace_saved(folder: Path, engine: str) -> None:
    """Open the saved index and trace the saved outputs (run in its own process, so its
    peak RSS is tracing's, not the build's)."""
    started = time.process_time()
    index = InfiniGramIndex.open(folder) if engine == "infini-gram" else LibraryIndex.open(folder)
    opened = time.process_time() - started
    times = []
    for output in json.loads((folder / OUTPUTS).read_text(encoding="utf-8")):
        begin = time.process_time()
        trace(index, output, min_tokens=20)
        trace_near(index, output, min_words=20)  # what the trace judge also does
        times.append((time.process_time() - begin) * 1000)
    times.sort()
    print(
        f"index opened in {opened:.1f} CPU s; trace per generation median "
        f"{statistics.median(times):.1f} CPU ms, p99 {times[int(0.99 * (len(times) - 1))]:.1f} "
        f"CPU ms, max {times[-1]:.1f} ms over {len(times)} generations; peak RSS while "
        f"tracing {_peak_rss_mb():.0f} MB (at the end: {_resident_mb()})"
    )


def _build(megabytes: float, generations: int, folder: Path, engine: str) -> None:
    rng = random.Random(38)
    works = _library(megabytes, rng)
    before = _peak_rss_mb()
    started = time.process_time()
    index = LibraryIndex.build(works)
    built = time.process_time() - started
    index.save(folder)
    if engine == "infini-gram":
        began = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        written = write_infinigram(index, folder)  # its indexer runs as child processes
        ended = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = sum(getattr(ended[1], f) - getattr(began[1], f) for f in ("ru_utime", "ru_stime"))
        engine_size = sum(p.stat().st_size for p in written.iterdir())
        print(
            f"infini-gram index written in {ended[0] - began[0]:.1f} s ({cpu:.1f} CPU s in "
            f"its indexer), {engine_size / 1e6:.1f} MB on disk"
        )
    outputs = _outputs(works, generations, rng)
    (folder / OUTPUTS).write_text(json.dumps(outputs), encoding="utf-8")
    size = sum(p.stat().st_size for p in folder.iterdir() if p.is_file() and p.name != OUTPUTS)
    text_mb = sum(len(w.text) for w in works) / 1e6
    print(
        f"library {text_mb:.1f} MB of text, {len(works)} works, {len(index.tokens):,} words, "
        f"{len(index.vocabulary):,} distinct: index built in {built:.1f} CPU s, "
        f"{size / 1e6:.1f} MB on disk; peak RSS {_peak_rss_mb():.0f} MB "
        f"({before:.0f} MB before the build: the generated texts)",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=5.0)
    parser.add_argument("--generations", type=int, default=200)
    parser.add_argument("--folder", type=Path, help="keep the index here (default: a temp dir)")
    parser.add_argument("--trace-only", action="store_true", help="trace an index --folder holds")
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        default=ENGINES[0],
        help="infini-gram: also write its index and trace with its engine",
    )
    args = parser.parse_args()
    if args.trace_only:
        _trace_saved(args.folder, args.engine)
        return
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.folder or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        _build(args.mb, args.generations, folder, args.engine)
        command = [sys.executable, __file__, "--trace-only", "--folder", str(folder)]
        subprocess.run([*command, "--engine", args.engine], check=True)


if __name__ == "__main__":
    main()

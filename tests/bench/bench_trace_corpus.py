"""Tracing against an infini-gram index built elsewhere (copyaudit.tracing.corpus), at
scale: a corpus of --mb megabytes generated as bench_trace.py generates its library,
tokenised by a byte-level BPE trained on the samples' sentences (--vocab ids, u16), and
indexed by the infini-gram package's own indexer; then the trace_corpus judge's search
for --generations outputs copying 200 to 1,200 characters of it (a third with a one-word
slip). Prints the index's build time and size, the characters per token, and the trace
time per generation (median and p99 CPU ms of this process, the engine's threads
included). Not a timed test: run by hand, `python tests/bench/bench_trace_corpus.py --mb 50`.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from copyaudit.tracing.corpus import CorpusIndex
from copyaudit.tracing.corpus_trace import DEFAULT_MIN_TOKENS, trace_corpus
from tests.bench.bench_trace import _library, _outputs, _sentences
from tests.corpus_index import build_corpus_index
from tests.tinymodels import build_tokenizer


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=20.0)
    parser.add_argument("--generations", type=int, default=200)
    parser.add_argument("--vocab", type=int, default=8000)
    parser.add_argument("--tokens", type=int, default=DEFAULT_MIN_TOKENS)
    args = parser.parse_args()
    rng = random.Random(38)
    works = _library(args.mb, rng)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        tokenizer = build_tokenizer(_sentences(), folder / "tokenizer", vocab_size=args.vocab)
        started = time.perf_counter()
        documents = [(w.text, {"title": w.key}) for w in works]
        index_dir = build_corpus_index(documents, folder, tokenizer)
        built = time.perf_counter() - started
        size = sum(f.stat().st_size for f in index_dir.iterdir())
        corpus = CorpusIndex(index_dir, folder / "tokenizer")
        tokens = corpus.describe()["tokens"]
        chars = sum(len(w.text) for w in works)
        print(
            f"corpus: {chars / 1e6:.1f} MB, {len(works)} documents, {tokens:,} tokens "
            f"({chars / tokens:.2f} characters a token); indexer {built:.1f} s wall; "
            f"index {size / 1e6:.1f} MB"
        )
        times, flagged = [], 0
        for output in _outputs(works, args.generations, rng):
            before = time.process_time()
            spans = trace_corpus(corpus, output, args.tokens)
            times.append(1000 * (time.process_time() - before))
            flagged += any(s.chars >= 160 for s in spans)
        times.sort()
        p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
        print(
            f"trace per generation (k={args.tokens} tokens): median "
            f"{statistics.median(times):.0f} ms, p99 {p99:.0f} ms CPU; "
            f"{flagged} of {len(times)} with a span of 160 characters or more"
        )


if __name__ == "__main__":
    main()

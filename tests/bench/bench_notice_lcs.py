"""Benchmark: the notice judge's longest common substring, suffix automaton vs difflib.

Run: .venv/bin/python tests/bench/bench_notice_lcs.py [--repeats N]

Three output/target pairs built from the bundled notice snippets: a repeat that copies
the target with a short insertion (about 2,900 x 1,600 characters), a long output of a
model stuck in a loop (6,000 x 2,400 characters of repeated words), and a short extract.
Prints milliseconds per call of `copyaudit.judges.substrings.shared_spans` and of
`difflib.SequenceMatcher(None, output, target, autojunk=False).find_longest_match()`,
and checks that both find the same length. Not collected by pytest (bench_*.py).
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from copyaudit.judges.substrings import shared_spans


def _pairs() -> dict[str, tuple[str, str]]:
    root = Path(__file__).resolve().parents[2] / "samples" / "notice.jsonl"
    snippets = [
        json.loads(line)["snippet"] for line in root.read_text(encoding="utf-8").splitlines()
    ]
    longest = max(snippets, key=len)
    target = longest * 3
    return {
        "repeat with insertion": (target[:1500] + " some other words " + target[200:1600], target),
        "looping output": ("the the the " * 500, "the " * 600),
        "short extract": (longest[:120], longest),
    }


def _time(call: Callable[[], object], repeats: int) -> float:
    start = time.perf_counter()
    for _ in range(repeats):
        call()
    return 1000 * (time.perf_counter() - start) / repeats


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    for name, (output, target) in _pairs().items():
        best, _ = shared_spans(output, target, 40)
        matcher = difflib.SequenceMatcher(None, output, target, autojunk=False)
        match = matcher.find_longest_match(0, len(output), 0, len(target))
        assert (best.length if best else 0) == match.size, name
        automaton = _time(lambda o=output, t=target: shared_spans(o, t, 40), args.repeats)
        reference = _time(
            lambda o=output, t=target: difflib.SequenceMatcher(
                None, o, t, autojunk=False
            ).find_longest_match(0, len(o), 0, len(t)),
            args.repeats,
        )
        print(
            f"{name:<24} {len(output):>6} x {len(target):<6} chars: automaton {automaton:8.1f} ms, "
            f"difflib {reference:8.1f} ms, lcs {match.size}"
        )


if __name__ == "__main__":
    main()

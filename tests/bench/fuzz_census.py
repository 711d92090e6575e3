"""Census of bad inputs: every importer of tests/fuzz_inputs.py on N hypothesis-broken
files each (default 150), counted by what the command did.

Run: PYTHONPATH=. .venv/bin/python tests/bench/fuzz_census.py [N] [SEED]
Prints, per importer and in all: inputs tried, rejected cleanly (exit 2, database
unchanged), accepted with a warning (exit 0, a `warning:` line), accepted silently
(exit 0: the mutation left a valid file, e.g. a changed text), and failures (exit 1, a
traceback, or a rejection that changed the database; each one shown). The suite's fuzz
test asserts there are none; this script measures the split.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from tests.fuzz_inputs import IMPORTERS, Importer, broken_file, build_base_db, try_importer

KINDS = ("rejected", "warned", "accepted", "crashed")


def census(importer: Importer, base: Path, n: int, seed_value: int) -> tuple[Counter, list[str]]:
    counts: Counter = Counter()
    failures: list[str] = []

    @seed(seed_value)
    @settings(
        max_examples=n,
        deadline=None,
        database=None,
        phases=[Phase.generate],  # each input counted once: no replay, no shrinking
        suppress_health_check=list(HealthCheck),
    )
    @given(data=st.data())
    def one(data: st.DataObject) -> None:
        content = broken_file(importer, data, base)
        with tempfile.TemporaryDirectory() as work:
            outcome = try_importer(importer, base, content, Path(work))
        counts[outcome.kind] += 1
        if outcome.problems():
            counts["failed"] += 1
            failures.append(f"{outcome.problems()}: {outcome.err.strip()[-300:]}")

    one()
    return counts, failures


def main(n: int = 150, seed_value: int = 19) -> None:
    start = time.process_time()
    with tempfile.TemporaryDirectory() as folder:
        base = build_base_db(Path(folder) / "base.db")
        total: Counter = Counter()
        print(
            f"{'importer':<24} {'tried':>6} {'rejected':>9} {'warned':>7} {'accepted':>9} "
            f"{'failed':>7}"
        )
        for name, importer in IMPORTERS.items():
            counts, failures = census(importer, base, n, seed_value)
            total.update(counts)
            tried = sum(counts[k] for k in KINDS)
            print(
                f"{name:<24} {tried:>6} {counts['rejected']:>9} {counts['warned']:>7} "
                f"{counts['accepted']:>9} {counts['failed']:>7}"
            )
            for failure in failures[:5]:
                print(f"    {failure}")
        tried = sum(total[k] for k in KINDS)
        print(
            f"{'all':<24} {tried:>6} {total['rejected']:>9} {total['warned']:>7} "
            f"{total['accepted']:>9} {total['failed']:>7}"
        )
    print(f"CPU {time.process_time() - start:.1f} s")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))

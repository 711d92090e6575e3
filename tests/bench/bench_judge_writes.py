"""Benchmark: what storing a judge's scores costs (db.runs.save_judgments), old per-row
triggers vs db.bulk's set-wise totals, without the judge's own work (issue 20).

Run: .venv/bin/python tests/bench/bench_judge_writes.py [--n 100000] [--old REV] [--judge]

Writes N literal cases and one generation each (short text of our own words, in a temp
dir), imports them with each tree's CLI, then a child process stores three scores per
generation (rougeL with a threshold and a verdict, lcs_tokens, rouge1: what the literal
judge gives) in the runner's batches of JUDGE_BATCH generations, one transaction each,
as `copyaudit judge` does. Prints the child's CPU seconds (user + system), peak RSS and
the cost per judgment. Old is REV (default 3c95edf, per-row triggers), extracted with
`git archive` and run the same way on the same files. With --judge the child is the
real `copyaudit judge r --judges literal` instead (the judge's work included).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
from pathlib import Path

from bench_import import measure, old_tree
from bench_tui import WORDS as BENCH_WORDS

ROOT = Path(__file__).resolve().parents[2]
OLD_REV = "3c95edf"
WORDS = BENCH_WORDS[:10]  # the bench text's first ten words

STORE = """
import random, sys
from copyaudit.engine.runner import JUDGE_BATCH
from copyaudit.types import Score
from db.connection import Store
from db.runs import JudgeIdentity, save_judgments
judge = JudgeIdentity("literal", "1", {"threshold": 0.5}, "h")
rng = random.Random(0)
with Store(sys.argv[1]) as store:
    ids = [r[0] for r in store.conn.execute("SELECT id FROM generations ORDER BY id")]
    for start in range(0, len(ids), JUDGE_BATCH):
        batch = []
        for g in ids[start : start + JUDGE_BATCH]:
            v = rng.random()
            batch.append((g, [Score("rougeL", v, v >= 0.5, 0.5), Score("lcs_tokens",
                          float(rng.randrange(50))), Score("rouge1", rng.random())]))
        save_judgments(store, judge, batch)
"""


def _text(i: int, n: int) -> str:
    return " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(n))


def build_files(root: Path, n: int) -> tuple[Path, Path]:
    cases, gens = root / "cases.jsonl", root / "generations.jsonl"
    with open(cases, "w", encoding="utf-8") as c, open(gens, "w", encoding="utf-8") as g:
        for i in range(n):
            record = {"id": f"case-{i}", "title": f"Work {i % 100}", "input": _text(i, 20),
                      "reference": _text(i + 1, 20)}  # fmt: skip
            c.write(json.dumps(record) + "\n")
            g.write(json.dumps({"case_id": f"case-{i}", "output": _text(i + 2, 20)}) + "\n")
    return cases, gens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="generations (default 100,000)")
    parser.add_argument("--old", default=OLD_REV, help=f"old revision (default {OLD_REV})")
    parser.add_argument("--judge", action="store_true", help="run `copyaudit judge` instead")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cases, gens = build_files(root, args.n)
        print(f"{args.n:,} generations; load average "
              f"{os.getloadavg()[0]:.2f}", flush=True)  # fmt: skip
        trees = {"new": ROOT}
        tree = old_tree(root, args.old)
        if tree is not None:
            trees["old"] = tree
        results = {}
        for label, tree in trees.items():
            db = root / f"{label}.db"
            cli = [sys.executable, "-m", "copyaudit", "--db", str(db)]
            measure(tree, [*cli, "import", "literal", str(cases), "--suite", "s"])
            measure(tree, [*cli, "import-generations", str(gens), "--run", "r", "--suite", "s"])
            writer = [sys.executable, "-c", STORE, str(db)]
            if args.judge:
                writer = [*cli, "judge", "r", "--judges", "literal"]
            results[label] = cpu, rss, _ = measure(tree, writer)
            with sqlite3.connect(db) as conn:
                judgments = conn.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
            per = cpu / judgments * 1e6
            print(f"  {label}: {cpu:.1f} CPU s, {rss:.0f} MB, {judgments:,} judgments, "
                  f"{per:.1f} us each", flush=True)  # fmt: skip
        if "old" in results:
            old, new = results["old"][0], results["new"][0]
            saved = (old - new) / judgments * 1e6
            print(f"old/new CPU {old / new:.2f}x ({saved:.1f} us a judgment saved)")
        print(f"load average after: {os.getloadavg()[0]:.2f} (2 cores shared)")


if __name__ == "__main__":
    main()

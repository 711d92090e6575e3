"""Benchmark: the cost of one label keypress committed durably (synchronous=FULL: the
write-ahead log synced before the commit returns) against synchronous=NORMAL.

Run: .venv/bin/python tests/bench/bench_label_commit.py [--labels N] [--dir PATH]

Builds a database in a temporary directory (or under --dir: put it on the disk whose
cost you want to know) with one suite of our own text and one imported run, then
records N label events with db.events.append_label (what a keypress in the app does:
one hash-chained event, one transaction) first with every transaction at NORMAL, then
as the app does (FULL). Prints wall and CPU milliseconds per label of each and their
ratio. Not collected by pytest (bench_*.py).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from copyaudit.cli.main import main
from db import Store
from db.events import append_label


class NormalStore(Store):
    """The store with every transaction at synchronous=NORMAL (the comparison)."""

    @contextmanager
    def transaction(self, *, durable: bool = False) -> Iterator:
        with super().transaction() as conn:
            yield conn


def _database(folder: Path) -> tuple[Path, int]:
    cases = folder / "cases.jsonl"
    records = [{"id": "c1", "title": "Our Tale", "input": "The keeper walked", "reference": "home"}]
    cases.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    outputs = folder / "outputs.jsonl"
    outputs.write_text(json.dumps({"case_id": "c1", "output": "home at dusk"}) + "\n")
    db = folder / "bench.db"
    for argv in (
        ["import", "literal", str(cases), "--suite", "s"],
        ["import-generations", str(outputs), "--run", "r", "--suite", "s"],
    ):
        try:
            with redirect_stdout(io.StringIO()):  # the import summaries
                main(["--db", str(db), *argv])
        except SystemExit as exit_:
            if exit_.code:
                raise
    with Store(db) as store:
        return db, int(store.scalar("SELECT id FROM generations"))


def _per_label(store: Store, generation: int, n: int, annotator: str) -> tuple[float, float]:
    """(wall ms, CPU ms) per label over n labels."""
    wall, cpu = time.perf_counter(), time.process_time()
    for i in range(n):
        append_label(
            store,
            generation_id=generation,
            annotator=annotator,
            target="literal",
            item_index=0,
            label=("yes", "no")[i % 2],
        )
    return (
        1000 * (time.perf_counter() - wall) / n,
        1000 * (time.process_time() - cpu) / n,
    )


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=int, default=300)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        db, generation = _database(Path(tmp))
        with NormalStore(db) as store:
            normal = _per_label(store, generation, args.labels, "normal")
        with Store(db) as store:
            full = _per_label(store, generation, args.labels, "full")
    print(f"{args.labels} label commits each, database in {args.dir or tempfile.gettempdir()}")
    print(f"NORMAL: {normal[0]:.3f} ms wall, {normal[1]:.3f} ms CPU per label")
    print(f"FULL:   {full[0]:.3f} ms wall, {full[1]:.3f} ms CPU per label")
    print(f"FULL / NORMAL: {full[0] / normal[0]:.2f}x wall, {full[1] / normal[1]:.2f}x CPU")


if __name__ == "__main__":
    main_bench()

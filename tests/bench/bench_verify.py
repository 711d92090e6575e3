"""Benchmark: what `verify` costs, check by check, and `anchor` / `verify --against`.

Run: .venv/bin/python tests/bench/bench_verify.py [--generations N] [--events M]

Builds a database in a temporary directory from our own text (N literal cases with one
generation each, two judgments per generation, M label events chained as the app chains
them, written in one transaction), then prints the CPU seconds of each check `verify`
runs (quick_check, the triggers, the chains, the head records, the generation bindings,
the run digests), of integrity_check (`verify --full`), of building an anchor and of
checking the database against it, the database's size and the peak RSS. Not collected by
pytest (bench_*.py).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from copyaudit.cli.main import main
from copyaudit.reports.anchor import current_anchor
from db import Store
from db.anchors import anchor_problems
from db.audit import binding_problems, head_problems, sqlite_check, trigger_problems
from db.digest_audit import digest_problems
from db.events import event_hash, origin, verify_chains


def _build(root: Path, generations: int, events: int) -> Path:
    path = root / "bench.db"
    cases = root / "lit.jsonl"
    outputs = root / "outputs.jsonl"
    with cases.open("w") as handle:
        for i in range(generations):
            record = {
                "id": f"lit-{i}",
                "title": f"Work {i % 50}",
                "input": f"Prefix number {i} of a passage about an orchard.",
                "reference": f"and the continuation number {i} follows here.",
            }
            handle.write(json.dumps(record) + "\n")
    with outputs.open("w") as handle:
        for i in range(generations):
            handle.write(json.dumps({"case_id": f"lit-{i}", "output": f"output {i}"}) + "\n")
    for argv in (
        ["import", "literal", str(cases)],
        ["import-generations", str(outputs), "--run", "r", "--suite", "lit"],
    ):
        try:
            main(["--db", str(path), *argv])
        except SystemExit as exc:
            if exc.code:
                raise
    _judge(path)
    with Store(path) as store, store.transaction():
        chain = origin(store)
        keys = {
            r[0]: r[1]
            for r in store.conn.execute(
                "SELECT g.id, 'r/' || c.case_id || '/' || g.template FROM generations g "
                "JOIN cases c ON c.id = g.case_pk"
            )
        }
        ids = sorted(keys)
        prev = ""
        for seq in range(1, events + 1):
            gid = ids[seq % len(ids)]
            event = {
                "uuid": uuid.uuid4().hex,
                "chain": chain,
                "seq": seq,
                "generation_id": gid,
                "generation_key": keys[gid],
                "created_at": "2026-01-01T00:00:00.000+00:00",
                "annotator": f"a{seq % 3}",
                "target": "literal",
                "item_index": 0,
                "action": "label",
                "label": ("yes", "no")[seq % 2],
                "note": None,
                "supersedes": None,
                "prev_hash": prev,
            }
            event["hash"] = prev = event_hash("labels", event, prev)
            marks = ", ".join("?" for _ in event)
            store.conn.execute(
                f"INSERT INTO labels ({', '.join(event)}) VALUES ({marks})", list(event.values())
            )
    return path


def _judge(path: Path) -> None:
    """Three scores per generation (what the literal judge stores), in batches of 1,000:
    the run digests `verify` recomputes cover them."""
    from copyaudit.types import Score
    from db.runs import JudgeIdentity, save_judgments

    judge = JudgeIdentity("literal", "1", {"threshold": 0.5}, "h")
    with Store(path) as store:
        ids = [r[0] for r in store.conn.execute("SELECT id FROM generations ORDER BY id")]
        for start in range(0, len(ids), 1000):
            batch = [
                (g, [Score("rougeL", g % 7 / 7, g % 2 == 0, 0.5), Score("rouge1", g % 5 / 5)])
                for g in ids[start : start + 1000]
            ]
            save_judgments(store, judge, batch)


def _timed(label: str, work) -> object:
    start = time.process_time()
    result = work()
    print(f"  {label:<34} {time.process_time() - start:8.3f} CPU s")
    return result


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generations", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        start = time.process_time()
        path = _build(Path(directory), args.generations, args.events)
        size = path.stat().st_size / 1e6
        print(
            f"{args.generations} generations, {args.events} label events, {size:.1f} MB "
            f"(built in {time.process_time() - start:.1f} CPU s)"
        )
        with Store(path) as store:
            print("verify (default):")
            checks = [
                ("PRAGMA quick_check", lambda: sqlite_check(store)),
                ("triggers", lambda: trigger_problems(store)),
                ("chains (rehash every event)", lambda: verify_chains(store)),
                ("head records", lambda: head_problems(store)),
                ("generation bindings", lambda: binding_problems(store)),
                ("run digests (every run recomputed)", lambda: digest_problems(store)),
            ]
            total = time.process_time()
            for label, work in checks:
                found = _timed(label, work)
                assert found in ([], ["ok"]), found  # the bench database is intact
            print(f"  {'all':<34} {time.process_time() - total:8.3f} CPU s")
            print("verify --full adds:")
            _timed("PRAGMA integrity_check", lambda: sqlite_check(store, full=True))
            print("anchors:")
            anchor = _timed("anchor (heads + labelled content)", lambda: current_anchor(store))
            _timed(
                "verify --against (anchor part)",
                lambda: anchor_problems(
                    store, anchor["heads"], anchor["labelled_content"], anchor["runs"]
                ),
            )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main_bench()

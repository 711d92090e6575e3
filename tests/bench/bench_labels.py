"""Benchmark: what binding labels to content costs when reading current labels.

Run: .venv/bin/python tests/bench/bench_labels.py [N]
Builds a database with N label events (2,000 generations with outputs of ~2 KB, bench
code writes SQL directly for speed) and prints the CPU seconds of `current_labels` (which
computes each label's `stale` flag: generation_content_hash over output + case hash)
and of the same query without that column, and their ratio; then one generation's
current labels (the case view, undo) with every tenth label retracted: retractions looked
up per label event (the current definition) against every retraction read per statement
(the definition before), best CPU ms of 20 calls.
"""

from __future__ import annotations

import json
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from db import Store
from db.columns import GENERATION_KEY_SQL
from db.labels import NOT_RETRACTED_SQL, current_label_events_sql, current_labels

GENERATIONS = 2000
TEXT = "Our own sentence number {i} is here to fill the output of this bench. "


def build(store: Store, labels: int) -> None:
    conn = store.conn
    conn.execute("BEGIN")
    conn.execute("INSERT INTO works (key, title) VALUES ('w', 'W')")
    conn.execute("INSERT INTO suites (name, kind) VALUES ('s', 'nonliteral')")
    conn.execute(
        "INSERT INTO runs (name, suite_id, backend, status) VALUES ('r', 1, 'imported', 'done')"
    )
    payload = json.dumps({"input": "x", "reference_events": [f"e{i}" for i in range(10)]})
    for g in range(1, GENERATIONS + 1):
        conn.execute(
            "INSERT INTO cases (suite_id, case_id, work_id, payload, content_hash) "
            "VALUES (1, ?, 1, ?, ?)",
            (f"c{g}", payload, f"h{g}"),
        )
        output = "".join(TEXT.format(i=i) for i in range(30))
        conn.execute(
            "INSERT INTO generations (run_id, case_pk, template, output, source) "
            "VALUES (1, ?, 1, ?, 'bench')",
            (g, output),
        )
    rows = []
    for n in range(labels):
        g = n % GENERATIONS + 1
        rows.append(
            (f"u{n}", n + 1, "bench", g, f"r/c{g}/1", f"2026-01-01T00:00:{n % 60:02d}.000+00:00",
             "", "x", f"a{n // (GENERATIONS * 10)}", "event", (n // GENERATIONS) % 10, "label",
             "yes", None, None)
        )  # fmt: skip
    retractions = [
        (f"r{n}", labels + n + 1, "bench", g, key, "2026-01-02T00:00:00.000+00:00", "", "x",
         who, target, index, "retract", None, None, None, uuid)
        for n, (uuid, _, _, g, key, _, _, _, who, target, index, *_) in enumerate(rows)
        if n % 10 == 0
    ]  # fmt: skip
    conn.executemany(
        "INSERT INTO labels (uuid, seq, chain, generation_id, generation_key, created_at, "
        "prev_hash, hash, annotator, target, item_index, action, label, note, content_hash, "
        "supersedes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(*row, None) for row in rows] + retractions,
    )
    conn.execute("COMMIT")


# The current-label definition before it looked retractions up per label event: every
# retraction read into a list by each statement (`NOT IN`).
OLD_RETRACTIONS = (
    "l.uuid NOT IN (SELECT supersedes FROM labels r WHERE supersedes IS NOT NULL "
    "AND r.action = 'retract')"
)


def one_case(store: Store, sql: str, calls: int = 20) -> tuple[float, int]:
    """Best CPU seconds of one generation's current labels (what the case view and undo
    read), over `calls` generations."""
    best, found = float("inf"), 0
    for g in range(1, calls + 1):
        start = time.process_time()
        found += len(store.conn.execute(sql, (g,)).fetchall())
        best = min(best, time.process_time() - start)
    return best, found


def cpu(fn) -> tuple[float, int]:
    start = time.process_time()
    result = fn()
    return time.process_time() - start, len(result)


def main(labels: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "bench.db") as store:
        build(store, labels)
        plain_sql = (  # db.labels' current-label query as it was before the binding
            f"SELECT live.uuid, r.name AS run, live.generation_id, {GENERATION_KEY_SQL} "
            "AS generation_key, live.annotator, live.target, live.item_index, live.label, "
            f"live.note, live.created_at FROM ({current_label_events_sql()}) live "
            "JOIN generations g ON g.id = live.generation_id JOIN runs r ON r.id = g.run_id "
            "JOIN cases c ON c.id = g.case_pk "
            "ORDER BY r.id, live.generation_id, live.target, live.item_index, live.annotator"
        )
        bound, n = cpu(lambda: current_labels(store))
        unbound, m = cpu(lambda: store.conn.execute(plain_sql).fetchall())
        assert n == m, (n, m)
        print(f"{labels:,} label events, {n:,} current labels")
        print(f"current_labels with the stale flag : {bound:6.2f} CPU s")
        print(f"the same query without it          : {unbound:6.2f} CPU s")
        print(f"ratio                              : {bound / max(unbound, 1e-9):6.2f}x")
        new_sql = current_label_events_sql("l.generation_id = ?")
        old_sql = new_sql.replace(NOT_RETRACTED_SQL, OLD_RETRACTIONS)
        assert old_sql != new_sql
        (new_cpu, new_n), (old_cpu, old_n) = one_case(store, new_sql), one_case(store, old_sql)
        assert new_n == old_n, (new_n, old_n)
        retracted = store.scalar("SELECT COUNT(*) FROM labels WHERE action = 'retract'")
        print(f"one generation's current labels ({retracted:,} retractions), best of 20:")
        print(f"  retraction looked up per event   : {1000 * new_cpu:8.2f} CPU ms")
        print(f"  every retraction per statement   : {1000 * old_cpu:8.2f} CPU ms (before)")
        print(f"  ratio                            : {old_cpu / max(new_cpu, 1e-9):8.0f}x")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak RSS                           : {peak:6.0f} MiB")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)

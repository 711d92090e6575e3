"""Benchmark: the app on a database of 100,000 generations.

Run: .venv/bin/python tests/bench/bench_tui.py [N]
  or: .venv/bin/python tests/bench/bench_tui.py --db PATH (first paints only, on a
      database built before, e.g. by bench_report.py's builder at a million generations)
Builds a database with N generations (one literal run, three judgments each, 200
labelled generations; bench code writes SQL directly for speed), then drives the app
headless (App.run_test) and prints: time to first paint of the generation list, time to
apply filters and a sort, time to move to the next generation (n), and memory
(tracemalloc peak of the app session and the process's maximum RSS). Key timings go
through Pilot, whose own round trip (a key with no binding, printed) is part of them;
the "minus the pilot round trip" line is the app's share, and "its key handler alone"
times the n handler itself (the next row's query and the panes' new content, before
Textual lays out and paints them).
Targets: first paint < 1 s, filter < 0.3 s, next generation < 50 ms.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from db import Store
from db.events import append_label

EMPTY_EVIDENCE = '{"spans": [], "items": []}'
WORDS = tuple(
    [
        "the",
        "orchard",
        "glass",
        "seed",
        "river",
        "lantern",
        "harbour",
        "quiet",
        "morning",
        "night",
        "keeper",
        "ledger",
        "fog",
        "lamp",
        "gulls",
        "bells",
        "water",
        "town",
        "light",
        "home",
        "baker",
        "valley",
        "bread",
        "village",
        "miller",
    ]
)


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def build_bench_db(path: Path, n: int = 100_000, works: int = 50, seed: int = 0) -> Store:
    """Create the database at `path` (must not exist) and return an open Store on it."""
    rng = random.Random(seed)
    store = Store(path)
    conn = store.conn
    stamp = "2024-01-01T00:00:00.000+00:00"
    with store.transaction():
        conn.execute(
            "INSERT INTO suites (name, kind, created_at) VALUES ('bench', 'literal', ?)", (stamp,)
        )
        conn.executemany(
            "INSERT INTO works (key, title, author, membership) VALUES (?, ?, 'Bench', 'unknown')",
            [(f"Work {w}\x1fBench", f"Work {w}") for w in range(works)],
        )
        cases = []
        for i in range(n):
            payload = {"input": _text(rng, 40), "reference": _text(rng, 50)}
            cases.append((f"case-{i}", 1 + i % works, json.dumps(payload), f"h{i}", stamp))
        conn.executemany(
            "INSERT INTO cases (suite_id, case_id, work_id, payload, content_hash, source, "
            "created_at) VALUES (1, ?, ?, ?, ?, 'bench', ?)",
            cases,
        )
        conn.execute(
            "INSERT INTO runs (name, suite_id, backend, model, templates, status, created_at) "
            "VALUES ('bench-run', 1, 'imported', 'bench', '[]', 'imported', ?)",
            (stamp,),
        )
        generations = [(1 + i, 1 + i % 3, "", _text(rng, 60), "imported", stamp) for i in range(n)]
        conn.executemany(
            "INSERT INTO generations (run_id, case_pk, template, prompt, output, source, "
            "created_at) VALUES (1, ?, ?, ?, ?, ?, ?)",
            generations,
        )
        conn.execute(
            "INSERT INTO judge_configs (hash, name, version, config) "
            "VALUES ('bench', 'literal', '1', '{}')"
        )
        judgments = []
        for gid in range(1, n + 1):
            value = rng.random()
            spans = [{"start": 0, "end": 20, "item": None, "note": "lcs"}]
            evidence = json.dumps(
                {"spans": spans, "items": [], "threshold": 0.8, "target": "literal"}
            )
            judgments.append((gid, "rougeL", value, int(value >= 0.8), evidence))
            judgments.append(
                (gid, "rouge1", min(1.0, value + 0.1), None, '{"spans":[],"items":[]}')
            )
            judgments.append(
                (gid, "lcs_tokens", float(int(value * 50)), None, '{"spans":[],"items":[]}')
            )
        conn.executemany(
            "INSERT INTO judgments (generation_id, judge, judge_hash, metric, value, flagged, "
            "evidence, created_at) VALUES (?, 'literal', 'bench', ?, ?, ?, ?, '" + stamp + "')",
            judgments,
        )
    for gid in range(1, n + 1, max(1, n // 200)):  # 200 labelled generations
        append_label(
            store,
            generation_id=gid,
            annotator="bench",
            target="literal",
            item_index=0,
            label="yes" if gid % 2 else "no",
        )
    conn.execute("ANALYZE")
    return store


async def _until(pilot, condition, timeout: float = 30.0) -> float:
    """Seconds until `condition()` holds, pausing the app between checks."""
    start = time.perf_counter()
    while not condition():
        if time.perf_counter() - start > timeout:
            raise RuntimeError("timed out")
        await pilot.pause(0.001)
    return time.perf_counter() - start


async def drive(path: Path) -> dict[str, float]:
    from db.browse import ANY_FLAG, MetricKey
    from screens.app import CopyauditApp

    figures: dict[str, float] = {}
    app = CopyauditApp(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        start = time.perf_counter()
        app.open_run("bench-run")
        await _until(pilot, lambda: app.screen.query("#generations") and app.screen.pager.rows)
        await pilot.pause()
        figures["first paint of the list"] = time.perf_counter() - start
        screen = app.screen
        base = screen.pager.filter
        filters = {
            "filter: flagged by rougeL": base.with_changes(flagged=MetricKey("literal", "rougeL")),
            "filter: flagged by any judge": base.with_changes(flagged=ANY_FLAG),
            "filter: work": base.with_changes(work_id=7),
            "filter: unlabeled": base.with_changes(unlabeled=True),
            "filter: disagreement": base.with_changes(disagreement=True),
            "sort: rougeL, highest first": base.with_changes(
                sort=MetricKey("literal", "rougeL"), descending=True
            ),
            "search: substring (LIKE)": base.with_changes(search="lantern harbour"),
        }
        for label, new_filter in filters.items():
            await app.workers.wait_for_complete()
            start = time.perf_counter()
            screen._reload(new_filter)
            version = screen.pager.version
            await _until(pilot, lambda v=version: screen.pager.version == v and screen.pager.rows)
            figures[label + " (rows shown)"] = time.perf_counter() - start
            await _until(pilot, lambda v=version: screen.pager.total is not None)
            figures[label + " (count shown)"] = time.perf_counter() - start
        await app.workers.wait_for_complete()
        screen._reload(base)
        await _until(pilot, lambda: len(screen.pager.rows) > 0)
        await pilot.press("enter")
        await _until(pilot, lambda: hasattr(app.screen, "generation_id"))
        view = app.screen
        floor = []  # Pilot's own round trip for a key the app ignores (no binding)
        for _ in range(50):
            start = time.perf_counter()
            await pilot.press("f12")
            await pilot.pause(0.001)
            floor.append(time.perf_counter() - start)
        handler: list[float] = []  # the key's own work: the query and the panes' content
        step_action = view.action_step

        def timed_step(step: int) -> None:
            begin = time.perf_counter()
            step_action(step)
            handler.append(time.perf_counter() - begin)

        view.action_step = timed_step
        steps = []
        for _ in range(250):  # crosses two page boundaries (pages of 100)
            before = view.generation_id
            start = time.perf_counter()
            await pilot.press("N")
            await _until(pilot, lambda b=before: view.generation_id != b)
            steps.append(time.perf_counter() - start)
        figures["pilot round trip of an unbound key (median)"] = statistics.median(floor)
        figures["next generation (median)"] = statistics.median(steps)
        figures["next generation minus the pilot round trip (median)"] = statistics.median(
            steps
        ) - statistics.median(floor)
        figures["next generation: its key handler alone (median)"] = statistics.median(handler)
        figures["next generation (95th percentile)"] = sorted(steps)[int(0.95 * len(steps))]
        figures["next generation (max: loads the next page)"] = max(steps)
    return figures


async def first_paints(path: Path) -> dict[str, tuple[float, float]]:
    """(wall s, CPU s of this process) from the app's start to the dashboard's runs shown,
    and from opening the run to the list's first rows."""
    from screens.app import CopyauditApp

    figures: dict[str, tuple[float, float]] = {}
    start, cpu = time.perf_counter(), time.process_time()
    app = CopyauditApp(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await _until(
            pilot, lambda: app.screen.query("#runs") and app.screen.query_one("#runs").row_count
        )
        figures["app start to the dashboard's runs"] = (
            time.perf_counter() - start,
            time.process_time() - cpu,
        )
        await app.workers.wait_for_complete()
        start, cpu = time.perf_counter(), time.process_time()
        app.open_run("bench-run")
        await _until(pilot, lambda: app.screen.query("#generations") and app.screen.pager.rows)
        await pilot.pause()
        figures["open run to the list's first rows"] = (
            time.perf_counter() - start,
            time.process_time() - cpu,
        )
    return figures


def paint_existing(path: Path) -> None:
    """First paints on a database built before (`bench_tui.py --db PATH`), twice: the
    first run may migrate it; the second is the figure."""
    for attempt in ("first open", "second open"):
        for label, (wall, cpu) in asyncio.run(first_paints(path)).items():
            print(f"{attempt}: {label:<40} {wall * 1000:8.1f} ms wall {cpu * 1000:8.1f} ms CPU")
    print(f"load average (1 min): {os.getloadavg()[0]:.2f}")


def main(n: int = 100_000) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        start = time.perf_counter()
        build_bench_db(path, n).close()
        built = time.perf_counter() - start
        print(f"built {n:,} generations ({3 * n:,} judgments) in {built:.1f} s")
        figures = asyncio.run(drive(path))  # timings: without tracemalloc, which slows Python
        tracemalloc.start()
        asyncio.run(drive(path))  # the same session again, for its memory
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    targets = {"first paint": 1.0, "filter": 0.3, "sort": 0.3, "search": 0.3, "next": 0.05}
    for label, seconds in figures.items():
        target = next((t for key, t in targets.items() if label.startswith(key)), None)
        note = f"   (target < {target * 1000:.0f} ms)" if target else ""
        print(f"{label:<50} {seconds * 1000:8.1f} ms{note}")
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{'tracemalloc peak during the app session':<50} {peak / 1e6:8.1f} MB")
    print(f"{'max RSS of the process (includes building the db)':<50} {rss_mb:8.1f} MB")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--db":
        paint_existing(Path(sys.argv[2]))
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)

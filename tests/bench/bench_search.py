"""Benchmark: the generation list's search, FTS5 trigram index vs the LIKE scan it replaced.

Run: .venv/bin/python tests/bench/bench_search.py              (100,000 generations)
     .venv/bin/python tests/bench/bench_search.py --n 1000000

Builds a database of N literal cases and one generation each (our own text: the seeded
word list of bench_growth, a rare phrase in one output in 10,000 and a marker word in one
in 100) without the search index, then
  - back-fills the index as the migration does (db.migrations.migrate_search_index) and
    prints its CPU seconds and the database size before and after;
  - for a rare phrase, a 1% word, a common word, a rare phrase of common words, a case id
    (found through the case text) and a 2-character search: the CPU ms of the list's
    count and of its first page (db.browse.count_generations, generation_page: what the
    app calls) as the app plans them (db.search.index_pays), always through the index,
    and always as a LIKE scan (the old plan), best of 3. All must find the same rows;
    the script stops if they do not. "FTS5 alone" is what the two indexes' own counts
    of the phrase cost (no confirmation, no join to the generations): the least any
    count through them can cost; "app: page + quick count" is what the list shows
    first: the first page and a count stopped at QUICK_COUNT ("1,000+"), the exact count
    following in the same worker (a quick count past QUICK_COUNT_CPU_S gives up: then
    only the page);
  - what keeping the index costs the CLI's import: `copyaudit import` + `import-generations`
    of --import-n cases (default 20,000) on a database with and without the FTS tables;
  - with --old REV: the app's exact count, quick count (GenerationPager.count_at_most)
    and first page under the code of REV (git archive) and under this tree, in
    alternating subprocesses on the same database (best of 7 calls, best of --rounds
    rounds): single runs on a shared machine drift more than the change being measured.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import db.search
from db import Store
from db.browse import GenerationFilter, count_generations, generation_page
from db.migrations import FTS_TABLES, migrate_search_index
from screens.state.paging import QUICK_COUNT, GenerationPager

sys.path.insert(0, str(Path(__file__).parent))
from bench_growth import RARE, WORDS, write_inputs  # the growth table's text
from bench_import import ROOT, old_tree

MARKER = "amberlight"  # one output in 100
CHUNK = 20_000


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def build(path: Path, n: int) -> Store:
    """N cases and generations, inserted in chunks (memory flat), without the index."""
    store = Store(path)
    conn, stamp, rng = store.conn, "2026-01-01T00:00:00+00:00", random.Random(n)
    _drop_index(store)
    with store.transaction():
        conn.execute(
            "INSERT INTO suites (name, kind, created_at) VALUES ('bench', 'literal', ?)", (stamp,)
        )
        conn.executemany(
            "INSERT INTO works (key, title, membership) VALUES (?, ?, 'unknown')",
            [(f"w{w}", f"Work {w}") for w in range(500)],
        )
        conn.execute(
            "INSERT INTO runs (name, suite_id, backend, model, templates, status, created_at) "
            "VALUES ('bench', 1, 'imported', 'bench', '[1]', 'imported', ?)",
            (stamp,),
        )
        for first in range(0, n, CHUNK):
            ids = range(first, min(n, first + CHUNK))
            cases, outputs = [], []
            for i in ids:
                reference = _words(rng, 50)
                payload = {"input": _words(rng, 120), "reference": reference}
                cases.append((f"case-{i}", 1 + i % 500, json.dumps(payload), f"h{i}", stamp))
                output = reference[: rng.randrange(40, 300)] + " " + _words(rng, 20)
                output += f" {RARE}" if i % 10_000 == 7 else ""
                output += f" {MARKER}" if i % 100 == 3 else ""
                outputs.append((1 + i, output, stamp))
            conn.executemany(
                "INSERT INTO cases (suite_id, case_id, work_id, payload, content_hash, source, "
                "created_at) VALUES (1, ?, ?, ?, ?, 'bench', ?)",
                cases,
            )
            conn.executemany(
                "INSERT INTO generations (run_id, case_pk, template, prompt, output, source, "
                "created_at) VALUES (1, ?, 1, '', ?, 'imported', ?)",
                outputs,
            )
    return store


def _drop_index(store: Store) -> None:
    """The database as before the migration: no FTS tables, no triggers."""
    with store.transaction():
        for table in FTS_TABLES:
            store.conn.execute(f"DROP TABLE {table}_fts")
            for event in ("insert", "update", "delete"):
                store.conn.execute(f"DROP TRIGGER {table}_fts_{event}")


def import_cost(directory: Path, n: int) -> None:
    """CPU s of the CLI's import of n cases and generations, with and without the index."""
    cases, generations = write_inputs(directory, n)
    figures = {}
    for indexed in (True, False):
        path = directory / f"import-{indexed}.db"
        store = Store(path)
        if not indexed:
            _drop_index(store)
        store.close()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        for args in (
            ["import", "literal", str(cases), "--suite", "s"],
            ["import-generations", "--run", "r", "--suite", "s", str(generations)],
        ):
            cmd = [sys.executable, "-m", "copyaudit", "--db", str(path), *args]
            subprocess.run(cmd, check=True, capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        figures[indexed] = sum(
            getattr(after, f) - getattr(before, f) for f in ("ru_utime", "ru_stime")
        )
    print(
        f"import {n:,} cases + generations (CLI): {figures[True]:.1f} CPU s with the index, "
        f"{figures[False]:.1f} s without (x{figures[True] / figures[False]:.1f})"
    )


def _built(path: Path, n: int) -> Store:
    """The database of n rows, its index back-filled as the migration does (printed)."""
    store = build(path, n)
    before = path.stat().st_size / 1e6
    start = time.process_time()
    with store.transaction():
        migrate_search_index(store.db)
    backfill = time.process_time() - start
    after = path.stat().st_size / 1e6
    print(
        f"{n:,} generations + cases: database {before:,.0f} MB without the index, "
        f"{after:,.0f} MB with it (+{after - before:,.0f} MB, x{after / before:.2f}); "
        f"back-fill (the migration) {backfill:.1f} CPU s"
    )
    return store


def _best(call: Callable[[], Any]) -> tuple[float, Any]:
    """(least CPU ms of 3 calls, the result)."""
    times, result = [], None
    for _ in range(3):
        start = time.process_time()
        result = call()
        times.append((time.process_time() - start) * 1000)
    return min(times), result


def _search(store: Store, text: str) -> tuple[float, float, float, int, list[int]]:
    """(count ms, first page ms, quick count ms, count, first page ids). The quick count
    stops at QUICK_COUNT rows: with the first page, what the list shows first."""
    f = GenerationFilter(run_id=1, search=text)
    count_ms, count = _best(lambda: count_generations(store, f))
    page_ms, rows = _best(lambda: [r.generation_id for r in generation_page(store, f)])
    quick_ms, quick = _best(lambda: GenerationPager(f).count_at_most(store, QUICK_COUNT))
    if quick is not None and quick != min(count, QUICK_COUNT):
        raise SystemExit(f"{text!r}: the quick count {quick} disagrees with {count}")
    return count_ms, page_ms, quick_ms, count, rows


def _fts_alone_ms(store: Store, text: str) -> str:
    """CPU ms of FTS5's own counts of the phrase in both indexes, best of 3 ("-": too
    short for a trigram index)."""
    if not db.search.uses_index(text):
        return "-"
    phrase = db.search.fts_phrase(text)
    sql = "SELECT COUNT(*) FROM {0}_fts WHERE {0}_fts MATCH ?"
    ms, _ = _best(lambda: [store.scalar(sql.format(t), (phrase,)) for t in FTS_TABLES])
    return f"{ms:.1f}"


PLANS = {  # plan -> the db.search settings that force it (None: the app's own choice)
    "app": None,
    "index": ("MIN_PROBE", 10**12),
    "scan": ("MIN_INDEXED_CHARS", 10**12),
}


def _planned(store: Store, text: str, plan: str) -> tuple[float, float, float, int, list[int]]:
    forced = PLANS[plan]
    if forced is None:
        return _search(store, text)
    saved = getattr(db.search, forced[0])
    setattr(db.search, forced[0], forced[1])
    try:
        return _search(store, text)
    finally:
        setattr(db.search, forced[0], saved)


def _app_calls(path: Path, texts: list[str]) -> dict[str, list[float]]:
    """{text: [exact count, quick count, first page] CPU ms, best of 7} for the code on
    sys.path (run as a subprocess by _old_and_new)."""
    store, found = Store(path), {}
    for text in texts:
        f = GenerationFilter(run_id=1, search=text)
        calls = (
            lambda f=f: count_generations(store, f),
            lambda f=f: GenerationPager(f).count_at_most(store, QUICK_COUNT),
            lambda f=f: generation_page(store, f),
        )
        found[text] = [min(_cpu_ms(call) for _ in range(7)) for call in calls]
    store.close()
    return found


def _cpu_ms(call: Callable[[], Any]) -> float:
    start = time.process_time()
    call()
    return (time.process_time() - start) * 1000


def _old_and_new(path: Path, texts: list[str], rev: str, rounds: int) -> None:
    """The app's calls under REV's code and this tree's, alternating, on one database."""
    with tempfile.TemporaryDirectory() as tmp:
        old = old_tree(Path(tmp), rev)
        if old is None:
            raise SystemExit(f"git archive {rev} failed")
        best: dict[str, dict[str, list[float]]] = {"old": {}, "new": {}}
        for _ in range(rounds):
            for label, tree in (("old", old), ("new", ROOT)):
                env = {**os.environ, "PYTHONPATH": str(tree)}
                argv = [sys.executable, __file__, "--db", str(path), "--app-calls", *texts]
                done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
                found = json.loads(done.stdout.splitlines()[-1])
                if not Path(found.pop("code")).is_relative_to(tree):
                    raise SystemExit(f"the {label} run did not load the code of {tree}")
                for text, figures in found.items():
                    kept = best[label].setdefault(text, figures)
                    best[label][text] = [min(a, b) for a, b in zip(kept, figures, strict=True)]
    print(f"\nold ({rev}) and new code alternating, {rounds} rounds, CPU ms, best of 7 calls:")
    print(f"{'search':<22} {'old: count / quick / page':>30}  {'new: count / quick / page':>30}")
    for text in texts:
        cells = [" / ".join(f"{v:.1f}" for v in best[label][text]) for label in ("old", "new")]
        print(f"{text!r:<22} {cells[0]:>30}  {cells[1]:>30}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--import-n", type=int, default=20_000, help="0: skip")
    parser.add_argument(
        "--db", type=Path, help="keep the built database here; reuse it when it exists"
    )
    parser.add_argument("--old", help="also time the app's calls under this revision's code")
    parser.add_argument("--rounds", type=int, default=3, help="alternations with --old")
    parser.add_argument("--app-calls", nargs="+", help=argparse.SUPPRESS)  # _old_and_new
    args = parser.parse_args()
    if args.app_calls:
        print(json.dumps({"code": db.search.__file__, **_app_calls(args.db, args.app_calls)}))
        return
    n = args.n
    if args.import_n:
        with tempfile.TemporaryDirectory() as tmp:
            import_cost(Path(tmp), args.import_n)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.db or Path(tmp) / "search.db"
        if path.exists():
            store = Store(path)
            n = store.scalar("SELECT COUNT(*) FROM generations")
            print(f"{n:,} generations + cases: reusing {path}")
        else:
            store = _built(path, n)
        print(
            f"{'search':<22} {'found':>9}  {'app: page + quick count':>24}  "
            + "  ".join(f"{p + ' count/page ms':>24}" for p in PLANS)
            + f"  {'FTS5 alone':>10}"
        )
        texts = [RARE, MARKER, "lantern", "orchard glass seed", f"case-{n // 2}", "qu"]
        for text in texts:
            results = {plan: _planned(store, text, plan) for plan in PLANS}
            if len({tuple(map(str, r[3:])) for r in results.values()}) != 1:
                raise SystemExit(f"{text!r}: the plans found different rows")
            app = results["app"]
            cells = "  ".join(f"{r[0]:>14.1f} /{r[1]:>8.1f}" for r in results.values())
            alone = _fts_alone_ms(store, text)
            print(
                f"{text!r:<22} {app[3]:>9,}  {app[1] + app[2]:>24.1f}  {cells}  {alone:>10}",
                flush=True,
            )
        store.close()
        if args.old:
            _old_and_new(path, texts, args.old, args.rounds)


if __name__ == "__main__":
    main()

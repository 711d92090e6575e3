"""Benchmark: the growth table, how each phase's cost grows with the database.

Run: .venv/bin/python tests/bench/bench_growth.py            (10k and 100k generations)
     .venv/bin/python tests/bench/bench_growth.py --full     (adds 1M)
     .venv/bin/python tests/bench/bench_growth.py --n 20000 --n 200000
     .venv/bin/python tests/bench/bench_growth.py --judge-limit 0   (judge every size)

For each size N it writes N literal cases and one generation per case (our own text,
from a seeded word list, in a temp dir), then runs every phase in its own subprocess and
prints the child's CPU seconds (user + system) and peak RSS (ru_maxrss):

  import    `copyaudit import literal` then `copyaudit import-generations`
  search-index  `copyaudit search-index`: the imports leave their rows to this catch-up
  judge     `copyaudit judge --judges literal` (sizes above --judge-limit are not judged:
            the later phases then read a run without judgments, said in the table)
  report    `copyaudit report --format json`
  dashboard db.browse.dashboard_runs (what the app's first screen loads)
  open run  db.browse.run_info, run_metrics, run_works, run_templates, the count and the
            first page of the generation list (what opening a run loads)
  search    count and first page of the list searched for a rare phrase (FTS5), a common
            word (FTS5) and two characters (the LIKE fallback), each timed alone
  verify    `copyaudit verify`

Only public commands and the db functions the app calls: it measures whatever is merged.
The database size and the FTS5 share of it are printed per size.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORD_TEXT = (
    "the orchard glass seed river lantern harbour quiet morning night keeper of a and "
    "stone window letter winter garden candle bridge shadow silver market thread map "
    "copper field mirror kettle ladder meadow valley tower pebble ribbon needle compass "
    "feather whistle anchor blanket cellar attic basket meadowlark chimney orchestra"
)
WORDS = WORD_TEXT.split()
RARE = "zephyrine quillwort"  # written into one output in 10,000
COMMON = "lantern"
SHORT = "qu"
DEFAULT_SIZES = (10_000, 100_000)
JUDGE_LIMIT = 10_000  # default: judge the sizes up to this (the literal judge is the slow part)


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def write_inputs(directory: Path, n: int) -> tuple[Path, Path]:
    """N literal cases and one generation for each, as JSONL files."""
    rng = random.Random(n)
    cases, generations = directory / "cases.jsonl", directory / "generations.jsonl"
    with (
        cases.open("w", encoding="utf-8") as case_file,
        generations.open("w", encoding="utf-8") as generation_file,
    ):
        for i in range(n):
            reference = _words(rng, 50)
            record = {
                "id": f"case-{i}",
                "title": f"Work {i % 500}",
                "author": "Bench Author",
                "input": _words(rng, 120),
                "reference": reference,
            }
            case_file.write(json.dumps(record) + "\n")
            output = reference[: rng.randrange(40, 300)] + " " + _words(rng, 20)
            if i % 10_000 == 7:
                output += f" {RARE}"
            generation_file.write(json.dumps({"case_id": f"case-{i}", "output": output}) + "\n")
    return cases, generations


def _child(argv: list[str]) -> tuple[float, float, str]:
    """Run argv as a child; (CPU s, peak RSS MB, stdout) of that child alone."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # RUSAGE_CHILDREN's ru_maxrss is the largest child so far; each phase reports its own
    # peak from inside (see _PROBE) when it runs python code here, so take that when given.
    lines = done.stdout.strip().splitlines()
    if lines and lines[-1].startswith("PEAK_RSS_KB "):
        return cpu, int(lines[-1].split()[1]) / 1024, "\n".join(lines[:-1])
    return cpu, after.ru_maxrss / 1024, done.stdout


# The CLI phases run through this wrapper so the child reports its own peak RSS (the
# parent's RUSAGE_CHILDREN keeps the largest child so far, not this one's).
_CLI = textwrap.dedent(
    """
    import resource, sys
    from copyaudit.cli.main import main
    try:
        main(sys.argv[1:])
    finally:
        print("PEAK_RSS_KB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, flush=True)
    """
)

# A db-function phase: the code in {body} (CPU seconds of the body alone printed as WORK_S,
# apart from the interpreter's start and imports), then the child's peak RSS.
_PROBE = textwrap.dedent(
    """
    import resource, sys, time
    from copyaudit.studies.registry import headlines
    from db import Store
    from db.browse import (count_generations, dashboard_runs, generation_page,
        GenerationFilter, run_info, run_metrics, run_templates, run_works)
    start = time.process_time()
    {body}
    print("WORK_S", time.process_time() - start)
    print("PEAK_RSS_KB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, flush=True)
    """
)

_DASHBOARD = "with Store(sys.argv[1]) as store:\n    rows = dashboard_runs(store, headlines())"
_OPEN = (
    "with Store(sys.argv[1]) as store:\n"
    "    run = run_info(store, 'bench')\n"
    "    rid = run['id']\n"
    "    run_metrics(store, rid); run_works(store, rid); run_templates(store, rid)\n"
    "    f = GenerationFilter(run_id=rid)\n"
    "    count_generations(store, f); generation_page(store, f)"
)
_SEARCH = (
    "with Store(sys.argv[1]) as store:\n"
    "    f = GenerationFilter(run_id=run_info(store, 'bench')['id'], search=sys.argv[2])\n"
    "    start = time.process_time()\n"
    "    print('FOUND', count_generations(store, f), len(generation_page(store, f)))"
)


def _work(out: str) -> str:
    """The in-process CPU ms a probe printed."""
    seconds = next(line.split()[1] for line in out.splitlines() if line.startswith("WORK_S"))
    return f"{float(seconds) * 1000:.1f} ms in-process"


def _cli(db: Path, *args: str) -> list[str]:
    return [sys.executable, "-c", _CLI, "--db", str(db), *args]


def _probe(db: Path, body: str, *args: str) -> list[str]:
    code = _PROBE.replace("{body}", body)
    return [sys.executable, "-c", code, str(db), *args]


def _fts_share(db: Path) -> tuple[float, float]:
    """(database MB, MB of the FTS5 tables' pages)."""
    conn = sqlite3.connect(db)
    try:
        size = db.stat().st_size / 1e6
        try:
            fts = conn.execute(
                "SELECT SUM(pgsize) FROM dbstat WHERE name LIKE '%\\_fts%' ESCAPE '\\'"
            ).fetchone()[0]
        except sqlite3.OperationalError:  # built without dbstat
            fts = None
    finally:
        conn.close()
    return size, (fts or 0) / 1e6


def measure(n: int, judge: bool) -> list[tuple[str, float, float, str]]:
    """(phase, CPU s, peak RSS MB, note) for a database of n generations."""
    rows: list[tuple[str, float, float, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        cases, generations = write_inputs(directory, n)
        db = directory / "growth.db"
        cpu_a, rss_a, _ = _child(_cli(db, "import", "literal", str(cases), "--suite", "bench"))
        cpu_b, rss_b, _ = _child(
            _cli(db, "import-generations", "--run", "bench", "--suite", "bench", str(generations))
        )
        rows.append(("import", cpu_a + cpu_b, max(rss_a, rss_b), "cases + generations"))
        cpu, rss, _ = _child(_cli(db, "search-index"))  # imports leave it to this catch-up
        rows.append(("search-index", cpu, rss, "the imported rows indexed for search"))
        if judge:
            cpu, rss, _ = _child(_cli(db, "judge", "bench", "--judges", "literal"))
            rows.append(("judge", cpu, rss, "literal judge"))
        else:
            rows.append(("judge", float("nan"), float("nan"), "skipped (--judge-limit)"))
        cpu, rss, _ = _child(_cli(db, "report", "bench", "--format", "json"))
        rows.append(("report", cpu, rss, "json"))
        for phase, body in (("dashboard", _DASHBOARD), ("open run", _OPEN)):
            cpu, rss, out = _child(_probe(db, body))
            rows.append((phase, cpu, rss, _work(out)))
        for text, what in (
            (RARE, "rare, FTS5"),
            (COMMON, "common, FTS5"),
            (SHORT, "2 chars, LIKE"),
        ):
            cpu, rss, out = _child(_probe(db, _SEARCH, text))
            found = next(line.split() for line in out.splitlines() if line.startswith("FOUND"))
            note = f"{what}: {int(found[1]):,} found, count + page {_work(out)}"
            rows.append((f"search {text!r}", cpu, rss, note))
        cpu, rss, _ = _child(_cli(db, "verify"))
        rows.append(("verify", cpu, rss, ""))
        size, fts = _fts_share(db)
        rows.append(("database", float("nan"), float("nan"), f"{size:.0f} MB, FTS5 {fts:.0f} MB"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="add 1,000,000 generations")
    parser.add_argument("--n", type=int, action="append", help="size(s) instead of the default")
    parser.add_argument("--judge-limit", type=int, default=JUDGE_LIMIT, help="0: judge all")
    args = parser.parse_args()
    sizes = args.n or [*DEFAULT_SIZES, *([1_000_000] if args.full else [])]
    print(f"{'N':>10}  {'phase':<30} {'CPU s':>8} {'peak MB':>8}  note")
    for n in sizes:
        judge = args.judge_limit == 0 or n <= args.judge_limit
        for phase, cpu, rss, note in measure(n, judge):
            shown_cpu = "-" if cpu != cpu else f"{cpu:.2f}"
            shown_rss = "-" if rss != rss else f"{rss:.0f}"
            print(f"{n:>10,}  {phase:<30} {shown_cpu:>8} {shown_rss:>8}  {note}", flush=True)


if __name__ == "__main__":
    main()

"""Benchmark: `report`, `compare`, the dashboard's and opening a run's queries on a
database of N generations (three judgments each), old code against new in one run.

Run: .venv/bin/python tests/bench/bench_report.py [--n 1000000] [--old c79a38e] [--db PATH]

Builds the database with the OLD code's schema (one literal run: N cases over 50 works,
N generations over templates 1-3, judgments rougeL (flagged at 0.8, spans and threshold
in the evidence), rouge1 and lcs_tokens, written with SQL through db.Store as
bench_tui.py does, from our own words), then measures each operation in its own
subprocess: first with the old code (`git archive` of the --old commit, default the
main commit before the run totals, unpacked in a temporary folder and put first on
PYTHONPATH), then with this tree's code, which first migrates the database (the
totals' one-time backfill, measured too). Prints CPU seconds (user + system of the
operation alone, imports and opening the store excluded) and the process's peak RSS,
and the old/new ratio. Targets at 1M: report and compare < 2 CPU s and < 200 MB,
dashboard and open run < 0.1 CPU s each.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OLD_COMMIT = "c79a38e"
WORDS = ("the", "orchard", "glass", "seed", "river", "lantern", "harbour", "quiet", "night")

BUILD = f"""
import json, random, sys
from db import Store
n, path = int(sys.argv[1]), sys.argv[2]
rng = random.Random(0)
words = {WORDS!r}
store = Store(path)
conn = store.conn
stamp = "2024-01-01T00:00:00.000+00:00"
def text(k):
    return " ".join(rng.choice(words) for _ in range(k))
with store.transaction():
    conn.execute("INSERT INTO suites (name, kind, created_at) VALUES ('bench', 'literal', ?)",
                 (stamp,))
    conn.executemany(
        "INSERT INTO works (key, title, author, membership) VALUES (?, ?, 'Bench', 'unknown')",
        [(f"Work {{w}}\\x1fBench", f"Work {{w}}") for w in range(50)])
    conn.executemany(
        "INSERT INTO cases (suite_id, case_id, work_id, payload, content_hash, source, "
        "created_at) VALUES (1, ?, ?, ?, ?, 'bench', ?)",
        ((f"case-{{i}}", 1 + i % 50, json.dumps({{"input": text(8), "reference": text(12)}}),
          f"h{{i}}", stamp) for i in range(n)))
    conn.execute(
        "INSERT INTO runs (name, suite_id, backend, model, templates, status, created_at) "
        "VALUES ('bench-run', 1, 'imported', 'bench', '[]', 'imported', ?)", (stamp,))
    conn.executemany(
        "INSERT INTO generations (run_id, case_pk, template, prompt, output, source, "
        "created_at) VALUES (1, ?, ?, '', ?, 'imported', ?)",
        ((1 + i, 1 + i % 3, text(16), stamp) for i in range(n)))
    conn.execute("INSERT INTO judge_configs (hash, name, version, config) "
                 "VALUES ('bench', 'literal', '1', '{{}}')")
    def judgments():
        for gid in range(1, n + 1):
            value = rng.random()
            evidence = json.dumps({{"spans": [{{"start": 0, "end": 20, "item": None,
                                    "note": "lcs"}}], "items": [], "threshold": 0.8,
                                    "target": "literal"}})
            yield gid, "rougeL", value, int(value >= 0.8), evidence
            yield gid, "rouge1", min(1.0, value + 0.1), None, '{{"spans":[],"items":[]}}'
            yield gid, "lcs_tokens", float(int(value * 50)), None, '{{"spans":[],"items":[]}}'
    conn.executemany(
        "INSERT INTO judgments (generation_id, judge, judge_hash, metric, value, flagged, "
        "evidence, created_at) VALUES (?, 'literal', 'bench', ?, ?, ?, ?, '" + stamp + "')",
        judgments())
from db.events import append_label
for gid in range(1, n + 1, max(1, n // 200)):  # 200 labelled generations
    append_label(store, generation_id=gid, annotator="bench", target="literal",
                 item_index=0, label="yes" if gid % 2 else "no")
conn.execute("ANALYZE")
store.close()
"""

# One operation, measured in its own process: CPU of the call alone and the peak RSS.
MEASURE = """
import json, resource, sys, time
op, path = sys.argv[1], sys.argv[2]
from db import Store
from copyaudit.reports.run_report import build_report, report_markdown
from copyaudit.reports.compare.build import build_comparison
from copyaudit.reports.compare.render import comparison_markdown
from copyaudit.studies.registry import headlines
from db import browse
from db.queries import suites_summary
def usage():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime, u.ru_maxrss / 1024
migrate_start = usage()[0]
store = Store(path)  # the new code migrates the old database here (the backfill)
migrate = usage()[0] - migrate_start
run_id = browse.run_info(store, "bench-run")["id"]
def report():
    report_markdown(build_report(store, "bench-run"))
def compare():
    comparison_markdown(build_comparison(store))
def dashboard():
    browse.dashboard_runs(store, headlines())
    suites_summary(store)
def open_run():
    f = browse.GenerationFilter(run_id=run_id)
    browse.run_info(store, "bench-run")
    browse.run_metrics(store, run_id)
    browse.run_works(store, run_id)
    browse.run_templates(store, run_id)
    browse.list_stamp(store, run_id)
    browse.count_generations(store, f)
    browse.generation_page(store, f)
before, rss_before = usage()
{{"report": report, "compare": compare, "dashboard": dashboard, "open_run": open_run}}[op]()
after, rss = usage()
print(json.dumps({{"cpu": after - before, "rss_mb": rss, "rss_before_mb": rss_before,
                   "migrate_cpu": migrate}}))
""".replace("{{", "{").replace("}}", "}")

OPERATIONS = ("report", "compare", "dashboard", "open_run")


def _python(tree: Path, code: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"failed in {tree}:\n{done.stderr}")
    return done.stdout


def _old_tree(commit: str, into: Path) -> Path:
    """The files of `commit` unpacked (git archive) into `into`/old."""
    archive = into / "old.tar"
    with open(archive, "wb") as handle:
        subprocess.run(["git", "archive", commit], cwd=ROOT, stdout=handle, check=True)
    tree = into / "old"
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    archive.unlink()
    return tree


def _measure(tree: Path, op: str, db: Path) -> dict[str, float]:
    return json.loads(_python(tree, MEASURE, op, str(db)).strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="generations (default 100000)")
    parser.add_argument("--old", default=OLD_COMMIT, help=f"old commit (default {OLD_COMMIT})")
    parser.add_argument(
        "--db", type=Path, help="measure a copy of this database (old schema) instead of --n"
    )
    args = parser.parse_args()
    random.seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        old = _old_tree(args.old, Path(tmp))
        db = Path(tmp) / "bench.db"
        if args.db is None:
            _python(old, BUILD, str(args.n), str(db))
        else:  # a database built before (by the old code: the new code migrates a copy)
            shutil.copyfile(args.db, db)
        size = db.stat().st_size / 2**20
        print(f"{db.name}: {size:.0f} MB database, built by the old code's schema")
        print(f"load (1 min average) at start: {os.getloadavg()[0]:.2f}")
        old_figures = {op: _measure(old, op, db) for op in OPERATIONS}
        new_figures = {}
        for op in OPERATIONS:
            new_figures[op] = _measure(ROOT, op, db)
            if op == "report":
                print(
                    "migration onto the old database (totals backfilled once): "
                    f"{new_figures[op]['migrate_cpu']:.2f} CPU s"
                )
        print(
            f"{'operation':<10} {'old CPU s':>10} {'new CPU s':>10} {'ratio':>8} "
            f"{'old RSS MB':>11} {'new RSS MB':>11}"
        )
        for op in OPERATIONS:
            o, n = old_figures[op], new_figures[op]
            ratio = o["cpu"] / n["cpu"] if n["cpu"] > 0 else float("inf")
            print(
                f"{op:<10} {o['cpu']:>10.3f} {n['cpu']:>10.3f} {ratio:>7.1f}x "
                f"{o['rss_mb']:>11.0f} {n['rss_mb']:>11.0f}"
            )
        print(f"load (1 min average) at end: {os.getloadavg()[0]:.2f}")
        print("(RSS: the process's peak, Python and numpy included; CPU: the call alone)")


if __name__ == "__main__":
    main()

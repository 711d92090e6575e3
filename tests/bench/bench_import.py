"""Benchmark: importing N literal cases and N generations, and reading a run's pending
generations for judging (issue 20: a million records in constant memory); and each
import against raw inserts of the same rows (issue 34).

Run: .venv/bin/python tests/bench/bench_import.py [--n 100000] [--old REV | --no-old]
     [--only JSONL,generations,pending,labels] [--text prose|synthetic]

"raw inserts" (issue 34): a child that reads the same JSONL file and inserts its rows
with plain sqlite3 into a table of the same columns and indexes as copyaudit's, one
transaction, executemany per chunk, nothing else (no triggers, totals, checks or
digests); "raw + FTS5" also fills a trigram FTS5 table over the columns copyaudit's
search indexes, per chunk with one INSERT ... SELECT (what db.bulk did before
imports left the index to a catch-up). The new code's import is then printed against
both: import / raw and import / (raw + FTS5); and, since the import no longer indexes,
import plus `copyaudit search-index` (the catch-up, the same rows) / (raw + FTS5).

The texts (--text): "prose" (default), sentences of the public-domain passages in
samples/literal.jsonl shuffled, a fifth of their words swapped for words of other
sentences (so trigrams are as varied as in real prose); "synthetic", twelve words in a
fixed rhythm (the texts of the issue's first figures: few distinct trigrams, so a trigram
index costs far less than on prose).

Builds the files from our own words in a temporary directory (about 1.2 KB a case,
0.9 KB a generation, as the issue's 1M files), then runs each step as the real CLI
(`python -m copyaudit ...`) in a child process and prints its CPU seconds (user +
system) and peak RSS (ru_maxrss of that child, from os.wait4). "pending" is a child
that reads every generation `copyaudit judge` would score (db.pending), the read
judging does before (old) or while (new) it scores, without the judge's own work.
"import-labels" imports N labels (one per generation, each with a uuid and time, as an
export writes them; every tenth labelled twice, the first then retracted: 1.2 N records);
it needs the cases and generations, so `--only labels` runs those steps too.

Old vs new in one run: the old code is REV (default c79a38e, before streaming),
extracted with `git archive` into the temporary directory and run the same way on
the same files; above 200,000 records old is skipped unless --old is given (it
needs ~4 GB at 1M).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OLD_REV = "c79a38e"
START = datetime(2026, 1, 1, tzinfo=UTC)  # the labels' times: one a second from here
# the old JSON array reader counts lines from the file's start for every record
# (quadratic): measured up to this many records only
OLD_ARRAY_LIMIT = 20_000
WORDS = ["the", "orchard", "glass", "seed", "river", "lantern", "harbour", "quiet", "morning"]
WORDS += ["night", "Zoë", "naïve"]
SAMPLES = ROOT / "samples" / "literal.jsonl"

# what `copyaudit judge` reads before scoring: all at once (old) or paged (new)
PENDING = """
import sys
from db.connection import Store
from db.pending import generations_to_judge
from db.runs import run_row
with Store(sys.argv[1]) as store:
    n = sum(1 for _ in generations_to_judge(store, int(run_row(store, "r")["id"]), "literal"))
print(n)
"""


# raw inserts of the rows an import stores: argv db, file, table ("cases" or
# "generations"), "fts" or "plain". The rows as copyaudit stores them (payload as JSON,
# its hash, a time stamp), into a table with the same columns and indexes.
RAW = """
import hashlib, json, sqlite3, sys
from datetime import datetime, timezone
db, path, table, fts = sys.argv[1:5]
conn = sqlite3.connect(db, isolation_level=None)
conn.execute("PRAGMA journal_mode = WAL")
conn.execute("PRAGMA synchronous = NORMAL")
if table == "cases":
    conn.execute("CREATE TABLE cases (id INTEGER PRIMARY KEY, suite_id INTEGER NOT NULL, "
                 "case_id TEXT NOT NULL, work_id INTEGER NOT NULL, payload TEXT NOT NULL, "
                 "content_hash TEXT NOT NULL, source TEXT, created_at TEXT)")
    conn.execute("CREATE UNIQUE INDEX cases_key ON cases (suite_id, case_id)")
    conn.execute("CREATE INDEX cases_work ON cases (work_id)")
    columns = "suite_id, case_id, work_id, payload, content_hash, source, created_at"
    indexed = "case_id, payload"
else:
    conn.execute("CREATE TABLE generations (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, "
                 "case_pk INTEGER NOT NULL, template INTEGER NOT NULL, prompt TEXT, "
                 "output TEXT NOT NULL, source TEXT, created_at TEXT)")
    conn.execute("CREATE UNIQUE INDEX generations_key ON generations (run_id, case_pk, template)")
    conn.execute("CREATE INDEX generations_case ON generations (case_pk)")
    conn.execute("CREATE INDEX generations_run ON generations (run_id)")
    columns = "run_id, case_pk, template, prompt, output, source, created_at"
    indexed = "output, prompt"
if fts == "fts":
    conn.execute(f"CREATE VIRTUAL TABLE {table}_fts USING fts5({indexed}, content='{table}', "
                 "content_rowid='id', tokenize='trigram')")
marks = ", ".join("?" * len(columns.split(",")))
stamp = datetime.now(timezone.utc).isoformat()
conn.execute("BEGIN")
def flush(rows):
    after = conn.execute(f"SELECT COALESCE(MAX(id), 0) FROM {table}").fetchone()[0]
    conn.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", rows)
    if fts == "fts":
        conn.execute(f"INSERT INTO {table}_fts (rowid, {indexed}) SELECT id, {indexed} "
                     f"FROM {table} WHERE id > ?", (after,))
rows = []
with open(path, encoding="utf-8") as lines:
    for n, line in enumerate(lines, start=1):
        record = json.loads(line)
        if table == "cases":
            payload = json.dumps({k: record[k] for k in ("input", "reference")}, sort_keys=True)
            digest = hashlib.sha256(payload.encode()).hexdigest()
            rows.append((1, record["id"], n % 1000, payload, digest, "bench", stamp))
        else:
            rows.append((1, n, 1, None, record["output"], "bench", stamp))
        if len(rows) == 5000:  # db.cases.CHUNK_ROWS
            flush(rows)
            rows = []
flush(rows)
conn.execute("COMMIT")
"""


def _synthetic(i: int, n: int) -> str:
    return " ".join(WORDS[(i * 7 + k * 3 + k // 5) % len(WORDS)] for k in range(n))


class _Prose:
    """Texts of `n` words from the samples' public-domain sentences (see the docstring);
    the same `i` gives the same text."""

    def __init__(self) -> None:
        sentences = []
        for line in SAMPLES.read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            for field in ("input", "reference"):
                sentences += [s.split() for s in re.split(r"(?<=[.!?]) +", case[field])]
        self.sentences = [s for s in sentences if s]

    def __call__(self, i: int, n: int) -> str:
        rng = random.Random(i)
        words: list[str] = []
        while len(words) < n:
            for word in rng.choice(self.sentences):
                other = rng.choice(self.sentences)
                words.append(word if rng.random() < 0.8 else rng.choice(other))
        return " ".join(words[:n])


TEXTS = {"prose": _Prose, "synthetic": lambda: _synthetic}


def _label(i: int, uuid: str, **fields: str) -> dict[str, str | int]:
    return {
        "annotator": f"annotator-{i % 7}",
        "generation": f"r/case-{i}/1",
        "target": "literal",
        "index": 0,
        "uuid": uuid,
        "created_at": (START + timedelta(seconds=i)).isoformat(timespec="milliseconds"),
        **fields,
    }


def build_files(
    root: Path, n: int, text: Callable[[int, int], str] = _synthetic
) -> dict[str, Path]:
    """cases.jsonl, cases.json (the same cases as one array), generations.jsonl and
    labels.jsonl."""
    cases, array, gens = root / "cases.jsonl", root / "cases.json", root / "generations.jsonl"
    labels = root / "labels.jsonl"
    with (
        open(cases, "w", encoding="utf-8") as jsonl,
        open(array, "w", encoding="utf-8") as arr,
        open(gens, "w", encoding="utf-8") as out,
        open(labels, "w", encoding="utf-8") as lab,
    ):
        arr.write("[\n")
        for i in range(n):
            record = {
                "id": f"case-{i}",
                "title": f"Work {i % 1000}",
                "author": f"Author {i % 1000}",
                "input": text(i, 150),
                "reference": text(i + 1, 50),
            }
            line = json.dumps(record, ensure_ascii=False)
            jsonl.write(line + "\n")
            arr.write(line + (",\n" if i < n - 1 else "\n]\n"))
            out.write(json.dumps({"case_id": f"case-{i}", "output": text(i + 2, 160)}) + "\n")
            note = text(i + 3, 12)
            if i % 10 == 0:  # labelled "no" first, then retracted
                lab.write(json.dumps(_label(i, f"{i}-a", label="no", note=note)) + "\n")
                retract = {"action": "retract", "supersedes": f"{i}-a"}
                lab.write(json.dumps(_label(i, f"{i}-r", **retract)) + "\n")
            lab.write(json.dumps(_label(i, f"{i}-b", label="yes", note=note)) + "\n")
    return {"cases.jsonl": cases, "cases.json": array, "generations.jsonl": gens,
            "labels.jsonl": labels}  # fmt: skip


def measure(tree: Path, argv: list[str]) -> tuple[float, float, float]:
    """(CPU seconds, peak RSS MB, wall seconds) of one child process run in `tree`."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    with tempfile.TemporaryFile() as log:
        start = time.perf_counter()
        child = subprocess.Popen(argv, cwd=tree, env=env, stdout=log, stderr=log)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            log.seek(0)
            raise SystemExit(f"{' '.join(argv)} failed:\n{log.read().decode()}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, wall


def steps(db: Path, files: dict[str, Path]) -> list[tuple[str, list[str]]]:
    cli = [sys.executable, "-m", "copyaudit", "--db", str(db)]
    return [
        ("import cases (JSONL)", [*cli, "import", "literal", str(files["cases.jsonl"]),
                                  "--suite", "s"]),
        ("import cases (JSON array)", [*cli, "import", "literal", str(files["cases.json"]),
                                       "--suite", "a"]),
        ("re-import cases (unchanged)", [*cli, "import", "literal", str(files["cases.jsonl"]),
                                         "--suite", "s"]),
        ("import-generations", [*cli, "import-generations", str(files["generations.jsonl"]),
                                "--run", "r", "--suite", "s"]),
        ("search-index (catch-up)", [*cli, "search-index"]),
        ("pending generations (judge)", [sys.executable, "-c", PENDING, str(db)]),
        ("import-labels", [*cli, "import-labels", str(files["labels.jsonl"])]),
    ]  # fmt: skip


def raw_steps(root: Path, files: dict[str, Path]) -> list[tuple[str, str, list[str]]]:
    """(import step it is the baseline of, "plain" or "fts", argv) of the raw children."""
    out = []
    for step, file, table in (
        ("import cases (JSONL)", "cases.jsonl", "cases"),
        ("import-generations", "generations.jsonl", "generations"),
    ):
        for fts in ("plain", "fts"):
            argv = [sys.executable, "-c", RAW, str(root / f"raw-{table}-{fts}.db"),
                    str(files[file]), table, fts]  # fmt: skip
            out.append((step, fts, argv))
    return out  # fmt: skip


def compare_raw(
    root: Path, files: dict[str, Path], new: dict[str, tuple[float, float, float]]
) -> None:
    """Each import of the new code against raw inserts of its rows, with and without FTS5;
    the imports and the catch-up that indexes their rows against raw inserts + FTS5."""
    print(f"{'import vs raw inserts (CPU s)':30} {'import':>8} {'raw+FTS5':>9} {'raw':>7}"
          "   import/raw  import/(raw+FTS5)")  # fmt: skip
    raw: dict[str, dict[str, float]] = {}
    for step, label, argv in raw_steps(root, files):
        if step in new:
            raw.setdefault(step, {})[label] = measure(ROOT, argv)[0]
    for step, got in raw.items():
        cpu = new[step][0]
        print(f"{step:30} {cpu:8.1f} {got['fts']:9.1f} {got['plain']:7.1f}   "
              f"{cpu / got['plain']:9.2f}x {cpu / got['fts']:17.2f}x", flush=True)  # fmt: skip
    catch_up = new.get("search-index (catch-up)")
    if catch_up is not None and len(raw) == 2:
        imports = sum(new[step][0] for step in raw)
        with_fts = sum(got["fts"] for got in raw.values())
        print(f"{'both imports + search-index':30} {imports + catch_up[0]:8.1f} {with_fts:9.1f} "
              f"{'':7}   {'':9}  {(imports + catch_up[0]) / with_fts:17.2f}x "
              f"(the catch-up alone: {catch_up[0]:.1f} CPU s)", flush=True)  # fmt: skip


# what a step needs run before it (its database's rows)
NEEDS = {
    "import-labels": ("import cases (JSONL)", "import-generations"),
    "search-index (catch-up)": ("import cases (JSONL)", "import-generations"),
}


def selected(name: str, only: str | None) -> bool:
    """Whether --only asks for the step `name`, or for a step that needs it."""
    if not only:
        return True
    words = only.split(",")
    wanted = [step for step in (name, *[s for s, needs in NEEDS.items() if name in needs])]
    return any(word in step for step in wanted for word in words)


def old_tree(root: Path, rev: str) -> Path | None:
    """The code of `rev`, extracted under `root`; None when git cannot give it."""
    archive = root / "old.tar"
    with open(archive, "wb") as out:
        done = subprocess.run(["git", "-C", str(ROOT), "archive", rev], stdout=out, check=False)
    if done.returncode != 0:
        return None
    tree = root / "old"
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    return tree


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="records (default 100,000)")
    parser.add_argument("--old", default=None, help=f"old revision (default {OLD_REV})")
    parser.add_argument("--no-old", action="store_true", help="measure the new code only")
    parser.add_argument("--only", help="comma list of words: run only the steps naming one")
    parser.add_argument("--text", choices=sorted(TEXTS), default="prose",
                        help="the records' texts (default prose)")  # fmt: skip
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = build_files(root, args.n, TEXTS[args.text]())
        sizes = ", ".join(f"{name} {path.stat().st_size / 1e6:,.0f} MB" for name, path in
                          files.items())  # fmt: skip
        print(f"{args.n:,} records of {args.text} text: {sizes}; load average "
              f"{os.getloadavg()[0]:.2f}", flush=True)  # fmt: skip
        trees = {"new": ROOT}
        if not args.no_old and (args.old is not None or args.n <= 200_000):
            tree = old_tree(root, args.old or OLD_REV)
            if tree is None:
                print(f"(git archive {args.old or OLD_REV} failed: new only)")
            else:
                trees["old"] = tree
        results: dict[str, dict[str, tuple[float, float, float]]] = {}
        for label, tree in trees.items():
            db = root / f"{label}.db"
            results[label] = {}
            for name, argv in steps(db, files):
                if not selected(name, args.only):
                    continue
                if label == "old" and "array" in name and args.n > OLD_ARRAY_LIMIT:
                    continue
                if label == "old" and "search-index" in name:  # imports indexed then
                    continue
                results[label][name] = got = measure(tree, argv)
                print(f"  {label} {name}: {got[0]:.1f} CPU s, {got[1]:.0f} MB", flush=True)
            db.unlink()
        print(f"{'step':30} " + "  ".join(f"{k:>24}" for k in trees) + "   old/new")
        for name in results["new"]:
            cells = [
                f"{results[k][name][0]:7.1f} CPU s {results[k][name][1]:7.0f} MB"
                if name in results[k]
                else "(quadratic: skipped)"
                for k in trees
            ]
            ratio = ""
            if "old" in results and name in results["old"]:
                old, new = results["old"][name], results["new"][name]
                ratio = f"   CPU {old[0] / new[0]:.2f}x, RSS {old[1] / new[1]:.1f}x"
            print(f"{name:30} " + "  ".join(f"{c:>24}" for c in cells) + ratio)
        compare_raw(root, files, results["new"])
        print(f"load average after: {os.getloadavg()[0]:.2f} (2 cores shared)")


if __name__ == "__main__":
    main()

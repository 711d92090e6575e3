"""Benchmark: importing a 1M-row Parquet file of literal cases (issue 36: memory flat,
peak RSS under 300 MB). Not a timed test: it prints what it measured.

Run: .venv/bin/python tests/bench/bench_parquet_import.py [--n 1000000] [--row-group 100000]
     [--limit-mb 300]

Builds, in a temporary directory, a Parquet file as a Hugging Face export has it:
columns `title`, `prompt`, `continuation` and no `id` (about 0.6 KB of text a row from
our own words, row groups of --row-group rows), then runs in a child process each:

- read:   the reader alone (copyaudit.formats.read_cases streamed, no database), for
          the reader's rows/s;
- import: `python -m copyaudit import literal FILE --map input=prompt --map
          reference=continuation` into a new database (ids derived from each row).

For each it prints wall seconds, rows/s and the child's peak RSS (ru_maxrss, from
os.wait4's resource usage of that child; the file is built in a child of its own, since
a child's ru_maxrss starts from its parent's RSS). Exits 1 when a peak RSS is over
--limit-mb.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORDS = ["the", "orchard", "glass", "seed", "river", "lantern", "harbour", "quiet", "morning"]
WORDS += ["night", "Zoë", "naïve", "copper", "window", "letter", "winter"]
MAP = ["--map", "input=prompt", "--map", "reference=continuation"]

READ = """
import sys
from copyaudit.columns import ColumnMap
from copyaudit.formats import read_cases
columns = ColumnMap.parse(["input=prompt", "reference=continuation"])
print(sum(1 for _ in read_cases("literal", sys.argv[1], columns=columns).accepted()))
"""


def _text(i: int, n: int) -> str:
    return " ".join(WORDS[(i * 7 + k * 3 + k // 5 + i // 11) % len(WORDS)] for k in range(n))


def build(path: Path, n: int, row_group: int) -> None:
    """`n` rows, unique by their number, written a row group at a time. Run in a child
    of its own (`--build`): a child process's ru_maxrss starts from its parent's RSS at
    the fork (Linux keeps the larger across exec), so the measuring parent stays small."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema(
        [("title", pa.string()), ("prompt", pa.string()), ("continuation", pa.string())]
    )
    with pq.ParquetWriter(str(path), schema) as writer:
        for start in range(0, n, row_group):
            rows = range(start, min(n, start + row_group))
            writer.write_table(
                pa.table(
                    {
                        "title": [f"Work {i % 997}" for i in rows],
                        "prompt": [f"Passage {i}: {_text(i, 40)}" for i in rows],
                        "continuation": [_text(i + 1, 60) for i in rows],
                    },
                    schema=schema,
                ),
                row_group_size=row_group,
            )


def measure(args: list[str], env: dict[str, str], log: Path) -> tuple[float, float, str]:
    """(wall seconds, peak RSS in MB, output) of a child process: its resource usage from
    os.wait4, which reaps that child alone (RUSAGE_CHILDREN would fold in the others)."""
    with open(log, "w+", encoding="utf-8") as out:
        start = time.perf_counter()
        child = subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read()
    if child.returncode:
        sys.exit(f"{' '.join(args)} failed ({child.returncode}):\n{text}")
    return wall, usage.ru_maxrss / 1024, text  # ru_maxrss: KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--row-group", type=int, default=100_000)
    parser.add_argument("--limit-mb", type=float, default=300.0)
    parser.add_argument("--build", type=Path, help=argparse.SUPPRESS)  # the child that writes
    opts = parser.parse_args()
    if opts.build is not None:
        build(opts.build, opts.n, opts.row_group)
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = root / "cases.parquet"
        sizes = ["--n", str(opts.n), "--row-group", str(opts.row_group)]
        subprocess.run([sys.executable, __file__, "--build", str(path), *sizes], check=True)
        size = path.stat().st_size / 1e6
        print(f"{opts.n:,} rows, {size:.1f} MB Parquet, row groups of {opts.row_group:,}")
        env = {**os.environ, "PYTHONPATH": str(ROOT), "COPYAUDIT_DB": str(root / "bench.db")}
        steps = {
            "read": [sys.executable, "-c", READ, str(path)],
            "import": [sys.executable, "-m", "copyaudit", "import", "literal", str(path), *MAP],
        }
        over = []
        for name, args in steps.items():
            wall, rss, out = measure(args, env, root / f"{name}.log")
            print(
                f"{name:7s} {wall:8.1f} s  {opts.n / wall:10,.0f} rows/s  peak RSS {rss:7.1f} MB"
                f"  | {out.strip().splitlines()[-1][:160]}"
            )
            if rss > opts.limit_mb:
                over.append(f"{name}: {rss:.0f} MB")
        if over:
            sys.exit(f"peak RSS over {opts.limit_mb:.0f} MB: {'; '.join(over)}")


if __name__ == "__main__":
    main()

"""One deterministic import session through the real CLI — cases, generations, over
several chunks, re-imported with changes, with skipped rows — and a digest of every
row it leaves (timestamps left out). The streaming importers must leave exactly the
rows the whole-file importers of c79a38e left (the digests pinned in
tests/test_import_stream.py were printed by this module run on that commit)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import tempfile
from pathlib import Path

from copyaudit.cli.main import main
from tests.process_cache import copy_database, scratch_folder

N = 2 * 5000 + 7  # two chunks of rows and a bit
WORDS = ["orchard", "glass", "lantern", "harbour", "quiet", "Zoë", "naïve", "🙂", "line\u2028sep"]


def _text(i: int, n: int) -> str:
    return " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(n))


def case_record(i: int, changed: bool = False) -> dict:
    record = {"id": f"lit-{i}", "title": f"Work {i % 37}", "input": _text(i, 9)}
    record["reference"] = _text(i + 1, 12) + (" (revised)" if changed else "")
    if i % 37 % 3:
        record["author"] = f"Author {i % 37}"
    if i % 37 % 5 == 0:
        record["year"] = 1900 + i % 37
    return record


def generation_record(i: int, template: int = 1, changed: bool = False) -> dict:
    record = {"case_id": f"lit-{i}", "output": _text(i + 3, 20) + (" again" if changed else "")}
    if template != 1:
        record["template"] = template
    return record


def _cli(*args: str) -> str:
    """Run the CLI; its exit code and a digest of what it printed."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return f"{code} {out.getvalue()}{err.getvalue()}"


def _write_jsonl(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")


def run_session(root: Path) -> list[str]:
    """The session, run in `root` (the CLI names files relative to it); its outputs."""
    db = "audit.db"
    _write_jsonl(root / "a.jsonl", [case_record(i) for i in range(N)])
    changed = [case_record(i, changed=i % 7 == 0) for i in range(0, N, 3)]
    added = [case_record(i) for i in range(N, N + 500)]
    (root / "b.json").write_text(json.dumps(changed + added, indent=1), "utf-8")
    bad = [case_record(i) for i in range(100)]
    bad[10].pop("input")
    bad[20]["year"] = "1901"
    bad[99] = case_record(3)
    _write_jsonl(root / "c.jsonl", bad)
    gens = [generation_record(i) for i in range(N)] + [generation_record(i, 2) for i in range(50)]
    _write_jsonl(root / "g.jsonl", gens)
    regen = [generation_record(i, changed=i % 11 == 0) for i in range(0, N, 2)]
    _write_jsonl(root / "g2.jsonl", [*regen, {"case_id": "nowhere", "output": "x"}])
    (root / "dir").mkdir()
    _write_jsonl(
        root / "dir" / "m1.jsonl", [{**generation_record(i), "model": "m1"} for i in range(40)]
    )
    _write_jsonl(root / "dir" / "m2.jsonl", [generation_record(i, 3) for i in range(30)])
    return [
        _cli("--db", db, "import", "literal", "a.jsonl", "--suite", "s"),
        _cli("--db", db, "import", "literal", "a.jsonl", "--suite", "s"),
        _cli("--db", db, "import", "literal", "b.json", "--suite", "s"),
        _cli("--db", db, "import", "literal", "b.json", "--suite", "s", "--replace"),
        _cli("--db", db, "import", "literal", "c.jsonl", "--suite", "c"),
        _cli("--db", db, "import", "literal", "c.jsonl", "--suite", "c", "--skip-invalid"),
        _cli("--db", db, "import-generations", "g.jsonl", "--run", "r", "--suite", "s"),
        _cli("--db", db, "import-generations", "g2.jsonl", "--run", "r", "--suite", "s"),
        _cli(
            "--db",
            db,
            "import-generations",
            "g2.jsonl",
            "--run",
            "r",
            "--suite",
            "s",
            "--replace",
            "--skip-invalid",
        ),
        _cli("--db", db, "import-generations", "dir", "--suite", "s", "--run", "d"),
    ]


_SESSION: list[tuple[Path, list[str]]] = []  # the session's database and outputs, run once


def session_copy(root: Path) -> list[str]:
    """`run_session`'s database copied to root/audit.db, and its outputs; the session
    runs once per test process (in a folder of its own), as the default code writes it."""
    if not _SESSION:
        folder = scratch_folder("import-scenario")
        with contextlib.chdir(folder):  # the session names its files relative to where it runs
            _SESSION.append((folder / "audit.db", run_session(folder)))
    template, outputs = _SESSION[0]
    copy_database(template, root / "audit.db")
    return list(outputs)


# the rows an import writes, without their timestamps
TABLES = {
    "suites": "id, name, kind",
    "works": "id, key, title, author, year, membership",
    "cases": "id, suite_id, case_id, work_id, payload, content_hash, source, given_characters",
    "runs": "id, name, suite_id, backend, model, status",
    "generations": "id, run_id, case_pk, template, prompt, output, source, error",
    "skipped_rows": "suite_id, run_id, source, unit, line, field, reason",
}


def rows_digest(db: Path) -> dict[str, str]:
    """Per table: the row count and a hash of its rows in id order."""
    conn = sqlite3.connect(db)
    try:
        out = {}
        for table, columns in TABLES.items():
            rows = conn.execute(f"SELECT {columns} FROM {table} ORDER BY rowid").fetchall()
            digest = hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode()).hexdigest()
            out[table] = f"{len(rows)} {digest[:16]}"
        return out
    finally:
        conn.close()


SEARCH_INDEX_HINT = "search index: "  # copyaudit.cli.search_index.echo_backlog_hint


def outputs_digest(outputs: list[str]) -> str:
    """A hash of what the commands printed, but the search index's hints (an import
    leaves its rows to a catch-up since m023; the importers of c79a38e indexed them)."""
    kept = [
        "".join(line for line in out.splitlines(True) if not line.startswith(SEARCH_INDEX_HINT))
        for out in outputs
    ]
    return hashlib.sha256("\n".join(kept).encode()).hexdigest()[:16]


if __name__ == "__main__":
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        outputs = run_session(Path(tmp))
        for line in outputs:
            print(line[:300].replace("\n", " | "))
        print(json.dumps(rows_digest(Path(tmp) / "audit.db"), indent=1))
        print("outputs", outputs_digest(outputs))

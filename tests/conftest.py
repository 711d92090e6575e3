"""Shared fixtures: a temporary database and an in-process `copyaudit` runner."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from copyaudit.cli.main import main

# Python's cyclic collector runs after every 700 net allocations by default; a Pilot test
# allocates many short-lived objects per render (strips, segments, style caches), so the
# collector ran 8,574 times and took 14.8 of 44.0 CPU s over three Pilot-heavy files
# (test_screens_annotate, _review, _view). At (50,000, 20, 20): 333 collections, 31.4 CPU s
# for the same tests. Test processes only: the app keeps Python's default.
gc.set_threshold(50_000, 20, 20)

if os.environ.get("PYTEST_XDIST_WORKER"):
    # The workers are the parallelism (make test: one per core): one torch/OpenMP thread
    # each, so that they do not oversubscribe the cores (set before torch is imported).
    os.environ.setdefault("OMP_NUM_THREADS", "1")


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the user's database, annotator, cache or network settings."""
    monkeypatch.delenv("COPYAUDIT_DB", raising=False)
    monkeypatch.delenv("COPYAUDIT_DEBUG", raising=False)
    monkeypatch.setenv("COPYAUDIT_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture
def demo_db(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A database built from the bundled samples like the demo, with the suites named by
    the test module's DEMO_KINDS (default: literal and nonliteral): each test gets its own
    copy of a template built once per session, so it may write to it."""
    from tests.test_screens_data import copy_demo_like_db

    kinds = getattr(request.module, "DEMO_KINDS", ("literal", "nonliteral"))
    return copy_demo_like_db(tmp_path / "demo.db", kinds)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "audit.db"


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], db_path: Path) -> Callable[..., CliResult]:
    """Run `copyaudit --db <tmp db> ARGS...` in-process through the real entry point."""

    def run(*args: str, db: Path | None = None) -> CliResult:
        capsys.readouterr()
        argv = ["--db", str(db or db_path), *args]
        try:
            main(argv)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


def write_jsonl(path: Path, records: Sequence[dict[str, Any]]) -> Path:
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    return path


def database_fingerprint(path: Path) -> tuple[dict[str, int], str]:
    """Row counts of every table and a hash of the whole content (SQL dump)."""
    conn = sqlite3.connect(path)
    try:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        counts = {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in tables}
        digest = hashlib.sha256("\n".join(conn.iterdump()).encode()).hexdigest()
    finally:
        conn.close()
    return counts, digest

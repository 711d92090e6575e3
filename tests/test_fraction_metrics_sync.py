"""A fraction metric the code gains after a database was made (a judge registered here,
declaring it next to its code): the store's `fraction_metrics` follows the judges'
declarations at every open for writing and recounts what moved, and a read-only open
(which writes nothing) still draws the right histogram."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from copyaudit.judges.metric_facts import fraction_metrics
from copyaudit.judges.registry import JUDGES, JudgeSpec
from copyaudit.metrics_spec import Metric
from copyaudit.reports.scores import scores_from_store
from db import Store
from db.fraction_metrics import binned_metrics

STAMP = "2024-01-01T00:00:00"
NEW = "novel_share"  # a fraction metric the code did not have when the database was made
VALUES = (0.0, 1.0, 0.55, 0.55, 1.5)  # 1.5: outside [0, 1], left out of a histogram


def _old_database(path: Path) -> None:
    """A database made while NEW was not a fraction metric, with one run judged by it."""
    assert NEW not in fraction_metrics()
    with Store(path) as store, store.transaction():
        conn = store.conn
        conn.execute("INSERT INTO works (key, title, membership) VALUES ('w', 'W', 'unknown')")
        conn.execute(
            "INSERT INTO suites (name, kind, created_at) VALUES ('s', 'literal', ?)", (STAMP,)
        )
        conn.executemany(
            "INSERT INTO cases (suite_id, case_id, work_id, payload, content_hash, created_at) "
            "VALUES (1, ?, 1, '{}', 'h', ?)",
            [(f"c{i}", STAMP) for i in range(len(VALUES))],
        )
        conn.execute(
            "INSERT INTO runs (name, suite_id, backend, templates, status, created_at) "
            "VALUES ('r', 1, 'imported', '[]', 'done', ?)",
            (STAMP,),
        )
        for case_pk, value in enumerate(VALUES, start=1):
            gid = conn.execute(
                "INSERT INTO generations (run_id, case_pk, template, output, source, created_at) "
                "VALUES (1, ?, 1, 'out', 'imported', ?)",
                (case_pk, STAMP),
            ).lastrowid
            conn.execute(
                "INSERT INTO judgments (generation_id, judge, metric, value, created_at) "
                "VALUES (?, 'j', ?, ?, ?)",
                (gid, NEW, value, STAMP),
            )
        # made before NEW existed: counted per value (0.0, 0.55, 1.0, 1.5)
        assert NEW not in binned_metrics(conn)


def _register_novel_judge(monkeypatch: pytest.MonkeyPatch, unit: str) -> None:
    """A judge whose module declares NEW with `unit`, registered by one entry."""
    module = ModuleType("novel_judge")
    module.METRICS = (Metric(NEW, "novel share", unit),)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "novel_judge", module)
    spec = JudgeSpec("novel", "novel_judge:build", "novel_judge", frozenset({"literal"}))
    monkeypatch.setitem(JUDGES, "novel", spec)


@pytest.fixture
def old_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "old.db"
    _old_database(path)
    _register_novel_judge(monkeypatch, "fraction")
    assert NEW in fraction_metrics()
    return path


def _right_histogram(store: Store) -> None:
    histogram = scores_from_store(store, 1)[NEW].histogram()
    assert histogram["edges"] == [round(float(e), 4) for e in np.linspace(0, 1, 11)]
    # 0.0 in the first bin, both 0.55 in the sixth, 1.0 in the last; 1.5 left out
    assert histogram["counts"] == [1, 0, 0, 0, 0, 2, 0, 0, 0, 1]


def test_an_old_database_opened_for_writing_bins_the_new_fraction_metric(old_db: Path) -> None:
    with Store(old_db) as store:
        assert NEW in binned_metrics(store.conn)
        counts = store.conn.execute(
            "SELECT bin, n FROM value_counts WHERE metric = ? ORDER BY bin", (NEW,)
        ).fetchall()
        assert [tuple(r) for r in counts] == [(-1, 1), (0, 1), (5, 2), (9, 1)]
        _right_histogram(store)
        # judged after the reopen: counted by the triggers in its bin
        with store.transaction():
            store.conn.execute(
                "INSERT INTO judgments (generation_id, judge, metric, value, created_at) "
                "VALUES (1, 'k', ?, 0.95, ?)",
                (NEW, STAMP),
            )
        assert scores_from_store(store, 1)[NEW].histogram()["counts"][9] == 2


def test_an_old_database_opened_read_only_draws_the_right_histogram(old_db: Path) -> None:
    before = hashlib.sha256(old_db.read_bytes()).hexdigest()
    with Store(old_db, read_only=True) as store:
        assert NEW not in binned_metrics(store.conn)  # the file is left as it was
        _right_histogram(store)
    assert hashlib.sha256(old_db.read_bytes()).hexdigest() == before


def test_a_metric_no_longer_a_fraction_is_counted_per_value_again(
    old_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Store(old_db).close()  # NEW binned
    _register_novel_judge(monkeypatch, "count")  # its declaration changed
    assert NEW not in fraction_metrics()
    with Store(old_db) as store:
        assert NEW not in binned_metrics(store.conn)
        counts = store.conn.execute(
            "SELECT bin, n FROM value_counts WHERE metric = ? ORDER BY bin", (NEW,)
        ).fetchall()
        assert [tuple(r) for r in counts] == [(0.0, 1), (0.55, 2), (1.0, 1), (1.5, 1)]

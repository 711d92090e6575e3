"""Labels, reviews and imports commit durably: the write-ahead log is synced before the
commit returns (synchronous=FULL for that transaction), so a power cut after a label is
recorded loses nothing. Everything else keeps synchronous=NORMAL (never corrupt; the
last commits may be lost on a power cut: a run's batch is generated again)."""

from __future__ import annotations

from pathlib import Path

import pytest

from db import Store
from db.events import append_label, append_review
from tests.conftest import write_jsonl
from tests.factories import literal_record

NORMAL, FULL = 1, 2


class Levels:
    """The safety level in force at each COMMIT on a connection."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.at_commit: list[int] = []
        self.level = NORMAL
        store.conn.set_trace_callback(self._seen)

    def _seen(self, sql: str) -> None:
        statement = sql.strip().upper()
        if statement.startswith("PRAGMA SYNCHRONOUS"):
            self.level = FULL if statement.endswith("FULL") else NORMAL
        elif statement == "COMMIT":
            self.at_commit.append(self.level)


def _level(store: Store) -> int:
    return int(store.scalar("PRAGMA synchronous"))


def test_a_durable_transaction_runs_at_full_and_restores_normal(db_path: Path) -> None:
    with Store(db_path) as store:
        assert _level(store) == NORMAL
        with store.transaction(durable=True):
            assert _level(store) == FULL
        assert _level(store) == NORMAL
        with pytest.raises(RuntimeError), store.transaction(durable=True):
            raise RuntimeError("rolled back")
        assert _level(store) == NORMAL and not store.conn.in_transaction
        with store.transaction():
            assert _level(store) == NORMAL


@pytest.fixture
def generation(tmp_path: Path, cli, db_path: Path) -> int:
    cases = write_jsonl(tmp_path / "c.jsonl", [literal_record(1)])
    assert cli("import", "literal", str(cases), "--suite", "s").code == 0
    case_id = literal_record(1)["id"]
    outputs = write_jsonl(tmp_path / "g.jsonl", [{"case_id": case_id, "output": "words"}])
    assert cli("import-generations", str(outputs), "--run", "r", "--suite", "s").code == 0
    with Store(db_path) as store:
        return int(store.scalar("SELECT id FROM generations"))


def test_labels_and_reviews_commit_at_full(db_path: Path, generation: int) -> None:
    with Store(db_path) as store:
        levels = Levels(store)
        append_label(
            store, generation_id=generation, annotator="ann", target="literal", item_index=0,
            label="yes",
        )  # fmt: skip
        append_review(store, generation_id=generation, reviewer="ann", status="escalated")
        assert levels.at_commit == [FULL, FULL]
        assert _level(store) == NORMAL


@pytest.fixture
def commits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The safety level at each COMMIT of every connection the store opens."""
    import sqlite3

    seen: list[int] = []
    real_connect = sqlite3.connect

    def connect(*args, **kwargs):
        conn = real_connect(*args, **kwargs)
        state = {"level": NORMAL}

        def trace(sql: str) -> None:
            statement = sql.strip().upper()
            if statement.startswith("PRAGMA SYNCHRONOUS"):
                state["level"] = FULL if statement.endswith("FULL") else NORMAL
            elif statement == "COMMIT":
                seen.append(state["level"])

        conn.set_trace_callback(trace)
        return conn

    monkeypatch.setattr("db.connection.sqlite3.connect", connect)
    return seen


def test_imports_commit_at_full(tmp_path: Path, cli, commits: list[int]) -> None:
    cases = write_jsonl(tmp_path / "c.jsonl", [literal_record(1)])
    assert cli("import", "literal", str(cases), "--suite", "s").code == 0
    assert commits[-1] == FULL  # after the migrations' commits (NORMAL)
    outputs = write_jsonl(
        tmp_path / "g.jsonl", [{"case_id": literal_record(1)["id"], "output": "w"}]
    )
    commits.clear()
    assert cli("import-generations", str(outputs), "--run", "r", "--suite", "s").code == 0
    assert commits == [FULL]
    labels = write_jsonl(
        tmp_path / "l.jsonl",
        [{"annotator": "ann", "generation": f"r/{literal_record(1)['id']}/1", "target": "literal",
          "label": "yes"}],
    )  # fmt: skip
    commits.clear()
    result = cli("import-labels", str(labels))
    assert result.code == 0, result.err
    assert commits and set(commits) == {FULL}


def test_a_durable_call_cannot_join_a_normal_transaction(db_path: Path, generation: int) -> None:
    with Store(db_path) as store:
        with pytest.raises(RuntimeError, match="durable=True"), store.transaction():
            append_label(
                store, generation_id=generation, annotator="ann", target="literal",
                item_index=0, label="no",
            )  # fmt: skip
        assert store.scalar("SELECT COUNT(*) FROM labels") == 0  # rolled back whole
        with store.transaction(durable=True):  # joined by a durable outer one: fine
            append_label(
                store, generation_id=generation, annotator="ann", target="literal",
                item_index=0, label="no",
            )  # fmt: skip
        assert store.scalar("SELECT COUNT(*) FROM labels") == 1

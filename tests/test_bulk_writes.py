"""db.bulk: imports and a judge's writes keep the FTS indexes and the run totals chunk
by chunk, set-wise, and leave exactly what the per-row triggers leave (and what a
full rebuild counts); a write that fails leaves them unchanged; single-row writes keep
their triggers."""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import chdir, contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import db.cases
import db.runs
from copyaudit.reports.scores import FRACTION_EDGES
from copyaudit.types import Score
from db import Store
from db.audit import audit
from db.bulk import bulk_inserts
from db.migrations import FTS_TABLES, TALLIES, chunk_sql, derived_trigger_sql
from db.runs import JudgeIdentity, save_judgments
from db.search_index import backlog, catch_up, has_backlog
from tests import import_scenario
from tests.conftest import database_fingerprint
from tests.test_run_totals import _recount, _same

JUDGE = JudgeIdentity("j", "1", {"threshold": 0.5}, "h")
TOTALS = [t.table for t in TALLIES]
EDGES = [float(v) for e in FRACTION_EDGES for v in (np.nextafter(e, -1.0), e)]
# words of the scenario's texts (tests/import_scenario.WORDS), case changed, and misses
QUERIES = ["orchard", "GLASS", "lantern harbour", "Zoë", "zoë", "naïve quiet", "lit-1",
           "lit-100", "Work 3", "revised", "again", "nothing like it", "sep"]  # fmt: skip


class _PerRow:
    """The path the app's writes take: plain inserts, every trigger firing."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> int:
        return self.store.conn.executemany(sql, rows).rowcount


@contextmanager
def _per_row(store: Store, table: str, defer_search_index: bool = False) -> Iterator[_PerRow]:
    yield _PerRow(store)


def _scores(rng: random.Random, gid: int) -> list[Score]:
    value = rng.choice([None, rng.random(), rng.choice(EDGES), -0.25, 1.5, 0.0, 1.0])
    threshold = rng.choice([0.5, 0.8])
    flagged = None if value is None else value >= threshold
    return [
        Score("rougeL", value, flagged, threshold),
        Score("lcs_tokens", float(rng.randrange(60))),
        Score("fluency", rng.choice([None, 1.0, 3.5])),
    ]


def _session(root: Path, fresh: bool = False) -> Path:
    """The import scenario (cases and generations over several chunks, re-imported with
    --replace and skipped rows), then judged in the runner's batches and partly
    re-judged, the generation with the largest judgment id among them. `fresh`: the
    scenario runs here (through whatever writers are patched in), else it is copied."""
    if fresh:
        with chdir(root):  # the scenario names its files relative to where it runs
            import_scenario.run_session(root)
    else:
        _imported(root)
    path = root / "audit.db"
    rng = random.Random(7)
    with Store(path) as store:
        ids = [r[0] for r in store.conn.execute("SELECT id FROM generations ORDER BY id")]
        for start in range(0, len(ids), 32):
            save_judgments(store, JUDGE, [(g, _scores(rng, g)) for g in ids[start : start + 32]])
        again = [*ids[::97], ids[-1]]
        save_judgments(store, JUDGE, [(g, _scores(rng, g)) for g in again])
    return path


def _imported(root: Path) -> None:
    """The import scenario's database (the default writers) in root/audit.db."""
    import_scenario.session_copy(root)


def _totals(conn: sqlite3.Connection) -> dict[str, list[tuple]]:
    return {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2, 3").fetchall() for t in TOTALS}


def _matches(conn: sqlite3.Connection) -> dict[str, list[int]]:
    """Per FTS table and query: the rowids matched."""
    return {
        f"{table} {q}": [
            r[0]
            for r in conn.execute(
                f"SELECT rowid FROM {table}_fts WHERE {table}_fts MATCH ? ORDER BY rowid",
                (f'"{q}"',),
            )
        ]
        for table in FTS_TABLES
        for q in QUERIES
    }


def _like(conn: sqlite3.Connection) -> dict[str, list[int]]:
    """The same searches as LIKE scans of the tables (the queries fold like LIKE)."""
    out = {}
    for table, columns in FTS_TABLES.items():
        where = " OR ".join(f"{c} LIKE ?" for c in columns)
        for q in QUERIES:
            rows = conn.execute(
                f"SELECT id FROM {table} WHERE {where} ORDER BY id", [f"%{q}%"] * len(columns)
            )
            out[f"{table} {q}"] = [r[0] for r in rows]
    return out


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same session written through db.bulk and through the per-row triggers."""
    out = {"bulk": _session(tmp_path_factory.mktemp("bulk"))}
    with pytest.MonkeyPatch.context() as patch:
        for module in (db.cases, db.runs):
            patch.setattr(module, "bulk_inserts", _per_row)
        out["per_row"] = _session(tmp_path_factory.mktemp("per_row"), fresh=True)
    return out


def test_the_bulk_path_leaves_the_rows_and_totals_the_triggers_leave(sessions) -> None:
    assert import_scenario.rows_digest(sessions["bulk"]) == import_scenario.rows_digest(
        sessions["per_row"]
    )
    with Store(sessions["bulk"]) as bulk, Store(sessions["per_row"]) as per_row:
        assert bulk.scalar("SELECT COUNT(*) FROM judgments") > 3 * import_scenario.N
        assert bulk.scalar("SELECT COUNT(*) FROM judgments") == per_row.scalar(
            "SELECT COUNT(*) FROM judgments"
        )
        mine, theirs = _totals(bulk.conn), _totals(per_row.conn)
        _same(mine, theirs)  # value_sum: the same sums, added in another order
        assert len(mine["value_counts"]) > 10 and {r[2] for r in mine["threshold_counts"]} == {
            0.5,
            0.8,
        }
        assert bulk.scalar("SELECT COUNT(*) FROM bulk_writing") == 0


def test_the_bulk_path_s_totals_equal_a_full_recount(sessions) -> None:
    with Store(sessions["bulk"]) as store:
        kept = {t: rows for t, rows in _totals(store.conn).items() if t != "threshold_counts"}
        _same(kept, _recount(store))
        thresholds = store.conn.execute(
            "SELECT g.run_id, j.metric, json_extract(j.evidence, '$.threshold') AS t, COUNT(*) "
            "FROM judgments j JOIN generations g ON g.id = j.generation_id WHERE t IS NOT NULL "
            "GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
        ).fetchall()
        assert [*map(tuple, _totals(store.conn)["threshold_counts"])] == [*map(tuple, thresholds)]


def test_the_bulk_path_s_search_indexes_are_sound_and_find_what_like_finds(
    sessions, tmp_path: Path
) -> None:
    """The imports left their rows to a catch-up (the index reaches none of them and
    lists nothing); caught up, the index is what the per-row triggers built."""
    copy = tmp_path / "bulk.db"
    with Store(sessions["bulk"]) as bulk, Store(copy) as caught_up:
        bulk.conn.backup(caught_up.conn)
    with Store(copy) as bulk, Store(sessions["per_row"]) as per_row:
        counts = {t: bulk.scalar(f"SELECT COUNT(*) FROM {t}") for t in FTS_TABLES}
        assert backlog(bulk).rows == counts
        assert not any(_matches(bulk.conn).values())
        assert not has_backlog(per_row)
        catch_up(bulk, step_rows=97)
        for table in FTS_TABLES:  # raises on an index that differs from its content table
            bulk.conn.execute(f"INSERT INTO {table}_fts ({table}_fts) VALUES ('integrity-check')")
        found = _matches(bulk.conn)
        assert found == _matches(per_row.conn)
        assert found == _like(bulk.conn)
        assert sum(1 for ids in found.values() if ids) > len(found) // 2


def test_a_failed_judge_write_leaves_everything_unchanged(tmp_path: Path) -> None:
    _imported(tmp_path)
    path = tmp_path / "audit.db"
    with Store(path) as store:
        save_judgments(store, JUDGE, [(g, _scores(random.Random(g), g)) for g in range(1, 40)])
        before = database_fingerprint(path)
        twice = [*_scores(random.Random(1), 50), Score("rougeL", 0.5)]  # a metric twice
        results = [(g, _scores(random.Random(g), g)) for g in range(40, 50)] + [(50, twice)]
        with pytest.raises(sqlite3.IntegrityError):
            save_judgments(store, JUDGE, results)
        assert database_fingerprint(path) == before
        assert store.scalar("SELECT COUNT(*) FROM bulk_writing") == 0


def test_a_generation_named_twice_in_one_batch_keeps_its_last_scores(tmp_path: Path) -> None:
    """One call naming a generation twice stores what two calls one after the other
    would: the second scores, once (the unique (generation, judge, metric) holds)."""
    first = [Score("rougeL", 0.25, False, 0.5), Score("lcs_tokens", 3.0)]
    second = [Score("rougeL", 0.75, True, 0.5)]
    (once := tmp_path / "once").mkdir()
    (apart := tmp_path / "apart").mkdir()
    for root in (once, apart):
        _imported(root)
    with Store(once / "audit.db") as store:
        save_judgments(store, JUDGE, [(1, first), (2, first), (1, second)])
        stored = store.conn.execute(
            "SELECT generation_id, metric, value, flagged FROM judgments ORDER BY 1, 2"
        ).fetchall()
        totals = _totals(store.conn)
    with Store(apart / "audit.db") as store:
        save_judgments(store, JUDGE, [(1, first), (2, first)])
        save_judgments(store, JUDGE, [(1, second)])
        assert (
            stored
            == store.conn.execute(
                "SELECT generation_id, metric, value, flagged FROM judgments ORDER BY 1, 2"
            ).fetchall()
        )
        assert totals == _totals(store.conn)
    assert [tuple(r) for r in stored] == [
        (1, "rougeL", 0.75, 1), (2, "lcs_tokens", 3.0, None), (2, "rougeL", 0.25, 0)
    ]  # fmt: skip


def test_single_row_writes_keep_their_triggers(tmp_path: Path) -> None:
    """While one table is marked, another table's inserts still fire their triggers;
    once the writer is done, the marked table's do again. No other connection ever
    sees the marker."""
    _imported(tmp_path)
    with Store(tmp_path / "audit.db") as store, Store(tmp_path / "audit.db") as other:
        catch_up(store)  # else a single insert waits behind the import's rows
        gid = store.scalar("SELECT MAX(id) FROM generations")
        with bulk_inserts(store, "judgments"):
            assert store.scalar("SELECT tbl FROM bulk_writing") == "judgments"
            assert other.scalar("SELECT COUNT(*) FROM bulk_writing") == 0
            store.conn.execute(
                "INSERT INTO generations (run_id, case_pk, template, output, source) "
                "VALUES (1, 1, 9, 'a single row of plainsong', 'imported')"
            )
        store.conn.execute(
            "INSERT INTO judgments (generation_id, judge, metric, value) "
            f"VALUES ({gid}, 'x', 'rougeL', 0.25)"
        )
        assert (
            store.scalar(
                "SELECT generations FROM generation_totals WHERE run_id = 1 AND template = 9"
            )
            == 1
        )
        assert (
            store.scalar(
                "SELECT COUNT(*) FROM generations_fts WHERE generations_fts MATCH 'plainsong'"
            )
            == 1
        )
        assert store.scalar("SELECT judged FROM judgment_totals WHERE judge = 'x'") == 1
        _same({t: r for t, r in _totals(store.conn).items() if t != "threshold_counts"},
              _recount(store))  # fmt: skip


def test_nesting_a_marker_is_refused_and_leaves_no_marker(tmp_path: Path) -> None:
    with Store(tmp_path / "t.db") as store:
        with (
            pytest.raises(sqlite3.IntegrityError),
            bulk_inserts(store, "cases"),
            bulk_inserts(store, "cases"),
        ):
            pass
        assert store.scalar("SELECT COUNT(*) FROM bulk_writing") == 0


def test_the_schema_holds_the_triggers_the_definitions_give(tmp_path: Path) -> None:
    with Store(tmp_path / "t.db") as store:
        present = dict(
            store.conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
        )
    for name, sql in derived_trigger_sql().items():
        assert present[name] == sql
        assert ("WHEN NOT EXISTS (SELECT 1 FROM bulk_writing" in sql) == name.endswith("_insert")


def test_evidence_without_a_threshold_is_counted_by_neither_path(tmp_path: Path) -> None:
    """Scores whose evidence names no threshold add no threshold count."""
    _imported(tmp_path)
    with Store(tmp_path / "audit.db") as store:
        save_judgments(store, JUDGE, [(1, [Score("lcs_tokens", 3.0)])])
        evidence = store.scalar("SELECT evidence FROM judgments WHERE generation_id = 1")
        assert json.loads(evidence).get("threshold") is None
        assert store.scalar("SELECT COUNT(*) FROM threshold_counts") == 0
        assert store.scalar("SELECT valued FROM judgment_totals WHERE metric = 'lcs_tokens'") == 1


def test_verify_finds_a_marker_left_committed(tmp_path: Path) -> None:
    with Store(tmp_path / "t.db") as store:
        assert audit(store) == []
        store.conn.execute("INSERT INTO bulk_writing (tbl) VALUES ('cases')")
        assert [f.check for f in audit(store)] == ["bulk marker left"]


@pytest.mark.parametrize("defer", [False, True])
@pytest.mark.parametrize("table", ["cases", "generations", "judgments"])
def test_a_chunk_s_statements_read_only_the_chunk(tmp_path: Path, table: str, defer: bool) -> None:
    """Each reads its table from the chunk's first id on (a range of the rowid), never
    the whole table, or seeks its largest id: per chunk, the cost of the chunk."""
    _imported(tmp_path)
    with Store(tmp_path / "audit.db") as store:
        store.conn.execute("ANALYZE")  # the planner's statistics of a filled database
        for statement in chunk_sql(table, defer):
            plan = [r[3] for r in store.conn.execute(f"EXPLAIN QUERY PLAN {statement}", (0,))]
            assert not [step for step in plan if step.startswith("SCAN")], (statement, plan)
            reads = [step for step in plan if step.split()[:2] == ["SEARCH", table]]
            ranged = [step for step in plan if "INTEGER PRIMARY KEY (rowid>?" in step]
            assert ranged or reads == [f"SEARCH {table}"], plan  # a range, or MAX(id)

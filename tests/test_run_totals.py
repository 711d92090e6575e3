"""The totals the triggers keep (db.migrations.migrate_run_totals) against a recount of
the rows, the report's figures from them against the figures counted from judgment
rows, and the histogram bins against numpy's."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from copyaudit.judges.metric_facts import fraction_metrics
from copyaudit.reports.scores import (
    FRACTION_EDGES,
    histogram,
    scores_from_rows,
    scores_from_store,
    value_bin,
)
from db import Store, migrations
from db.case_file import run_judges
from db.queries import metric_thresholds, run_overview, suites_summary
from db.run_totals import generation_counts, metric_values, thresholds

STAMP = "2024-01-01T00:00:00"
# values on and beside every bin edge, outside [0, 1], and counts with ties
EDGE_VALUES = [
    float(v)
    for edge in FRACTION_EDGES
    for v in (np.nextafter(edge, -1.0), edge, np.nextafter(edge, 2.0))
]


def _fill(store: Store, seed: int = 0, runs: int = 2, n: int = 300) -> None:
    """Two suites' cases over a few works, `runs` runs over templates 1-3 with some
    failed generations, and judgments of a fraction metric (flagged at two thresholds,
    some without a value), a count metric and a rating with unparseable answers."""
    rng = random.Random(seed)
    conn = store.conn
    with store.transaction():
        conn.executemany(
            "INSERT INTO works (key, title, membership) VALUES (?, ?, 'unknown')",
            [(f"w{w}", f"Work {w}") for w in range(5)],
        )
        for s in range(2):
            conn.execute(
                "INSERT INTO suites (name, kind, created_at) VALUES (?, 'literal', ?)",
                (f"suite{s}", STAMP),
            )
        conn.executemany(
            "INSERT INTO cases (suite_id, case_id, work_id, payload, content_hash, created_at) "
            "VALUES (?, ?, ?, '{}', 'h', ?)",
            [(1 + i % 2, f"c{i}", 1 + rng.randrange(5), STAMP) for i in range(n)],
        )
        conn.execute(
            "INSERT INTO judge_configs (hash, name, version, config) VALUES ('h', 'j', '1', '{}')"
        )
        for r in range(runs):
            conn.execute(
                "INSERT INTO runs (name, suite_id, backend, templates, status, created_at) "
                "VALUES (?, 1, 'imported', '[]', 'done', ?)",
                (f"run{r}", STAMP),
            )
            for case_pk in range(1, n + 1, 2):
                for template in (1, 2, 3):
                    error = "boom" if rng.random() < 0.05 else None
                    gid = conn.execute(
                        "INSERT INTO generations (run_id, case_pk, template, output, source, "
                        "error, created_at) VALUES (?, ?, ?, 'out', 'imported', ?, ?)",
                        (r + 1, case_pk, template, error, STAMP),
                    ).lastrowid
                    _judge(conn, gid, rng)


def _judge(conn, gid: int, rng: random.Random) -> None:
    value = rng.choice([None, rng.random(), rng.choice(EDGE_VALUES), -0.2, 1.5])
    threshold = rng.choice([0.5, 0.8])
    flagged = None if value is None else int(value >= threshold)
    refused = rng.random() < 0.3
    rows = [
        ("j", "h", "rougeL", value, flagged, json.dumps({"threshold": threshold})),
        ("j", "h", "lcs_tokens", float(rng.randrange(60)), None, "not json"),
        ("j", "h", "fluency", rng.choice([None, 1.0, 2.0, 3.5, 5.0]), None, None),
        ("k", None, "refusal", float(refused), int(refused), "[]"),  # no configuration
    ]
    conn.executemany(
        "INSERT INTO judgments (generation_id, judge, judge_hash, metric, value, flagged, "
        f"evidence, created_at) VALUES ({gid}, ?, ?, ?, ?, ?, ?, '{STAMP}')",
        rows,
    )


def _recount(store: Store) -> dict[str, list[tuple]]:
    """The totals counted afresh from the rows (as the migration fills them)."""
    judged = "FROM judgments j JOIN generations g ON g.id = j.generation_id"
    return {
        "generation_totals": store.conn.execute(
            "SELECT run_id, template, COUNT(*), COUNT(error) FROM generations "
            "GROUP BY run_id, template ORDER BY 1, 2"
        ).fetchall(),
        "suite_work_totals": store.conn.execute(
            "SELECT suite_id, work_id, COUNT(*) FROM cases GROUP BY 1, 2 ORDER BY 1, 2"
        ).fetchall(),
        "judgment_totals": store.conn.execute(
            "SELECT g.run_id, j.metric, g.template, j.judge, COALESCE(j.judge_hash, ''), "
            "COUNT(*), COUNT(j.value), TOTAL(j.value), COUNT(j.flagged), "
            f"COALESCE(SUM(j.flagged), 0) {judged} GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5"
        ).fetchall(),
        "value_counts": store.conn.execute(
            f"SELECT g.run_id, j.metric, {migrations.value_bin_sql('j')} AS bin, COUNT(*) "
            f"{judged} WHERE j.value IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
        ).fetchall(),
    }


def _kept(store: Store) -> dict[str, list[tuple]]:
    order = {"generation_totals": "1, 2", "suite_work_totals": "1, 2"}
    order["judgment_totals"] = "1, 2, 3, 4, 5"
    return {
        table: store.conn.execute(
            f"SELECT * FROM {table} ORDER BY {order.get(table, '1, 2, 3')}"
        ).fetchall()
        for table in ("generation_totals", "suite_work_totals", "judgment_totals", "value_counts")
    }


def _same(kept: dict[str, list[tuple]], recount: dict[str, list[tuple]]) -> None:
    assert kept.keys() == recount.keys()
    for table, rows in recount.items():
        assert len(kept[table]) == len(rows), table
        for mine, want in zip(kept[table], rows, strict=True):
            # sums: equal to rounding (added in insertion order, or taken away again)
            assert [pytest.approx(v, rel=1e-12) if isinstance(v, float) else v for v in want] == [
                *mine
            ], table


@pytest.fixture
def store(tmp_path: Path):
    with Store(tmp_path / "t.db") as opened:
        _fill(opened)
        yield opened


def test_triggers_keep_the_totals_equal_to_a_recount(store: Store) -> None:
    _same(_kept(store), _recount(store))
    assert any(r[3] for r in _kept(store)["generation_totals"])  # some failed generations


def test_totals_follow_rejudging_updates_and_deletes(store: Store) -> None:
    rng = random.Random(5)
    with store.transaction():
        # re-judging (db.runs.save_judgments): delete a generation's judgments, insert anew
        for gid in range(1, 200, 3):
            store.conn.execute("DELETE FROM judgments WHERE generation_id = ?", (gid,))
            _judge(store.conn, gid, rng)
        store.conn.execute("UPDATE judgments SET value = 0.95, flagged = 1 WHERE id % 7 = 0")
        store.conn.execute("UPDATE generations SET error = 'late' WHERE id % 11 = 0")
        store.conn.execute("UPDATE cases SET work_id = 1 WHERE id % 5 = 0")
        store.conn.execute(
            "DELETE FROM judgments WHERE generation_id IN "
            "(SELECT id FROM generations WHERE run_id = 2 AND template = 3)"
        )
        store.conn.execute("DELETE FROM generations WHERE run_id = 2 AND template = 3")
    kept = _kept(store)
    _same(kept, _recount(store))
    assert not [r for r in kept["judgment_totals"] if r[0] == 2 and r[2] == 3]
    assert all(r[3] > 0 for r in kept["generation_totals"])  # no emptied rows left


def test_the_migration_counts_a_database_made_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "old.db"
    before = migrations.MIGRATIONS.index(migrations.migrate_run_totals)
    monkeypatch.setattr(migrations, "SCHEMA_VERSION", before)
    with Store(path) as old:
        assert old.scalar("SELECT COUNT(*) FROM sqlite_master WHERE name = 'value_counts'") == 0
        _fill(old, seed=3)
    monkeypatch.undo()
    with Store(path) as migrated:
        _same(_kept(migrated), _recount(migrated))
        assert thresholds(migrated, 1) == {"rougeL": [0.5, 0.8]}


def test_bins_are_numpy_s_bins(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    values = [*EDGE_VALUES, *rng.random(2000).tolist(), 0.0, 1.0, -1e-12, 1 + 1e-12]
    expected = np.digitize(values, FRACTION_EDGES[1:-1])  # 0-9 in [0, 1]
    for value, want in zip(values, expected, strict=True):
        if 0 <= value <= 1:
            assert value_bin("rougeL", value) == want
            counts, _ = np.histogram([value], bins=FRACTION_EDGES)
            assert int(np.argmax(counts)) == want
        else:
            assert value_bin("rougeL", value) == -1
    with Store(tmp_path / "bins.db") as db:
        sql = migrations.value_bin_sql("v")
        for value in values:
            got = db.conn.execute(
                f"SELECT {sql} FROM (SELECT 'rougeL' AS metric, ? AS value) v", (value,)
            ).fetchone()[0]
            assert got == value_bin("rougeL", value), value


def _old_histogram(metric: str, values: list[float]) -> dict:
    """The report's histogram before the totals (np.histogram of every value)."""
    data = np.asarray(values, dtype=float)
    if metric in fraction_metrics():
        edges = np.linspace(0.0, 1.0, 11)
    else:
        top = int(np.nanmax(data)) if data.size else 0
        edges = np.arange(0, top + 2, dtype=float) - 0.5 if top < 40 else np.linspace(0, top, 21)
    counts, edges = np.histogram(data, bins=edges)
    return {"edges": [round(float(e), 4) for e in edges], "counts": [int(c) for c in counts]}


@pytest.mark.parametrize(
    ("metric", "values"),
    [
        ("rougeL", [*EDGE_VALUES, -0.5, 1.5, 0.0, 1.0]),
        ("lcs_tokens", [0.0, 3.0, 3.0, 7.0, 39.0]),
        ("lcs_tokens", [0.0, 12.0, 40.0, 41.0, 93.0, 93.0, 200.0]),
        ("fluency", [1.0, 2.5, 5.0]),
        ("rougeL", []),
        ("events", []),
    ],
)
def test_histograms_equal_numpy_over_every_value(metric: str, values: list[float]) -> None:
    assert histogram(metric, values) == _old_histogram(metric, values)


def test_report_figures_from_the_totals_equal_those_counted_from_the_rows(store: Store) -> None:
    for run_id in (1, 2):
        rows = [
            dict(r)
            for r in store.conn.execute(
                "SELECT j.metric, j.value, j.flagged, g.template FROM judgments j "
                "JOIN generations g ON g.id = j.generation_id WHERE g.run_id = ? ORDER BY g.id",
                (run_id,),
            )
        ]
        expected, got = scores_from_rows(rows), scores_from_store(store, run_id)
        assert list(got) == list(expected) == ["fluency", "lcs_tokens", "refusal", "rougeL"]
        for metric, want in expected.items():
            mine = got[metric]
            values = [r["value"] for r in rows if r["metric"] == metric and r["value"] is not None]
            assert (
                mine.total.judged == want.total.judged == sum(r["metric"] == metric for r in rows)
            )
            assert mine.total.mean == pytest.approx(float(np.mean(values)), rel=1e-12)
            assert mine.total.rate == want.total.rate
            assert mine.by_template.keys() == want.by_template.keys() == {1, 2, 3}
            for template, tally in want.by_template.items():
                assert mine.by_template[template].mean == pytest.approx(tally.mean, rel=1e-12)
                assert mine.by_template[template].rate == tally.rate
            assert mine.histogram() == want.histogram() == _old_histogram(metric, values)
            assert mine.median() == float(np.median(values))
            assert mine.max() == max(values)
            assert metric_values(store, run_id, metric) == values


def test_overview_suites_and_thresholds_read_the_totals(store: Store) -> None:
    overview = run_overview(store, "run0")
    failed = store.scalar("SELECT COUNT(*) FROM generations WHERE run_id = 1 AND error IS NOT NULL")
    assert (overview["generations"], overview["failed"]) == (450, failed) != (450, 0)
    assert generation_counts(store, 99) == (0, 0)
    suites = {s["name"]: (s["cases"], s["works"]) for s in suites_summary(store)}
    assert suites == {"suite0": (150, 5), "suite1": (150, 5)}
    assert metric_thresholds(store, "run1") == {"rougeL": [0.5, 0.8]}
    assert metric_thresholds(store, "nope") == {}


def test_run_judges_from_the_totals_equal_a_count_of_the_judgments(store: Store) -> None:
    expected = [
        {**dict(r), "config": json.loads(r["config"]) if r["config"] else None}
        for r in store.conn.execute(
            "SELECT j.judge, jc.version, j.judge_hash, jc.config, "
            "GROUP_CONCAT(DISTINCT j.metric) AS metrics, COUNT(*) AS judgments "
            "FROM judgments j JOIN generations g ON g.id = j.generation_id "
            "LEFT JOIN judge_configs jc ON jc.hash = j.judge_hash WHERE g.run_id = 2 "
            "GROUP BY j.judge, j.judge_hash ORDER BY j.judge, j.judge_hash"
        )
    ]
    for row in expected:
        row["metrics"] = sorted(row["metrics"].split(","))
    assert run_judges(store, "run1") == expected
    assert [r["judge_hash"] for r in expected] == ["h", None]
    assert run_judges(store, "nope") == []


def test_the_whole_run_s_count_is_its_kept_total(store: Store) -> None:
    from db.browse import GenerationFilter, MetricKey, count_generations

    whole = GenerationFilter(run_id=1, annotator="me", sort=MetricKey("j", "rougeL"))
    rows = store.scalar("SELECT COUNT(*) FROM generations WHERE run_id = 1")
    assert count_generations(store, whole.with_changes(descending=True)) == rows == 450
    assert count_generations(store, whole.with_changes(template=2)) == 150  # still counted

"""The store's queries of p_z runs (copyaudit.engine.pz_run): which cases are scored,
the generation ids a batch got, and the judgments the reports read."""

from __future__ import annotations

from collections.abc import Sequence

from db.connection import Store

JUDGE_LIKE = "pz\\_%"  # the p_z judges: pz_<scheme>


def generation_ids(
    store: Store, run_id: int, template: int, case_pks: Sequence[int]
) -> dict[int, int]:
    """case_pk -> generation id of the run's rows for those cases."""
    marks = ",".join("?" * len(case_pks))
    rows = store.conn.execute(
        f"SELECT case_pk, id FROM generations WHERE run_id = ? AND template = ? "
        f"AND case_pk IN ({marks})",
        (run_id, template, *case_pks),
    )
    return {int(case_pk): int(gid) for case_pk, gid in rows}


def scored_case_pks(store: Store, run_id: int, judges: Sequence[str]) -> set[int]:
    """The cases whose generation holds a `pz` judgment of every judge in `judges`."""
    marks = ",".join("?" * len(judges))
    rows = store.conn.execute(
        "SELECT g.case_pk FROM generations g JOIN judgments j ON j.generation_id = g.id "
        f"WHERE g.run_id = ? AND j.metric = 'pz' AND j.judge IN ({marks}) "
        "GROUP BY g.case_pk HAVING COUNT(DISTINCT j.judge) = ?",
        (run_id, *judges, len(judges)),
    )
    return {int(r[0]) for r in rows}


def pz_values(store: Store, run_id: int) -> list[tuple[str, str, float | None]]:
    """(judge, metric, value) of every p_z judgment of the run."""
    rows = store.conn.execute(
        "SELECT j.judge, j.metric, j.value FROM judgments j "
        "JOIN generations g ON g.id = j.generation_id "
        "WHERE g.run_id = ? AND j.judge LIKE ? ESCAPE '\\'",
        (run_id, JUDGE_LIKE),
    )
    return [(str(a), str(b), None if c is None else float(c)) for a, b, c in rows]


def pz_judge_configs(store: Store, run_id: int) -> dict[str, str]:
    """judge -> its stored configuration (JSON) for the run's p_z judges."""
    rows = store.conn.execute(
        "SELECT DISTINCT c.name, c.config FROM judge_configs c JOIN judgments j "
        "ON j.judge_hash = c.hash JOIN generations g ON g.id = j.generation_id "
        "WHERE g.run_id = ? AND c.name LIKE ? ESCAPE '\\'",
        (run_id, JUDGE_LIKE),
    )
    return {str(name): str(config) for name, config in rows}


def run_ids(store: Store, names: Sequence[str]) -> list[tuple[str, int, str]]:
    """(name, id, model) of the named runs, in the order given."""
    out = []
    for name in names:
        row = store.conn.execute("SELECT id, model FROM runs WHERE name = ?", (name,)).fetchone()
        if row is not None:
            out.append((name, int(row[0]), str(row[1])))
    return out


def window_positions(store: Store, run_id: int) -> list[tuple[int, str, int, int, str, float]]:
    """(generation id, work title, window's first character, work's characters, judge,
    p_z) of every p_z judgment of the run on a window cut by `import extraction --stride`,
    in the order of the work and the window's place in it."""
    rows = store.conn.execute(
        "SELECT g.id, w.title, json_extract(c.payload, '$.window.chars[0]') AS start, "
        "json_extract(c.payload, '$.window.work_chars'), j.judge, j.value "
        "FROM judgments j JOIN generations g ON g.id = j.generation_id "
        "JOIN cases c ON c.id = g.case_pk JOIN works w ON w.id = c.work_id "
        "WHERE g.run_id = ? AND j.metric = 'pz' AND j.judge LIKE ? ESCAPE '\\' "
        "AND json_extract(c.payload, '$.window.work_chars') IS NOT NULL "
        "ORDER BY w.title, start, g.id",
        (run_id, JUDGE_LIKE),
    )
    return [(int(g), str(t), int(s), int(n), str(j), float(v)) for g, t, s, n, j, v in rows]


def holds_pz(store: Store, run_id: int) -> bool:
    """Whether the run holds p_z judgments (a `copyaudit pz` run)."""
    row = store.conn.execute(
        "SELECT 1 FROM judgment_totals WHERE run_id = ? AND judge LIKE ? ESCAPE '\\' LIMIT 1",
        (run_id, JUDGE_LIKE),
    ).fetchone()
    return row is not None


def pz_runs(store: Store) -> list[str]:
    """The names of the runs that hold p_z judgments, oldest first."""
    rows = store.conn.execute(
        "SELECT r.name FROM runs r WHERE EXISTS (SELECT 1 FROM judgment_totals t "
        "WHERE t.run_id = r.id AND t.judge LIKE ? ESCAPE '\\') ORDER BY r.id",
        (JUDGE_LIKE,),
    )
    return [str(r[0]) for r in rows]

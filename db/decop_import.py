"""DE-COP results made elsewhere (the authors' published workbooks) stored as a run:
the run and its passage scores in one transaction."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from copyaudit.errors import UserError
from copyaudit.rows import RowProblem
from db.cases import record_skipped
from db.connection import Store
from db.decop import DecopScoreRow, add_decop_scores
from db.runs import RunSpec, create_or_resume_run


def decop_suites_with_work(store: Store, work_id: str) -> list[str]:
    """The DE-COP suites holding passages of the work with this raw dataset ID."""
    return [
        r[0]
        for r in store.conn.execute(
            "SELECT DISTINCT s.name FROM cases c JOIN suites s ON s.id = c.suite_id "
            "WHERE s.kind = 'decop' AND json_extract(c.payload, '$.id') = ? ORDER BY s.name",
            (work_id,),
        )
    ]


def save_imported_scores(
    store: Store,
    spec: RunSpec,
    rows: Sequence[DecopScoreRow],
    replace: bool = False,
    skipped: Mapping[str, Sequence[RowProblem]] | None = None,
) -> str:
    """Store results imported from elsewhere as run `spec.name` (backend "imported",
    status "imported"), all or nothing. The same configuration (same
    files, model, suite) again changes nothing ("unchanged"); another one for an
    existing run is refused unless `replace`, which swaps the run's scores and
    configuration ("replaced"; the same files too: a re-read); else "added". `skipped`
    (source -> rows left out) is recorded with the run, as an import of generations
    records its skipped rows."""
    with store.transaction(durable=True):
        row = store.conn.execute(
            "SELECT r.id, r.backend, r.model, r.config_hash, s.name AS suite, r.config "
            "FROM runs r JOIN suites s ON s.id = r.suite_id WHERE r.name = ?",
            (spec.name,),
        ).fetchone()
        if row is None:
            run_id = create_or_resume_run(store, spec, status="imported")
            _store(store, run_id, rows, skipped or {})
            return "added"
        if row["backend"] != "imported" or row["suite"] != spec.suite:
            raise UserError(
                f"run '{spec.name}' is not an imported run of suite '{spec.suite}'; "
                "choose another --run"
            )
        if row["config_hash"] == spec.config_hash() and not replace:
            return "unchanged"
        if not replace:
            before = json.loads(row["config"] or "{}").get("provenance", "other results")
            raise UserError(
                f"run '{spec.name}' holds {row['model']} results {before}; these are "
                "different results (use --replace to replace them)"
            )
        run_id = int(row["id"])
        store.conn.execute("DELETE FROM decop_scores WHERE run_id = ?", (run_id,))
        store.conn.execute("DELETE FROM decop_calibrations WHERE run_id = ?", (run_id,))
        store.conn.execute(
            "UPDATE runs SET model = ?, decoding = ?, config = ?, config_hash = ?, "
            "code_version = ? WHERE id = ?",
            (
                spec.model,
                json.dumps(spec.decoding, sort_keys=True),
                json.dumps(spec.config, sort_keys=True, default=str),
                spec.config_hash(),
                spec.code_version,
                run_id,
            ),
        )
        _store(store, run_id, rows, skipped or {})
        return "replaced"


def _store(
    store: Store,
    run_id: int,
    rows: Sequence[DecopScoreRow],
    skipped: Mapping[str, Sequence[RowProblem]],
) -> None:
    sid = int(store.scalar("SELECT suite_id FROM runs WHERE id = ?", (run_id,)))
    store.conn.execute("DELETE FROM skipped_rows WHERE run_id = ?", (run_id,))
    for source, problems in skipped.items():
        record_skipped(store, sid, run_id, source, problems)
    add_decop_scores(store, run_id, rows)

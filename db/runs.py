"""Writing runs, generations and judgments."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from copyaudit.errors import InputError, UserError
from copyaudit.generation_keys import check_run_name
from copyaudit.hashing import stable_hash
from copyaudit.rows import InvalidRows, RowProblem
from copyaudit.types import Score
from db.bulk import bulk_inserts
from db.cases import chunked, record_skipped
from db.clock import now
from db.connection import Store
from db.generation_keys import renamed_to
from db.inputs import LocatedGeneration

RUN_STATUSES = ("pending", "running", "done", "failed", "cancelled", "imported")


@dataclass(frozen=True)
class RunSpec:
    """Everything that defines a run; its hash decides whether a run can resume."""

    name: str
    suite: str
    backend: str
    model: str
    model_revision: str | None = None
    templates: tuple[int, ...] = (1,)
    decoding: dict[str, Any] = field(default_factory=dict)
    mitigation: str = "none"
    config: dict[str, Any] = field(default_factory=dict)
    code_version: str | None = None

    def config_hash(self) -> str:
        return stable_hash(
            {
                "suite": self.suite,
                "backend": self.backend,
                "model": self.model,
                "model_revision": self.model_revision,
                "templates": list(self.templates),
                "decoding": self.decoding,
                "mitigation": self.mitigation,
                "config": self.config,
            }
        )


def suite_id(store: Store, name: str) -> int:
    row = store.conn.execute("SELECT id FROM suites WHERE name = ?", (name,)).fetchone()
    if row is None:
        raise UserError(f"no suite named '{name}' (see `copyaudit suites`)")
    return int(row["id"])


def suite_kind(store: Store, suite_id: int) -> str | None:
    """What the suite holds (types.TASK_KINDS); None for no such suite."""
    return store.scalar("SELECT kind FROM suites WHERE id = ?", (suite_id,))


def existing_run_config(store: Store, name: str) -> dict[str, Any] | None:
    """The stored configuration of run `name`; None when there is no such run (yet)."""
    config = store.scalar("SELECT config FROM runs WHERE name = ?", (name,))
    return None if config is None else json.loads(config)


def run_row(store: Store, name: str) -> sqlite3.Row:
    row = store.conn.execute("SELECT * FROM runs WHERE name = ?", (name,)).fetchone()
    if row is None:
        new = renamed_to(store, name)
        renamed = f"; it was renamed '{new}' (run names cannot contain '/')" if new else ""
        raise UserError(f"no run named '{name}' (see `copyaudit runs`){renamed}")
    return row


def create_or_resume_run(store: Store, spec: RunSpec, *, status: str = "pending") -> int:
    """Return the run's id, creating it if new. An existing run with the same name
    resumes only if its configuration hash is the same. A name with '/' is refused
    (copyaudit.generation_keys)."""
    check_run_name(spec.name)
    with store.transaction():
        sid = suite_id(store, spec.suite)
        row = store.conn.execute(
            "SELECT id, config_hash, suite_id FROM runs WHERE name = ?", (spec.name,)
        ).fetchone()
        if row is not None:
            if row["config_hash"] != spec.config_hash() or row["suite_id"] != sid:
                raise UserError(
                    f"run '{spec.name}' already exists with a different configuration; "
                    "choose another --name"
                )
            return int(row["id"])
        cur = store.conn.execute(
            "INSERT INTO runs (name, suite_id, backend, model, model_revision, templates, "
            "decoding, mitigation, config, config_hash, code_version, status, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                spec.name,
                sid,
                spec.backend,
                spec.model,
                spec.model_revision,
                json.dumps(list(spec.templates)),
                json.dumps(spec.decoding, sort_keys=True),
                spec.mitigation,
                json.dumps(spec.config, sort_keys=True, default=str),
                spec.config_hash(),
                spec.code_version,
                status,
                now(),
            ),
        )
        assert cur.lastrowid is not None  # an INSERT sets it
        return cur.lastrowid


def set_run_status(store: Store, run_id: int, status: str, error: str | None = None) -> None:
    if status not in RUN_STATUSES:
        raise ValueError(status)
    stamp = now()
    with store.transaction():
        if status == "running":
            store.conn.execute(
                "UPDATE runs SET status = ?, error = NULL, "
                "started_at = COALESCE(started_at, ?), finished_at = NULL WHERE id = ?",
                (status, stamp, run_id),
            )
        else:
            finished = stamp if status in ("done", "failed", "cancelled") else None
            store.conn.execute(
                "UPDATE runs SET status = ?, error = ?, finished_at = ? WHERE id = ?",
                (status, error, finished, run_id),
            )


def record_failure(store: Store, name: str, error: str) -> bool:
    """Mark the run called `name` failed with `error` if it exists and is unfinished (a
    model that fails to load before a new run is created leaves nothing to mark; a done
    or imported run keeps its status). True if marked."""
    row = store.conn.execute(
        "SELECT id FROM runs WHERE name = ? AND status IN ('pending', 'running', 'cancelled', "
        "'failed')",
        (name,),
    ).fetchone()
    if row is None:
        return False
    set_run_status(store, int(row["id"]), "failed", error)
    return True


@contextmanager
def failure_recorded(store: Store, name: str) -> Iterator[None]:
    """Store any exception raised inside as the error of run `name` (if that run exists
    already), then let it propagate."""
    try:
        yield
    except BaseException as exc:
        record_failure(store, name, f"{type(exc).__name__}: {exc}")
        raise


def import_generations(
    store: Store,
    *,
    run: str,
    suite: str,
    model: str | Callable[[], str | None] | None,
    rows: Iterable[LocatedGeneration],
    source: str,
    replace: bool = False,
    skipped: Sequence[RowProblem] = (),
    skip_invalid: bool = False,
    decoding: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
) -> tuple[int, int, int]:
    """Import generations made elsewhere into run `run` (created if new, with `decoding`
    and `config` as the producer recorded them: a framework's log).
    Returns (added, unchanged, replaced). All or nothing: `rows` may be a stream
    (Loaded.stream), written CHUNK_ROWS at a time inside the one transaction (the
    search index left to a catch-up: db.search_index). A row
    naming no case of the suite joins `skipped` (the file's unusable rows, read once
    `rows` is exhausted): unless `skip_invalid`, any such row stops the import
    (InvalidRows, every one listed); with it, they are recorded as the run's skipped
    rows. `model`: who wrote the outputs (None: the run's, or 'imported'), or a
    callable giving it once `rows` were read (the rows name it)."""
    added = unchanged = replaced = usable = 0
    unknown: list[RowProblem] = []
    conflict: InputError | None = None  # raised after the rows' own problems
    with (
        store.transaction(durable=True),
        bulk_inserts(store, "generations", defer_search_index=True) as bulk,
    ):
        known = model if isinstance(model, str) or model is None else None
        row = store.conn.execute(
            "SELECT r.id, r.backend, r.model, s.name AS suite FROM runs r "
            "JOIN suites s ON s.id = r.suite_id WHERE r.name = ?",
            (run,),
        ).fetchone()
        new_run = row is None
        if row is None:
            run_id = create_or_resume_run(
                store, _imported_spec(run, suite, known, decoding, config), status="imported"
            )
        elif row["backend"] != "imported" or row["suite"] != suite:
            raise UserError(f"run '{run}' is not an imported run of suite '{suite}'")
        else:
            _check_model(run, row["model"], known)
            run_id = int(row["id"])
        sid = suite_id(store, suite)
        stamp = now()
        for chunk in chunked(rows):
            case_pks = _case_pks(store, sid, [g.case_id for g in chunk])
            existing = _existing_generations(store, run_id, case_pks.values())
            inserts = []
            for g in chunk:
                if g.case_id not in case_pks:
                    unknown.append(
                        RowProblem(g.line, "case_id", f"no case '{g.case_id}' in suite '{suite}'")
                    )
                    continue
                usable += 1
                key = (case_pks[g.case_id], g.template)
                if key not in existing:
                    inserts.append((run_id, key[0], g.template, "", g.output, "imported", stamp))
                    added += 1
                elif existing[key][1] == g.output:
                    unchanged += 1
                elif replace:
                    store.conn.execute(
                        "UPDATE generations SET output = ? WHERE id = ?",
                        (g.output, existing[key][0]),
                    )
                    store.conn.execute(
                        "DELETE FROM judgments WHERE generation_id = ?", (existing[key][0],)
                    )
                    replaced += 1
                elif conflict is None:
                    conflict = InputError(
                        source,
                        g.line,
                        "output",
                        f"generation {run}/{g.case_id}/{g.template} already exists with a "
                        "different output (use --replace to overwrite it)",
                    )
            bulk.executemany(
                "INSERT INTO generations (run_id, case_pk, template, prompt, output, source, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                inserts,
            )
        problems = sorted([*skipped, *unknown], key=lambda p: p.line)
        if problems and (not skip_invalid or not usable):
            raise InvalidRows(source, problems, usable)
        if conflict is not None:
            raise conflict
        if known is None and callable(model):
            named = model()
            if new_run:
                _set_imported_model(store, run_id, _imported_spec(run, suite, named))
            else:
                _check_model(run, row["model"], named)
        record_skipped(store, sid, run_id, source, problems)
    return added, unchanged, replaced


def _imported_spec(
    run: str,
    suite: str,
    model: str | None,
    decoding: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
) -> RunSpec:
    return RunSpec(
        name=run,
        suite=suite,
        backend="imported",
        model=model or "imported",
        templates=(),
        decoding=decoding or {},
        config=config or {},
    )


def _check_model(run: str, stored: str, model: str | None) -> None:
    if model is not None and model != stored:
        raise UserError(f"run '{run}' holds generations of model '{stored}', not '{model}'")


def _set_imported_model(store: Store, run_id: int, spec: RunSpec) -> None:
    """A new imported run's model, once its rows named it."""
    store.conn.execute(
        "UPDATE runs SET model = ?, config_hash = ? WHERE id = ?",
        (spec.model, spec.config_hash(), run_id),
    )


def _case_pks(store: Store, suite: int, case_ids: list[str]) -> dict[str, int]:
    """case_id -> row id, for those of `case_ids` in the suite."""
    rows = store.conn.execute(
        "SELECT id, case_id FROM cases WHERE suite_id = ? "
        "AND case_id IN (SELECT value FROM json_each(?))",
        (suite, json.dumps(case_ids)),
    )
    return {r["case_id"]: r["id"] for r in rows}


def _existing_generations(
    store: Store, run_id: int, case_pks: Iterable[int]
) -> dict[tuple[int, int], tuple[int, str]]:
    """(case_pk, template) -> (row id, output) of the run's generations of `case_pks`."""
    rows = store.conn.execute(
        "SELECT id, case_pk, template, output FROM generations WHERE run_id = ? "
        "AND case_pk IN (SELECT value FROM json_each(?))",
        (run_id, json.dumps(sorted(set(case_pks)))),
    )
    return {(r["case_pk"], r["template"]): (r["id"], r["output"]) for r in rows}


@dataclass(frozen=True)
class NewGeneration:
    case_pk: int
    template: int
    prompt: str
    output: str
    tokens: int | None = None
    seconds: float | None = None
    error: str | None = None


def add_generations(store: Store, run_id: int, rows: Iterable[NewGeneration]) -> int:
    """Insert one batch of generations in one transaction. An existing generation is
    left alone (so a resumed run never duplicates) unless it failed (stored with an
    error): a retry replaces it in place, keeping its id."""
    stamp = now()
    with store.transaction():
        cur = store.conn.executemany(
            "INSERT INTO generations (run_id, case_pk, template, prompt, output, "
            "tokens, seconds, source, error, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, 'generated', ?, ?) "
            "ON CONFLICT (run_id, case_pk, template) DO UPDATE SET prompt = excluded.prompt, "
            "output = excluded.output, tokens = excluded.tokens, seconds = excluded.seconds, "
            "error = excluded.error, created_at = excluded.created_at "
            "WHERE generations.error IS NOT NULL",
            [
                (
                    run_id,
                    r.case_pk,
                    r.template,
                    r.prompt,
                    r.output,
                    r.tokens,
                    r.seconds,
                    r.error,
                    stamp,
                )
                for r in rows
            ],
        )
        return cur.rowcount


@dataclass(frozen=True)
class JudgeIdentity:
    name: str
    version: str
    config: dict[str, Any]
    hash: str


def save_judgments(
    store: Store, judge: JudgeIdentity, results: Iterable[tuple[int, Sequence[Score]]]
) -> int:
    """Store (replace) the judge's scores for each generation id, in one transaction:
    the generations' earlier scores by this judge deleted first, then the new ones
    inserted at once (their totals added set-wise: db.bulk). A generation named twice
    keeps its last scores, as if saved one call after the other."""
    stamp = now()
    results = list(dict(results).items())
    with store.transaction(), bulk_inserts(store, "judgments") as bulk:
        store.conn.execute(
            "INSERT OR IGNORE INTO judge_configs (hash, name, version, config) VALUES (?,?,?,?)",
            (
                judge.hash,
                judge.name,
                judge.version,
                json.dumps(judge.config, sort_keys=True, default=str),
            ),
        )
        store.conn.executemany(
            "DELETE FROM judgments WHERE generation_id = ? AND judge = ?",
            [(generation_id, judge.name) for generation_id, _ in results],
        )
        rows = [
            (
                generation_id,
                judge.name,
                judge.hash,
                s.metric,
                s.value,
                None if s.flagged is None else int(s.flagged),
                json.dumps(s.evidence_json(), ensure_ascii=False),
                stamp,
            )
            for generation_id, scores in results
            for s in scores
        ]
        bulk.executemany(
            "INSERT INTO judgments (generation_id, judge, judge_hash, metric, value, "
            "flagged, evidence, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    return len(rows)


def stored_configuration(store: Store, name: str) -> dict[str, Any] | None:
    """The stored run called `name` as copyaudit.runs.launch_plan compares it (suite, kind,
    backend, model, templates, mitigation, config) with what it holds already
    (generations; DE-COP passages scored); None if no such run."""
    row = store.conn.execute(
        "SELECT s.name AS suite, s.kind, r.backend, r.model, r.templates, r.mitigation, "
        "r.config, (SELECT COUNT(*) FROM generations g WHERE g.run_id = r.id) AS generations, "
        "(SELECT COUNT(*) FROM decop_scores d WHERE d.run_id = r.id) AS passages_scored "
        "FROM runs r JOIN suites s ON s.id = r.suite_id WHERE r.name = ?",
        (name,),
    ).fetchone()
    if row is None:
        return None
    out = dict(row)
    out["templates"] = json.loads(row["templates"] or "[]")
    out["config"] = json.loads(row["config"] or "{}")
    return out

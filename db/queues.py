"""Work queues: fixed sets of generations to label, drawn by stratified sampling.

As CopyBench chose its human-verification cases, generations of a run are grouped
by a judge metric's value (default: the events count) and up to `per_value`
generations are drawn from each group, so every level of overlap is represented.
`bin_width` groups a continuous metric (e.g. rougeL) into bins [k*w, (k+1)*w).
The draw uses `random.Random(seed)` over generations sorted by key, and the chosen
generations are stored with the queue: the queue never changes when the run is
re-judged, and the same seed on the same judgments draws the same sample.
The queue is shown in a shuffled order (the same seed) so that annotators do not
see the judge's scores in the order of the items.

That is the 'per-value' design: it over-represents rare values on purpose, so its
labels say how good a judge is but not what share of the run people would flag. The
'random' and 'stratified' designs (db.queue_designs) draw with known inclusion
probabilities, stored per queued generation, for the people-level estimates
(copyaudit.verification.estimates). A random queue stores no metric or judge ('') and
per_value 0; its stratum is 0.

Progress of an annotator on a queue: a generation counts as `labelled` when they
have at least one current label on it, and as `complete` when they have a current
label (yes, no or unsure) on every item a judge gave a verdict on for that
generation (every event, character, literal and refusal verdict, except items the
judge leaves out on purpose).
"""

from __future__ import annotations

import math
import random
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from copyaudit.errors import UserError
from db.clock import now
from db.columns import GENERATION_KEY_SQL
from db.connection import Store
from db.labels import current_labels, judge_verdicts, label_progress
from db.queue_designs import DESIGNS, NO_VERDICT, Drawn, random_sample, stratified_design
from db.runs import run_row


def stratum_of(value: float, bin_width: float | None) -> float:
    if bin_width is None:
        return float(value)
    return math.floor(value / bin_width + 1e-9) * bin_width


def stratified_sample(
    values: Mapping[str, float], per_value: int, seed: int, bin_width: float | None = None
) -> list[tuple[str, float]]:
    """Up to `per_value` keys from each stratum of `values` (key -> metric value).

    Returns (key, stratum) in a shuffled presentation order; deterministic for a seed.
    """
    if per_value < 1:
        raise UserError("--per-value must be at least 1")
    if bin_width is not None and bin_width <= 0:
        raise UserError("--bin-width must be positive")
    strata: dict[float, list[str]] = defaultdict(list)
    for key in sorted(values):
        strata[stratum_of(values[key], bin_width)].append(key)
    rng = random.Random(seed)
    chosen: list[tuple[str, float]] = []
    for stratum in sorted(strata):
        members = strata[stratum]
        chosen.extend((key, stratum) for key in rng.sample(members, min(per_value, len(members))))
    rng.shuffle(chosen)
    return chosen


@dataclass(frozen=True)
class QueueSummary:
    name: str
    run: str
    metric: str
    judge: str
    items: int
    strata: dict[float, int]  # stratum -> generations drawn
    unscored: int  # generations of the run without a value for the metric
    design: str = "per-value"
    size: int | None = None  # asked for (random, stratified)


def _metric_rows(
    store: Store, run_id: int, metric: str, judge: str | None
) -> tuple[str, list[Any]]:
    """The judge of `metric` (the only one, or `judge`) and every generation of the run
    with its id, key and that judge's value and flag (None where it has none)."""
    judges = [
        r["judge"]
        for r in store.conn.execute(
            "SELECT DISTINCT j.judge FROM judgments j JOIN generations g ON g.id = j.generation_id "
            "WHERE g.run_id = ? AND j.metric = ? ORDER BY j.judge",
            (run_id, metric),
        )
    ]
    if judge is None:
        if not judges:
            raise UserError(f"no judgments of metric '{metric}' in this run (judge it first)")
        if len(judges) > 1:
            raise UserError(f"metric '{metric}' comes from several judges; choose one with --judge")
        judge = judges[0]
    elif judge not in judges:
        raise UserError(f"judge '{judge}' has no '{metric}' judgments in this run")
    rows = store.conn.execute(
        f"SELECT g.id, {GENERATION_KEY_SQL} AS key, j.value, j.flagged FROM generations g "
        "JOIN runs r ON r.id = g.run_id JOIN cases c ON c.id = g.case_pk "
        "LEFT JOIN judgments j ON j.generation_id = g.id AND j.metric = ? AND j.judge = ? "
        "WHERE g.run_id = ?",
        (metric, judge, run_id),
    ).fetchall()
    return judge, rows


def _run_generation_ids(store: Store, run_id: int) -> dict[str, int]:
    return {
        r["key"]: int(r["id"])
        for r in store.conn.execute(
            f"SELECT g.id, {GENERATION_KEY_SQL} AS key FROM generations g "
            "JOIN runs r ON r.id = g.run_id JOIN cases c ON c.id = g.case_pk WHERE g.run_id = ?",
            (run_id,),
        )
    }


def _stratum(row: sqlite3.Row, bin_width: float | None) -> float:
    """A generation's stratum in the stratified design: its flag (1 / 0), its value's bin
    with a bin width, or NO_VERDICT (db.queue_designs)."""
    if bin_width is not None:
        return NO_VERDICT if row["value"] is None else stratum_of(row["value"], bin_width)
    return NO_VERDICT if row["flagged"] is None else float(row["flagged"])


def _draw(
    store: Store,
    run_id: int,
    design: str,
    metric: str,
    judge: str | None,
    per_value: int,
    seed: int,
    bin_width: float | None,
    size: int | None,
) -> tuple[str, str, list[Drawn], dict[str, int], int]:
    """(metric, judge, the sample, generation id per key, generations without a value)."""
    if design == "random":
        ids = _run_generation_ids(store, run_id)
        return "", "", random_sample(list(ids), size or 0, seed), ids, 0
    judge, rows = _metric_rows(store, run_id, metric, judge)
    ids = {r["key"]: int(r["id"]) for r in rows}
    unscored = sum(r["value"] is None for r in rows)
    if design == "stratified":
        strata = {r["key"]: _stratum(r, bin_width) for r in rows}
        return metric, judge, stratified_design(strata, size or 0, seed), ids, unscored
    values = {r["key"]: float(r["value"]) for r in rows if r["value"] is not None}
    sample = stratified_sample(values, per_value, seed, bin_width)
    return metric, judge, [Drawn(k, h, None) for k, h in sample], ids, unscored


def create_queue(
    store: Store,
    name: str,
    *,
    run: str,
    metric: str = "events",
    judge: str | None = None,
    per_value: int = 10,
    seed: int = 0,
    bin_width: float | None = None,
    design: str = "per-value",
    size: int | None = None,
) -> QueueSummary:
    """Draw and store a queue (one transaction); the name must be new."""
    if not name.strip():
        raise UserError("a queue name is required")
    if design not in DESIGNS:
        raise UserError(f"unknown design '{design}' (one of: {', '.join(DESIGNS)})")
    with store.transaction():
        if store.scalar("SELECT 1 FROM queues WHERE name = ?", (name,)):
            raise UserError(f"a queue named '{name}' already exists")
        run_id = int(run_row(store, run)["id"])
        metric, judge, sample, ids, unscored = _draw(
            store, run_id, design, metric, judge, per_value, seed, bin_width, size
        )
        if not sample:
            what = "generations" if design == "random" else f"a '{metric}' value"
            raise UserError(f"run '{run}' has no {what} to sample")
        queue_id = store.conn.execute(
            "INSERT INTO queues (name, run_id, metric, judge, per_value, seed, bin_width, "
            "created_at, design, size) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                name,
                run_id,
                metric,
                judge,
                per_value if design == "per-value" else 0,
                seed,
                bin_width,
                now(),
                design,
                size,
            ),
        ).lastrowid
        store.conn.executemany(
            "INSERT INTO queue_items (queue_id, generation_id, position, stratum, "
            "inclusion_prob) VALUES (?, ?, ?, ?, ?)",
            [
                (queue_id, ids[d.key], position, d.stratum, d.inclusion_prob)
                for position, d in enumerate(sample)
            ],
        )
    strata: dict[float, int] = defaultdict(int)
    for drawn in sample:
        strata[drawn.stratum] += 1
    return QueueSummary(
        name, run, metric, judge, len(sample), dict(sorted(strata.items())), unscored, design, size
    )


def _queue_id(store: Store, name: str) -> int:
    queue_id = store.scalar("SELECT id FROM queues WHERE name = ?", (name,))
    if queue_id is None:
        raise UserError(f"no queue named '{name}' (see `copyaudit queue list`)")
    return int(queue_id)


def queue_items(store: Store, name: str) -> list[int]:
    """The queue's generation ids in presentation order."""
    return [
        int(r[0])
        for r in store.conn.execute(
            "SELECT generation_id FROM queue_items WHERE queue_id = ? ORDER BY position",
            (_queue_id(store, name),),
        )
    ]


def queue_item_rows(store: Store, name: str) -> list[dict[str, Any]]:
    """Position, generation id and key, stratum and inclusion probability (None for a
    per-value queue) of each queued generation."""
    return [
        dict(r)
        for r in store.conn.execute(
            f"SELECT q.position, q.generation_id, {GENERATION_KEY_SQL} AS generation, "
            "q.stratum, q.inclusion_prob FROM queue_items q "
            "JOIN generations g ON g.id = q.generation_id "
            "JOIN runs r ON r.id = g.run_id JOIN cases c ON c.id = g.case_pk "
            "WHERE q.queue_id = ? ORDER BY q.position",
            (_queue_id(store, name),),
        )
    ]


def queue_progress(store: Store, name: str) -> list[dict[str, Any]]:
    """Per annotator with any label on the queue: labelled, complete and total
    generations (definitions in the module docstring)."""
    ids = queue_items(store, name)
    needed: dict[int, set[tuple[str, int]]] = defaultdict(set)
    for verdict in judge_verdicts(store, generation_ids=ids):
        if not verdict.excluded:
            needed[verdict.generation_id].add((verdict.target, verdict.item_index))
    done: dict[str, dict[int, set[tuple[str, int]]]] = defaultdict(lambda: defaultdict(set))
    for label in current_labels(store, generation_ids=ids):
        if label.stale:
            continue  # made on an earlier version: to be labelled again
        done[label.annotator][label.generation_id].add((label.target, label.item_index))
    return [
        {
            "annotator": annotator,
            "labelled": len(by_generation),
            "complete": sum(
                1 for g, items in by_generation.items() if needed[g] and needed[g] <= items
            ),
            "total": len(ids),
        }
        for annotator, by_generation in sorted(done.items())
    ]


def list_queues(store: Store) -> list[dict[str, Any]]:
    """Every queue with its parameters, size and each annotator's progress."""
    rows = store.conn.execute(
        "SELECT q.name, r.name AS run, q.design, q.size, q.metric, q.judge, q.per_value, "
        "q.seed, q.bin_width, q.created_at, "
        "(SELECT COUNT(*) FROM queue_items i WHERE i.queue_id = q.id) AS items "
        "FROM queues q JOIN runs r ON r.id = q.run_id ORDER BY q.id"
    ).fetchall()
    return [{**dict(r), "progress": queue_progress(store, r["name"])} for r in rows]


_QUEUE_SQL = (
    "SELECT q.id, q.name, r.name AS run, q.design, q.size, q.seed, q.metric, q.judge, "
    "q.per_value, q.bin_width, q.created_at FROM queues q JOIN runs r ON r.id = q.run_id"
)


def _without_id(row: sqlite3.Row) -> dict[str, Any]:
    return {k: v for k, v in dict(row).items() if k != "id"}


def queue_info(store: Store, name: str) -> dict[str, Any]:
    """A queue's parameters: name, run, design, size, seed, metric, judge, per_value,
    bin_width, created_at."""
    row = store.conn.execute(_QUEUE_SQL + " WHERE q.id = ?", (_queue_id(store, name),)).fetchone()
    return _without_id(row)


def design_queues(store: Store, run: str, designs: Iterable[str]) -> list[dict[str, Any]]:
    """The queues of `run` drawn with one of `designs`, newest first, each with its
    parameters (as queue_info) and `items`: generation id -> inclusion probability."""
    wanted = sorted(set(designs))
    marks = ", ".join("?" for _ in wanted)
    rows = store.conn.execute(
        _QUEUE_SQL + f" WHERE r.name = ? AND q.design IN ({marks}) ORDER BY q.id DESC",
        (run, *wanted),
    ).fetchall()
    out = []
    for row in rows:
        items = store.conn.execute(
            "SELECT generation_id, inclusion_prob FROM queue_items WHERE queue_id = ?",
            (row["id"],),
        )
        out.append(
            {
                **_without_id(row),
                "items": {int(i["generation_id"]): i["inclusion_prob"] for i in items},
            }
        )
    return out


def queues_by_recent_work(store: Store, annotator: str) -> list[str]:
    """Every queue's name: those `annotator` labelled in first, the one with their newest
    label event (by its time) first, then the rest, the newest queue first."""
    rows = store.conn.execute(
        "SELECT q.name, (SELECT MAX(l.created_at) FROM labels l JOIN queue_items i "
        "ON i.generation_id = l.generation_id WHERE i.queue_id = q.id AND l.annotator = ?) "
        "AS last FROM queues q ORDER BY last IS NULL, last DESC, q.id DESC",
        (annotator,),
    )
    return [r["name"] for r in rows]


def unfinished_queue(store: Store, annotator: str) -> str | None:
    """The queue to continue labelling: the first of queues_by_recent_work with a
    generation `annotator` has not labelled every asked item of (db.labels.label_progress,
    as the queue's annotation mode counts); None when every queue is done or none exists."""
    for name in queues_by_recent_work(store, annotator):
        progress = label_progress(store, queue_items(store, name), annotator)
        if any(done < total for done, total in progress.values()):
            return name
    return None

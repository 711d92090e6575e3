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

Progress of an annotator on a queue: a generation counts as `labelled` when they
have at least one current label on it, and as `complete` when they have a current
label (yes, no or unsure) on every item a judge gave a verdict on for that
generation (every event, character, literal and refusal verdict, except items the
judge leaves out on purpose).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from copyaudit.errors import UserError
from db.clock import now
from db.columns import GENERATION_KEY_SQL
from db.connection import Store
from db.labels import current_labels, judge_verdicts
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


def _metric_values(
    store: Store, run_id: int, metric: str, judge: str | None
) -> tuple[str, dict[str, tuple[int, float]], int]:
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
        f"SELECT g.id, {GENERATION_KEY_SQL} AS key, j.value FROM generations g "
        "JOIN runs r ON r.id = g.run_id JOIN cases c ON c.id = g.case_pk "
        "LEFT JOIN judgments j ON j.generation_id = g.id AND j.metric = ? AND j.judge = ? "
        "WHERE g.run_id = ?",
        (metric, judge, run_id),
    ).fetchall()
    values = {r["key"]: (int(r["id"]), float(r["value"])) for r in rows if r["value"] is not None}
    return judge, values, len(rows) - len(values)


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
) -> QueueSummary:
    """Draw and store a queue (one transaction); the name must be new."""
    if not name.strip():
        raise UserError("a queue name is required")
    with store.transaction():
        if store.scalar("SELECT 1 FROM queues WHERE name = ?", (name,)):
            raise UserError(f"a queue named '{name}' already exists")
        run_id = int(run_row(store, run)["id"])
        judge, values, unscored = _metric_values(store, run_id, metric, judge)
        sample = stratified_sample(
            {key: value for key, (_, value) in values.items()}, per_value, seed, bin_width
        )
        if not sample:
            raise UserError(f"no generation of run '{run}' has a '{metric}' value to sample")
        queue_id = store.conn.execute(
            "INSERT INTO queues (name, run_id, metric, judge, per_value, seed, bin_width, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (name, run_id, metric, judge, per_value, seed, bin_width, now()),
        ).lastrowid
        store.conn.executemany(
            "INSERT INTO queue_items (queue_id, generation_id, position, stratum) "
            "VALUES (?, ?, ?, ?)",
            [
                (queue_id, values[key][0], position, stratum)
                for position, (key, stratum) in enumerate(sample)
            ],
        )
    strata: dict[float, int] = defaultdict(int)
    for _, stratum in sample:
        strata[stratum] += 1
    return QueueSummary(
        name, run, metric, judge, len(sample), dict(sorted(strata.items())), unscored
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
    """Position, generation id and key, and stratum of each queued generation."""
    return [
        dict(r)
        for r in store.conn.execute(
            f"SELECT q.position, q.generation_id, {GENERATION_KEY_SQL} AS generation, "
            "q.stratum FROM queue_items q JOIN generations g ON g.id = q.generation_id "
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
        "SELECT q.name, r.name AS run, q.metric, q.judge, q.per_value, q.seed, q.bin_width, "
        "q.created_at, (SELECT COUNT(*) FROM queue_items i WHERE i.queue_id = q.id) AS items "
        "FROM queues q JOIN runs r ON r.id = q.run_id ORDER BY q.id"
    ).fetchall()
    return [{**dict(r), "progress": queue_progress(store, r["name"])} for r in rows]

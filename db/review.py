"""The reviewer queue, review decisions and a generation's case history.

A generation is in the queue when a judge flagged it for copying, when a person
labelled copying on it (a current 'yes' on an event, character or literal item,
made on the content it has now: db.content),
or when anyone has recorded a review decision on it. Refusal flags and labels do
not put a generation in the queue: a flagged refusal is compliance, not copying.

Severity (the queue's order, most severe first):
  1. flagged_judges: how many distinct judges flagged a copying metric;
  2. max_ratio: the highest value / threshold over the generation's thresholded
     copying metrics (>= 1 means over a threshold; it ranks how far over);
  3. human_yes: how many current human 'yes' labels on copy targets it has (not those
     made on an earlier version);
  4. then the generation id, so the order is total and paging is stable.

Pages: `review_queue(after=row.page_key)` continues after a row by its severity key
(keyset paging), so a page never shifts when earlier rows leave the filter (a status
changed under a status filter); `offset` pages with LIMIT/OFFSET as before.

A generation's current status is its latest review event (by created_at, then
chain and seq, as for labels); one with no review event is 'open'.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from copyaudit.errors import UserError
from db.columns import GENERATION_KEY_SQL
from db.connection import Store
from db.content import stale_sql
from db.events import REVIEW_STATUS_ALIASES, REVIEW_STATUSES, append_review
from db.labels import current_label_events_sql, generation_ids_by_key

COPY_TARGETS = ("event", "character", "literal")  # labels that mean "it was copied"
NON_COPYING_METRICS = ("refusal",)  # flagged = the model refused: not a copying flag


@dataclass(frozen=True)
class QueueRow:
    generation_id: int
    generation_key: str
    run: str
    model: str | None
    work: str
    flagged_judges: int
    judges: str  # the flagging judges' names, comma separated
    max_ratio: float | None
    human_yes: int
    status: str
    reviewer: str | None
    note: str | None
    reviewed_at: str | None
    review_stale: bool = False  # the decision was made on an earlier version (db.content)

    @property
    def page_key(self) -> QueueKey:
        """This row's place in the queue order (for `review_queue(after=...)`)."""
        ratio = -1.0 if self.max_ratio is None else float(self.max_ratio)
        return QueueKey(self.flagged_judges, ratio, self.human_yes, self.generation_id)


@dataclass(frozen=True)
class QueueKey:
    """The severity key a page continues after: (flagged_judges, max_ratio or -1,
    human_yes, generation_id), ordered DESC, DESC, DESC, ASC."""

    flagged_judges: int
    ratio: float
    human_yes: int
    generation_id: int


@dataclass(frozen=True)
class HistoryEvent:
    """One label, retract or review event, as the case history shows it."""

    kind: str  # label / retract / review
    uuid: str
    chain: str
    seq: int
    created_at: str
    who: str
    target: str | None
    item_index: int | None
    value: str | None  # the label, or the review status
    note: str | None
    supersedes: str | None
    hash: str


def normalise_status(status: str) -> str:
    status = REVIEW_STATUS_ALIASES.get(status, status)
    if status not in REVIEW_STATUSES:
        raise UserError(f"unknown status '{status}' (one of {', '.join(REVIEW_STATUSES)})")
    return status


def resolve_generation(store: Store, key: str) -> int:
    """The id of generation `key` (run/case_id/template); a clear error if unknown."""
    found = generation_ids_by_key(store, [key])
    if key not in found:
        raise UserError(
            f"no generation '{key}' in this database (a generation is named run/case_id/template)"
        )
    return found[key]


_CURRENT_COPY_LABELS = current_label_events_sql(
    "l.target IN (SELECT value FROM json_each(:copy_targets))"
)

_SEVERITY_CTES = f"""
WITH human AS (
  SELECT live.generation_id AS gid, COUNT(*) AS human_yes FROM ({_CURRENT_COPY_LABELS}) live
    JOIN generations g ON g.id = live.generation_id JOIN cases c ON c.id = g.case_pk
  WHERE live.label = 'yes' AND NOT {stale_sql("live")}  -- an earlier version's: not counted
  GROUP BY live.generation_id
),
candidates AS (
  SELECT generation_id AS gid FROM judgments
  WHERE flagged = 1 AND metric NOT IN (SELECT value FROM json_each(:non_copying))
  UNION SELECT gid FROM human
  UNION SELECT generation_id FROM reviews
),
judged AS (
  SELECT j.generation_id AS gid,
    COUNT(DISTINCT CASE WHEN j.flagged = 1 THEN j.judge END) AS flagged_judges,
    GROUP_CONCAT(DISTINCT CASE WHEN j.flagged = 1 THEN j.judge END) AS judges,
    MAX(CASE WHEN j.value IS NOT NULL AND json_extract(j.evidence, '$.threshold') > 0
        THEN j.value / json_extract(j.evidence, '$.threshold') END) AS max_ratio
  FROM judgments j
  WHERE j.generation_id IN (SELECT gid FROM candidates)
    AND j.metric NOT IN (SELECT value FROM json_each(:non_copying))
  GROUP BY j.generation_id
),
ranked_reviews AS (
  SELECT generation_id AS gid, uuid, content_hash, status, reviewer, note, created_at,
    ROW_NUMBER() OVER (
    PARTITION BY generation_id ORDER BY created_at DESC, chain DESC, seq DESC) AS rank
  FROM reviews
),
queue AS (
  SELECT g.id AS generation_id, {GENERATION_KEY_SQL} AS generation_key, r.name AS run,
    r.model, w.title AS work, COALESCE(judged.flagged_judges, 0) AS flagged_judges,
    COALESCE(judged.judges, '') AS judges, judged.max_ratio,
    COALESCE(human.human_yes, 0) AS human_yes, COALESCE(rv.status, 'open') AS status,
    rv.reviewer, rv.note, rv.created_at AS reviewed_at,
    CASE WHEN rv.uuid IS NULL THEN 0 ELSE {stale_sql("rv")} END AS review_stale
  FROM candidates JOIN generations g ON g.id = candidates.gid
    JOIN runs r ON r.id = g.run_id JOIN cases c ON c.id = g.case_pk
    JOIN works w ON w.id = c.work_id
    LEFT JOIN judged ON judged.gid = g.id
    LEFT JOIN human ON human.gid = g.id
    LEFT JOIN ranked_reviews rv ON rv.gid = g.id AND rv.rank = 1
  WHERE 1 {{filters}}
)
"""

ORDER_BY = "flagged_judges DESC, COALESCE(max_ratio, -1) DESC, human_yes DESC, generation_id"
AFTER = """ AND (flagged_judges < :a_judges
  OR (flagged_judges = :a_judges AND COALESCE(max_ratio, -1) < :a_ratio)
  OR (flagged_judges = :a_judges AND COALESCE(max_ratio, -1) = :a_ratio
      AND human_yes < :a_yes)
  OR (flagged_judges = :a_judges AND COALESCE(max_ratio, -1) = :a_ratio
      AND human_yes = :a_yes AND generation_id > :a_gid))"""


def _query(
    select: str,
    *,
    work: str | None,
    model: str | None,
    status: str | None,
    run: str | None,
) -> tuple[str, dict[str, Any]]:
    params: dict[str, Any] = {
        "non_copying": json.dumps(NON_COPYING_METRICS),
        "copy_targets": json.dumps(COPY_TARGETS),
    }
    filters: list[str] = []
    if work is not None:
        filters.append("(w.title = :work OR w.key = :work)")
        params["work"] = work
    if model is not None:
        filters.append("r.model = :model")
        params["model"] = model
    if run is not None:
        filters.append("r.name = :run")
        params["run"] = run
    if status is not None:
        filters.append("COALESCE(rv.status, 'open') = :status")
        params["status"] = normalise_status(status)
    sql = _SEVERITY_CTES.replace("{filters}", "".join(f" AND {f}" for f in filters))
    return sql + select, params


def review_queue(
    store: Store,
    *,
    work: str | None = None,
    model: str | None = None,
    status: str | None = None,
    run: str | None = None,
    limit: int = 50,
    offset: int = 0,
    after: QueueKey | None = None,
) -> list[QueueRow]:
    """One page of the reviewer queue, most severe first (see the module docstring):
    the rows after `after` (a row's `page_key`) if given, else from `offset`."""
    if limit < 1 or offset < 0:
        raise UserError("the page needs limit >= 1 and offset >= 0")
    where = " WHERE 1" + (AFTER if after is not None else "")
    sql, params = _query(
        f"SELECT * FROM queue{where} ORDER BY {ORDER_BY} LIMIT :limit OFFSET :offset",
        work=work,
        model=model,
        status=status,
        run=run,
    )
    params.update(limit=limit, offset=offset)
    if after is not None:
        params.update(
            a_judges=after.flagged_judges,
            a_ratio=after.ratio,
            a_yes=after.human_yes,
            a_gid=after.generation_id,
        )
    return [
        QueueRow(**{**dict(row), "review_stale": bool(row["review_stale"])})
        for row in store.conn.execute(sql, params)
    ]


def review_queue_count(
    store: Store,
    *,
    work: str | None = None,
    model: str | None = None,
    status: str | None = None,
    run: str | None = None,
) -> int:
    """How many generations the queue holds with these filters."""
    sql, params = _query(
        "SELECT COUNT(*) FROM queue", work=work, model=model, status=status, run=run
    )
    return int(store.conn.execute(sql, params).fetchone()[0])


def current_review(store: Store, generation_id: int) -> dict[str, Any]:
    """The generation's current status, reviewer, note and time ('open' if never
    reviewed), and `stale`: the decision was made on an earlier version of the content."""
    row = store.conn.execute(
        f"SELECT rv.status, rv.reviewer, rv.note, rv.created_at, {stale_sql('rv')} AS stale "
        "FROM reviews rv JOIN generations g ON g.id = rv.generation_id "
        "JOIN cases c ON c.id = g.case_pk WHERE rv.generation_id = ? "
        "ORDER BY rv.created_at DESC, rv.chain DESC, rv.seq DESC LIMIT 1",
        (generation_id,),
    ).fetchone()
    if row is None:
        return {
            "status": "open",
            "reviewer": None,
            "note": None,
            "created_at": None,
            "stale": False,
        }
    return {**dict(row), "stale": bool(row["stale"])}


def _standing_decisions(store: Store, generation_id: int) -> list[dict[str, Any]]:
    """The generation's review events still in force, oldest first: an undo event (its
    `undoes` names a decision) withdraws that decision and is not itself one."""
    rows = store.conn.execute(
        "SELECT uuid, reviewer, status, note, undoes FROM reviews WHERE generation_id = ? "
        "ORDER BY created_at, chain, seq",
        (generation_id,),
    ).fetchall()
    standing: list[dict[str, Any]] = []
    for row in rows:
        if row["undoes"] is None:
            standing.append(dict(row))
        else:
            standing = [event for event in standing if event["uuid"] != row["undoes"]]
    return standing


def undo_review(store: Store, *, generation_id: int, reviewer: str) -> tuple[str, str] | None:
    """Withdraw the reviewer's decision in force on the generation with a new review
    event (append-only, like a label's retract) that restores the status before it.
    Returns (withdrawn status, restored status); None when the status in force is not
    the reviewer's own decision (nothing of theirs to undo)."""
    standing = _standing_decisions(store, generation_id)
    if not standing or standing[-1]["reviewer"] != reviewer:
        return None
    withdrawn = standing[-1]
    restored = standing[-2]["status"] if len(standing) > 1 else "open"
    append_review(
        store,
        generation_id=generation_id,
        reviewer=reviewer,
        status=restored,
        note=f"withdrew {withdrawn['status']}",
        undoes=withdrawn["uuid"],
    )
    return withdrawn["status"], restored


def case_history(store: Store, generation_id: int) -> list[HistoryEvent]:
    """Every label, retract and review event of one generation, oldest first."""
    rows = store.conn.execute(
        "SELECT action AS kind, uuid, chain, seq, created_at, annotator AS who, target, "
        "item_index, label AS value, note, supersedes, hash FROM labels "
        "WHERE generation_id = :g "
        "UNION ALL "
        "SELECT 'review', uuid, chain, seq, created_at, reviewer, NULL, NULL, status, note, "
        "NULL, hash FROM reviews WHERE generation_id = :g "
        "ORDER BY created_at, chain, seq",
        {"g": generation_id},
    )
    return [HistoryEvent(**dict(row)) for row in rows]

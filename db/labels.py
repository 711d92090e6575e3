"""Reading human labels and the judge verdicts they are checked against; importing labels.

An item is one thing a person can label on a generation: (target, item index),
target event / character (index = the reference event or character) or
refusal / literal (index 0). A person's current label on an item is their latest
`label` event for it that no `retract` event supersedes ("latest" by created_at,
then chain and seq), so undoing the newest label brings back the one before it.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from copyaudit.items import CONTENT_TASKS, NUMBERED_TARGETS
from db.cases import CHUNK_ROWS
from db.columns import GENERATION_KEY_SQL
from db.connection import Store
from db.content import stale_sql
from db.event_rules import PAYLOAD_ITEMS, EventProblem, canonical_time
from db.events import append_label, signed_digest
from db.generation_keys import generation_ids
from db.inputs import LabelRecord
from db.signatures import adopt_signature

ITEM_TARGETS = NUMBERED_TARGETS  # judged per reference item


def item_count_sql(case: str = "c") -> str:
    """SQL for how many items a person labels on a generation of case row `case`: every
    reference event and character, plus the whole-output items (copyaudit.items:
    refusal and literal, and content on a notice case of a content task). Characters
    named in the case input (`cases.given_characters`) are not asked, so not counted."""
    lengths = " + ".join(
        f"COALESCE(json_array_length({case}.payload, '$.{field}'), 0)"
        for field in PAYLOAD_ITEMS.values()
    )
    tasks = ", ".join(f"'{task}'" for task in CONTENT_TASKS)
    content = (
        f"(json_type({case}.payload, '$.snippet') IS NOT NULL "
        f"AND json_extract({case}.payload, '$.task') IN ({tasks}))"
    )
    return f"(2 + {content} + {lengths} - json_array_length({case}.given_characters))"


@dataclass(frozen=True)
class CurrentLabel:
    uuid: str  # the label event (retract it to undo)
    run: str
    generation_id: int
    generation_key: str
    annotator: str
    target: str
    item_index: int
    label: str  # yes / no / unsure
    note: str | None
    created_at: str
    stale: bool = False  # made on an earlier version of the content (db.content)


@dataclass(frozen=True)
class JudgeVerdict:
    """One judge's verdict on one item. `verdict` is None when the judge failed on
    the generation; `excluded` marks items the judge deliberately does not count
    (characters named in the prompt). `score` is compared with `threshold` to give
    the verdict (None where the verdict is not a thresholded score)."""

    run: str
    generation_id: int
    generation_key: str
    judge: str
    metric: str
    target: str
    item_index: int
    verdict: bool | None
    score: float | None
    threshold: float | None
    excluded: bool = False


def _ids_param(ids: Iterable[int]) -> str:
    return json.dumps([int(i) for i in ids])


# A label event `l` no retraction supersedes, found through the supersedes index per
# event (not by reading every retraction in each statement).
NOT_RETRACTED_SQL = (
    "NOT EXISTS (SELECT 1 FROM labels r WHERE r.supersedes = l.uuid AND r.action = 'retract')"
)

CURRENT_LABEL_EVENTS_SQL = f"""
SELECT * FROM (
  SELECT l.*, ROW_NUMBER() OVER (
    PARTITION BY l.annotator, l.generation_id, l.target, l.item_index
    ORDER BY l.created_at DESC, l.chain DESC, l.seq DESC
  ) AS rank
  FROM labels l
  WHERE l.action = 'label' AND {NOT_RETRACTED_SQL}
    {{filters}}
) WHERE rank = 1
"""
"""The one definition of a current label: per (annotator, generation, target, item),
the newest label event no retract supersedes. `{filters}` takes `AND ...` conditions
on `l` that restrict whole partitions (generation, annotator), never single events."""


def current_label_events_sql(*conditions: str) -> str:
    """CURRENT_LABEL_EVENTS_SQL restricted by SQL conditions on the label row `l`."""
    return CURRENT_LABEL_EVENTS_SQL.replace("{filters}", "".join(f" AND {c}" for c in conditions))


_LIVE_LABELS_SQL = f"""
SELECT live.uuid, r.name AS run, live.generation_id, {GENERATION_KEY_SQL} AS generation_key,
  live.annotator, live.target, live.item_index, live.label, live.note, live.created_at,
  {stale_sql("live")} AS stale
FROM ({{live}}) live JOIN generations g ON g.id = live.generation_id
  JOIN runs r ON r.id = g.run_id JOIN cases c ON c.id = g.case_pk
ORDER BY r.id, live.generation_id, live.target, live.item_index, live.annotator
"""


def current_labels(
    store: Store,
    *,
    run: str | None = None,
    generation_ids: Iterable[int] | None = None,
    annotator: str | None = None,
) -> list[CurrentLabel]:
    """Every current label (optionally of one run, some generations, one annotator)."""
    filters: list[str] = []
    params: list[Any] = []
    if run is not None:
        filters.append(
            "l.generation_id IN (SELECT g.id FROM generations g JOIN runs r "
            "ON r.id = g.run_id WHERE r.name = ?)"
        )
        params.append(run)
    if generation_ids is not None:
        filters.append("l.generation_id IN (SELECT value FROM json_each(?))")
        params.append(_ids_param(generation_ids))
    if annotator is not None:
        filters.append("l.annotator = ?")
        params.append(annotator)
    sql = _LIVE_LABELS_SQL.replace("{live}", current_label_events_sql(*filters))
    return [
        CurrentLabel(**{**dict(row), "stale": bool(row["stale"])})
        for row in store.conn.execute(sql, params)
    ]


def latest_label_event(
    store: Store, annotator: str, *, generation_id: int | None = None
) -> CurrentLabel | None:
    """The annotator's newest label event still in force (what "undo" retracts next),
    optionally on one generation. Being their newest, it is their current label."""
    sql = (
        "SELECT uuid, generation_id FROM labels l WHERE action = 'label' AND annotator = ? "
        f"AND {NOT_RETRACTED_SQL}"
    )
    params: list[Any] = [annotator]
    if generation_id is not None:
        sql += " AND generation_id = ?"
        params.append(generation_id)
    row = store.conn.execute(
        sql + " ORDER BY created_at DESC, chain DESC, seq DESC LIMIT 1", params
    ).fetchone()
    if row is None:
        return None
    labels = current_labels(store, annotator=annotator, generation_ids=[row["generation_id"]])
    return next(label for label in labels if label.uuid == row["uuid"])


def judge_verdicts(
    store: Store, *, run: str | None = None, generation_ids: Iterable[int] | None = None
) -> list[JudgeVerdict]:
    """Per-item verdicts of every judge metric that names a human label target.

    Event and character metrics give one verdict per reference item (evidence
    `items`); literal and refusal metrics give their flag as item 0.
    """
    sql = (
        f"SELECT r.name AS run, j.generation_id, {GENERATION_KEY_SQL} AS generation_key, "
        "j.judge, j.metric, j.value, j.flagged, j.evidence, jc.config AS judge_config "
        "FROM judgments j JOIN generations g ON g.id = j.generation_id "
        "JOIN runs r ON r.id = g.run_id JOIN cases c ON c.id = g.case_pk "
        "LEFT JOIN judge_configs jc ON jc.hash = j.judge_hash "
        "WHERE json_extract(j.evidence, '$.target') IS NOT NULL"
    )
    params: list[Any] = []
    if run is not None:
        sql += " AND r.name = ?"
        params.append(run)
    if generation_ids is not None:
        sql += " AND j.generation_id IN (SELECT value FROM json_each(?))"
        params.append(_ids_param(generation_ids))
    sql += " ORDER BY r.id, g.id, j.judge, j.metric"
    out: list[JudgeVerdict] = []
    for row in store.conn.execute(sql, params):
        out.extend(_verdicts_of(dict(row)))
    return out


def generation_judgments(store: Store, run: str, metric: str) -> list[dict[str, Any]]:
    """Every judgment of `metric` on a generation of `run`: generation_id, judge, value,
    flagged (None where the judge failed) and the threshold its evidence names."""
    return [
        dict(row)
        for row in store.conn.execute(
            "SELECT j.generation_id, j.judge, j.value, j.flagged, "
            "json_extract(j.evidence, '$.threshold') AS threshold "
            "FROM judgments j JOIN generations g ON g.id = j.generation_id "
            "JOIN runs r ON r.id = g.run_id WHERE r.name = ? AND j.metric = ? "
            "ORDER BY j.generation_id, j.judge",
            (run, metric),
        )
    ]


def _verdicts_of(row: dict[str, Any]) -> list[JudgeVerdict]:
    evidence = json.loads(row["evidence"])
    target = str(evidence["target"])
    common = {
        "run": row["run"],
        "generation_id": int(row["generation_id"]),
        "generation_key": row["generation_key"],
        "judge": row["judge"],
        "metric": row["metric"],
        "target": target,
    }
    if target not in ITEM_TARGETS:
        failed = row["value"] is None or row["flagged"] is None
        return [
            JudgeVerdict(
                **common,
                item_index=0,
                verdict=None if failed else bool(row["flagged"]),
                score=row["value"],
                threshold=evidence.get("threshold"),
            )
        ]
    config = json.loads(row["judge_config"]) if row["judge_config"] else {}
    item_threshold = config.get("entailment_threshold") if target == "event" else None
    excluded = set((evidence.get("extra") or {}).get("excluded") or ())
    return [
        JudgeVerdict(
            **common,
            item_index=int(item["index"]),
            verdict=None if item["verdict"] is None else bool(item["verdict"]),
            score=item.get("score"),
            threshold=item_threshold,
            excluded=int(item["index"]) in excluded,
        )
        for item in evidence.get("items") or ()
    ]


def generation_ids_by_key(store: Store, keys: Iterable[str]) -> dict[str, int]:
    """Generation id of each known key run/case_id/template (unknown keys are absent;
    see db.generation_keys: old keys of renamed runs, ambiguity)."""
    return generation_ids(store, keys)


def label_progress(
    store: Store, generation_ids: Iterable[int], annotator: str
) -> dict[int, tuple[int, int]]:
    """Per generation: (asked items the annotator has a current label on, items asked),
    counted as the list's filter counts them (item_count_sql): characters named in the
    case input are not asked. Two queries, no Python per item: the annotation mode line
    calls this for the whole queue after every label."""
    ids = list(generation_ids)
    sql = (
        f"SELECT g.id, {item_count_sql('c')} AS items, c.given_characters FROM generations g "
        "JOIN cases c ON c.id = g.case_pk WHERE g.id IN (SELECT value FROM json_each(?))"
    )
    totals: dict[int, int] = {}
    given: dict[int, set[int]] = {}
    for row in store.conn.execute(sql, (_ids_param(ids),)):
        totals[row["id"]] = int(row["items"])
        given[row["id"]] = set(json.loads(row["given_characters"]))
    done: dict[int, int] = {}
    for label in current_labels(store, generation_ids=ids, annotator=annotator):
        if label.target == "character" and label.item_index in given.get(label.generation_id, ()):
            continue  # not asked
        if label.stale:
            continue  # made on an earlier version: to be labelled again
        done[label.generation_id] = done.get(label.generation_id, 0) + 1
    return {gid: (done.get(gid, 0), totals[gid]) for gid in ids if gid in totals}


@dataclass(frozen=True)
class LabelImport:
    added: int  # label events appended
    unchanged: int  # records already here (same uuid) or equal to the current label: skipped


_FILE_FIELDS = {"item_index": "index"}  # an event's column -> the label file's field


def _same_event(row: sqlite3.Row, record: LabelRecord, generation_id: int) -> bool:
    return (row["annotator"], row["generation_id"], row["target"], row["item_index"]) == (
        record.annotator,
        generation_id,
        record.target,
        record.index,
    ) and (row["action"], row["label"], row["note"]) == ("label", record.label, record.note)


def import_labels(store: Store, records: Iterable[LabelRecord]) -> LabelImport:
    """Append each record as a label event, all or nothing, checked by the app's own
    rules (db.event_rules; a broken one is named by the record's file, line and field).

    Records are current labels (see copyaudit.verification.label_files.fold_current),
    one per item. A record keeps its own uuid and created_at (an export's), so an older
    file never outranks a newer label; one whose uuid is already here is skipped (a
    different event under that uuid is an error), as is one equal (label and note) to
    the annotator's current label on that item, so importing the same file twice adds
    nothing. Importing never retracts a label already in the database. The records
    stream: CHUNK_ROWS at a time (generation ids and current labels looked up per
    chunk) inside the one durable transaction, so an error late rolls it all back.
    """
    added = unchanged = 0
    with store.transaction(durable=True):
        records = iter(records)
        while chunk := list(itertools.islice(records, CHUNK_ROWS)):
            a, u = _import_chunk(store, chunk)
            added, unchanged = added + a, unchanged + u
    return LabelImport(added, unchanged)


def _import_chunk(store: Store, records: Sequence[LabelRecord]) -> tuple[int, int]:
    """import_labels on one chunk, inside its transaction: (added, unchanged)."""
    ids = generation_ids_by_key(store, (r.generation for r in records))
    for record in records:
        if record.generation not in ids:
            raise record.error(
                "generation", f"no generation '{record.generation}' in this database"
            )
    current = {  # a label made on an earlier version is re-confirmed, not skipped
        (c.annotator, c.generation_id, c.target, c.item_index): (c.label, c.note)
        for c in current_labels(store, generation_ids=ids.values())
        if not c.stale
    }
    added = unchanged = 0
    for record in records:
        generation_id = ids[record.generation]
        if record.uuid is not None:
            row = store.conn.execute(
                "SELECT * FROM labels WHERE uuid = ?", (record.uuid,)
            ).fetchone()
            if row is not None:
                if not _same_event(row, record, generation_id):
                    raise record.error(
                        "uuid", f"event {record.uuid} is already here with other content"
                    )
                unchanged += 1
                continue
        key = (record.annotator, generation_id, record.target, record.index)
        if current.get(key) == (record.label, record.note):
            unchanged += 1
            continue
        assert record.label is not None
        try:
            created_at = None if record.created_at is None else canonical_time(record.created_at)
            uuid = append_label(
                store,
                generation_id=generation_id,
                annotator=record.annotator,
                target=record.target,
                item_index=record.index,
                label=record.label,
                note=record.note,
                uuid=record.uuid,
                created_at=created_at,
            )
        except EventProblem as problem:
            raise record.error(
                _FILE_FIELDS.get(problem.field, problem.field), problem.message
            ) from None
        carried = record.signature
        pair = None if carried is None else (carried.fingerprint, carried.value)
        refused = adopt_signature(store, "labels", uuid, pair, signed_digest)
        if refused is not None:
            raise record.error(*refused)
        current[key] = (record.label, record.note)
        added += 1
    return added, unchanged

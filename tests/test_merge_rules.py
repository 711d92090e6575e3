"""`merge` holds every incoming event to the app's own rules (db.event_rules): a
forged event with a valid hash chain but a bad value, index, time or retract is
refused, named (file, table, uuid, field), and nothing is merged. The same rules
refuse the app's own bad writes (a retract of someone else's label)."""

from __future__ import annotations

import sqlite3
import uuid as uuidlib
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from copyaudit.errors import UserError
from db import Store
from db.event_rules import EventProblem, canonical_time
from db.events import append_review, event_hash, retract_label, verify_chains
from tests.conftest import database_fingerprint
from tests.label_fixtures import EVENTS_JUDGE, event_score, gid, judge, label, make_run
from tests.test_merge import copy_db

G1 = "r/nl-1/1"


@pytest.fixture
def pair(tmp_path: Path, cli, db_path: Path) -> tuple[Path, Path]:
    """Database A (judged, ann's label on event 0) and its copy B with bob's label."""
    make_run(cli, tmp_path, "nonliteral", ["nl-1", "nl-2"])
    with Store(db_path) as store:
        judge(store, EVENTS_JUDGE, {G1: event_score([(True, 0.9)] * 4)})
        label(store, G1, "ann", "event", 0, "yes")
    other = copy_db(db_path, tmp_path / "other.db")
    with Store(other) as store:
        label(store, G1, "bob", "event", 1, "no")
        append_review(store, generation_id=gid(store, G1), reviewer="rita", status="cleared")
    return db_path, other


def forge(path: Path, table: str, **changes: Any) -> str:
    """Append to `path` an event like the chain's last one with `changes`, hashed and
    chained correctly (so only the app's rules can tell it is bad); its uuid."""
    with closing(sqlite3.connect(path)) as conn:
        conn.row_factory = sqlite3.Row
        last = dict(conn.execute(f"SELECT * FROM {table} ORDER BY seq DESC LIMIT 1").fetchone())
        event = {**last, "uuid": uuidlib.uuid4().hex, "seq": last["seq"] + 1, **changes}
        event["prev_hash"] = last["hash"]
        event["hash"] = event_hash(table, event, last["hash"])
        columns = ", ".join(event)
        conn.execute(
            f"INSERT INTO {table} ({columns}) VALUES ({', '.join('?' for _ in event)})",
            tuple(event.values()),
        )
        conn.commit()
    with Store(path) as store:
        assert verify_chains(store) == []  # the forgery is invisible to the chain check
    return str(event["uuid"])


def _refused(cli, target: Path, other: Path, *fragments: str) -> None:
    before = database_fingerprint(target)
    result = cli("merge", str(other))
    assert result.code == 2, (result.out, result.err)
    for fragment in fragments:
        assert fragment in result.err, result.err
    assert database_fingerprint(target) == before


LATER = (datetime.now(UTC) + timedelta(days=365)).isoformat(timespec="milliseconds")


@pytest.mark.parametrize(
    ("table", "changes", "field", "says"),
    [
        ("labels", {"label": "maybe"}, "label", "unknown label 'maybe'"),
        ("labels", {"target": "plot"}, "target", "unknown label target"),
        ("labels", {"action": "delete"}, "action", "unknown action"),
        ("labels", {"item_index": "three"}, "item_index", "non-negative integer"),
        ("labels", {"item_index": 4}, "item_index", "indices 0..3"),
        ("labels", {"item_index": -1}, "item_index", "non-negative integer"),
        ("labels", {"target": "refusal", "item_index": 2}, "item_index", "index must be 0"),
        ("labels", {"created_at": LATER}, "created_at", "in the future"),
        ("labels", {"created_at": "yesterday"}, "created_at", "not an ISO-8601 time"),
        ("labels", {"created_at": "2026-01-01T00:00:00"}, "created_at", "not a UTC time"),
        ("labels", {"created_at": "2026-01-01T00:00:00Z"}, "created_at", "store's form"),
        ("labels", {"annotator": " "}, "annotator", "name is required"),
        ("reviews", {"status": "approved"}, "status", "unknown status 'approved'"),
        ("reviews", {"created_at": LATER}, "created_at", "in the future"),
    ],
)
def test_a_forged_event_is_refused_whole_and_named(
    pair, cli, table: str, changes: dict[str, Any], field: str, says: str
) -> None:
    target, other = pair
    bad = forge(other, table, **changes)
    _refused(cli, target, other, "other.db", f"{table} event {bad}", f"field '{field}'", says)


def test_a_retract_of_someone_elses_label_is_refused_in_merge(pair, cli) -> None:
    target, other = pair
    with Store(target) as store:
        ann = store.scalar("SELECT uuid FROM labels WHERE annotator = 'ann'")
    bad = forge(other, "labels", action="retract", label=None, supersedes=ann, item_index=0)
    _refused(cli, target, other, f"labels event {bad}", "bob cannot retract ann's label")


def test_a_retract_by_its_author_merges(pair, cli) -> None:
    _, other = pair
    with Store(other) as store:
        bob = store.scalar("SELECT uuid FROM labels WHERE annotator = 'bob'")
        retract_label(store, label_uuid=bob, annotator="bob")
    result = cli("merge", str(other))
    assert result.code == 0, result.err
    assert "labels: 2 added" in result.out


def test_the_app_refuses_a_retract_of_someone_elses_label(pair) -> None:
    target, _ = pair
    with Store(target) as store:
        ann = store.scalar("SELECT uuid FROM labels WHERE annotator = 'ann'")
        before = store.scalar("SELECT COUNT(*) FROM labels")
        with pytest.raises(UserError, match="bob cannot retract ann's label"):
            retract_label(store, label_uuid=ann, annotator="bob")
        assert store.scalar("SELECT COUNT(*) FROM labels") == before


def test_the_app_refuses_an_index_outside_the_case(pair) -> None:
    """The same range rule as merge and import: the case has 4 reference events."""
    target, _ = pair
    with Store(target) as store, pytest.raises(UserError, match=r"indices 0\.\.3"):
        label(store, G1, "ann", "event", 4, "yes")


def test_canonical_time_accepts_utc_forms_and_gives_the_stores_form() -> None:
    assert canonical_time("2026-01-02T03:04:05Z") == "2026-01-02T03:04:05.000+00:00"
    assert canonical_time("2026-01-02T03:04:05.5+00:00") == "2026-01-02T03:04:05.500+00:00"
    with pytest.raises(EventProblem, match="not a UTC time"):
        canonical_time("2026-01-02T05:04:05+02:00")

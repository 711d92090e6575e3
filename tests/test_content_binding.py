"""Labels and review decisions are bound to the content they were made on: after a
`--replace` of the output or the case, they are shown as made on an earlier version and
left out of agreement until re-confirmed; a migration binds older events to the content
they have now; merge carries the binding."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from db import Store
from db.events import append_review, event_hash, verify_chains
from db.labels import current_labels, label_progress
from db.migrations import MIGRATIONS, migrate_content_binding
from db.review import current_review, review_queue
from tests.conftest import write_jsonl
from tests.factories import nonliteral_record
from tests.label_fixtures import EVENTS_JUDGE, event_score, gid, judge, label, make_run

G1 = "r/nl-1/1"
ANN = {0: "yes", 1: "no", 2: "yes", 3: "no"}
BOB = {0: "yes", 1: "yes", 2: "yes", 3: "no"}


@pytest.fixture
def labelled(tmp_path: Path, cli, db_path: Path) -> Path:
    """G1 judged, labelled by ann and bob on its four events, and reviewed."""
    make_run(cli, tmp_path, "nonliteral", ["nl-1", "nl-2"])
    with Store(db_path) as store:
        judge(store, EVENTS_JUDGE, {G1: event_score([(True, 0.9)] * 4)})
        for annotator, values in (("ann", ANN), ("bob", BOB)):
            for index, value in values.items():
                label(store, G1, annotator, "event", index, value)
        append_review(store, generation_id=gid(store, G1), reviewer="rita", status="cleared")
    return db_path


def _replace_output(cli, tmp_path: Path, output: str) -> None:
    gens = write_jsonl(tmp_path / "new.jsonl", [{"case_id": "nl-1", "output": output}])
    args = ("import-generations", str(gens), "--run", "r", "--suite", "nonliteral-suite")
    result = cli(*args, "--replace")
    assert result.code == 0, result.err


def _event_pairs(cli) -> list[tuple[str, str, int]]:
    report = json.loads(cli("agreement", "--run", "r", "--format", "json").out)
    return [
        (p["a"], p["b"], p["n"])
        for row in report["agreement"]
        if row["target"] == "event"
        for p in row["kappa"]
    ]


def test_replacing_the_output_leaves_old_labels_out_until_relabelled(
    labelled: Path, tmp_path: Path, cli
) -> None:
    assert _event_pairs(cli) == [("ann", "bob", 4)]
    _replace_output(cli, tmp_path, "A different story for nl-1.")
    with Store(labelled) as store:
        labels = current_labels(store, run="r")
        assert len(labels) == 8 and all(label.stale for label in labels)  # shown, not hidden
        assert label_progress(store, [gid(store, G1)], "ann")[gid(store, G1)][0] == 0
        assert current_review(store, gid(store, G1))["stale"] is True
        (row,) = review_queue(store, run="r")
        assert row.status == "cleared" and row.review_stale
    assert _event_pairs(cli) == []  # left out of agreement
    said = cli("agreement", "--run", "r").out
    assert "8 current label(s) made on an earlier version of their content" in said
    # Re-confirming on the new version: ann and bob label again; import of the same
    # values is not skipped as "unchanged" either.
    with Store(labelled) as store:
        for index, value in ANN.items():
            label(store, G1, "ann", "event", index, value)
    again = write_jsonl(
        tmp_path / "bob.jsonl",
        [
            {"annotator": "bob", "generation": G1, "target": "event", "index": i, "label": v}
            for i, v in BOB.items()
        ],
    )
    result = cli("import-labels", str(again))
    assert result.code == 0 and "4 labels added" in result.out, result.out
    assert _event_pairs(cli) == [("ann", "bob", 4)]
    with Store(labelled) as store:
        assert not any(label.stale for label in current_labels(store, run="r"))
        assert verify_chains(store) == []


def test_replacing_the_case_marks_labels_as_made_on_an_earlier_version(
    labelled: Path, tmp_path: Path, cli
) -> None:
    changed = nonliteral_record(
        1,
        id="nl-1",
        reference_events=["A new first event."] + [f"Event {e} of nl-1." for e in (1, 2, 3)],
    )
    cases = write_jsonl(tmp_path / "cases.jsonl", [changed])
    result = cli("import", "nonliteral", str(cases), "--suite", "nonliteral-suite", "--replace")
    assert result.code == 0, result.err
    with Store(labelled) as store:
        assert all(label.stale for label in current_labels(store, run="r"))
    assert _event_pairs(cli) == []


def test_an_unchanged_reimport_keeps_labels_current(labelled: Path, tmp_path: Path, cli) -> None:
    _replace_output(cli, tmp_path, "A story for nl-1.")  # the same output: nothing replaced
    with Store(labelled) as store:
        assert not any(label.stale for label in current_labels(store, run="r"))
    assert _event_pairs(cli) == [("ann", "bob", 4)]


def _as_before_binding(path: Path) -> None:
    """Undo the binding migration: the database as an older copyaudit left it, its
    events hashed without a content hash."""
    with closing(sqlite3.connect(path)) as conn:
        conn.row_factory = sqlite3.Row
        conn.execute("DROP TABLE backfilled_content_hashes")
        for table in ("labels", "reviews"):
            trigger = conn.execute(
                "SELECT sql FROM sqlite_master WHERE name = ?", (f"{table}_no_update",)
            ).fetchone()[0]
            conn.execute(f"DROP TRIGGER {table}_no_update")
            conn.execute(f"ALTER TABLE {table} DROP COLUMN content_hash")
            prev = ""  # one chain per table here
            for row in conn.execute(f"SELECT * FROM {table} ORDER BY seq").fetchall():
                digest = event_hash(table, dict(row), prev)
                conn.execute(
                    f"UPDATE {table} SET prev_hash = ?, hash = ? WHERE uuid = ?",
                    (prev, digest, row["uuid"]),
                )
                prev = digest
            conn.execute(trigger)
        # back to just before the binding: the migrations after it run again (idempotent)
        conn.execute(f"PRAGMA user_version = {MIGRATIONS.index(migrate_content_binding)}")
        conn.commit()


def test_the_migration_binds_older_events_to_their_content_now(
    labelled: Path, tmp_path: Path, cli
) -> None:
    """A database from before the binding: its events keep their hashes (verify holds)
    and are bound by the migration; a later replace makes them earlier-version."""
    _as_before_binding(labelled)
    with Store(labelled) as store:
        assert verify_chains(store) == []
        assert store.scalar("SELECT COUNT(*) FROM backfilled_content_hashes") == 9
        assert store.scalar("SELECT COUNT(*) FROM labels WHERE content_hash IS NULL") == 8
        assert not any(label.stale for label in current_labels(store, run="r"))
    assert _event_pairs(cli) == [("ann", "bob", 4)]
    _replace_output(cli, tmp_path, "Changed after the upgrade.")
    with Store(labelled) as store:
        assert all(label.stale for label in current_labels(store, run="r"))


def test_merge_carries_the_binding_of_events_from_before_it(
    labelled: Path, tmp_path: Path, cli
) -> None:
    """Events of an older database (no content_hash of their own) come in bound to the
    content they were made on there, and the merged events verify."""
    _as_before_binding(labelled)
    base = tmp_path / "base.db"
    make_run(cli, tmp_path, "nonliteral", ["nl-1", "nl-2"], db=base)
    result = cli("merge", str(labelled), db=base)
    assert result.code == 0 and "labels: 8 added" in result.out, result.err
    with Store(base) as store:
        assert store.scalar("SELECT COUNT(*) FROM backfilled_content_hashes") == 9
        labels = current_labels(store, run="r")
        assert len(labels) == 8 and not any(label.stale for label in labels)
        assert verify_chains(store) == []
    _replace_output(cli, tmp_path, "Changed in the merged copy.")
    with Store(base) as store:  # the replace was in the other database: still current here
        assert not any(label.stale for label in current_labels(store, run="r"))


def test_review_list_and_dossier_say_made_on_an_earlier_version(
    labelled: Path, tmp_path: Path, cli
) -> None:
    _replace_output(cli, tmp_path, "A different story for nl-1.")
    listed = cli("review", "list", "--run", "r")
    assert listed.code == 0 and "earlier" in listed.out  # the table wraps the status cell
    (row,) = json.loads(cli("review", "list", "--run", "r", "--format", "json").out)["rows"]
    assert (row["status"], row["review_stale"]) == ("cleared", True)
    for fmt in ("md", "html"):
        out = tmp_path / f"case.{fmt}"
        result = cli("dossier", G1, "--format", fmt, "-o", str(out))
        assert result.code == 0, result.err
        text = out.read_text()
        assert text.count("made on an earlier version") == 9, fmt  # 8 labels + the decision


def test_the_review_queue_counts_only_yes_labels_on_the_current_version(
    labelled: Path, tmp_path: Path, cli
) -> None:
    def human_yes() -> int:
        with Store(labelled) as store:
            (row,) = review_queue(store, run="r")
            return row.human_yes

    yes = sum(v == "yes" for v in ANN.values()) + sum(v == "yes" for v in BOB.values())
    assert human_yes() == yes == 5
    _replace_output(cli, tmp_path, "A different story for nl-1.")
    assert human_yes() == 0  # made on an earlier version: not counted
    with Store(labelled) as store:
        for index, value in ANN.items():  # ann re-confirms on the new version
            label(store, G1, "ann", "event", index, value)
    assert human_yes() == 2

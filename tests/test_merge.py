"""`copyaudit merge`: events come in once each (by uuid), chains stay valid (native
extension or re-origin on divergence), agreement sees both annotators, and a bad or
mismatched database leaves the target byte-for-byte unchanged."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from db import Store
from db.events import append_review, verify_chains
from db.labels import current_labels
from db.merge import derived_chain
from tests.conftest import database_fingerprint, write_jsonl
from tests.label_fixtures import EVENTS_JUDGE, event_score, gid, judge, label, make_run
from tests.process_cache import copy_database as copy_db  # same origin, chain ids

G1, G2 = "r/nl-1/1", "r/nl-2/1"
ANN = {0: "yes", 1: "no", 2: "yes", 3: "no"}
BOB = {0: "yes", 1: "yes", 2: "yes", 3: "no"}


def events(path: Path, table: str = "labels") -> dict[str, dict]:
    with closing(sqlite3.connect(path)) as conn:
        conn.row_factory = sqlite3.Row
        return {r["uuid"]: dict(r) for r in conn.execute(f"SELECT * FROM {table}")}


@pytest.fixture
def base(tmp_path: Path, cli, db_path: Path) -> Path:
    """Database A: a judged nonliteral run with no labels yet."""
    make_run(cli, tmp_path, "nonliteral", ["nl-1", "nl-2"])
    with Store(db_path) as store:
        judge(store, EVENTS_JUDGE, {G1: event_score([(True, 0.9)] * 2 + [(False, 0.1)] * 2)})
    return db_path


def _label_all(path: Path, annotator: str, labels: dict[int, str]) -> None:
    with Store(path) as store:
        for index, value in labels.items():
            label(store, G1, annotator, "event", index, value)


@pytest.fixture
def diverged(base: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A and its copy B both labelled G1 after the copy (the same chain, diverged);
    B also has a review decision."""
    other = copy_db(base, tmp_path / "other.db")
    _label_all(base, "ann", ANN)
    _label_all(other, "bob", BOB)
    with Store(other) as store:
        append_review(store, generation_id=gid(store, G1), reviewer="rita", status="escalated")
    return base, other


def test_merge_diverged_copy_keeps_every_event_once(diverged, cli) -> None:
    target, other = diverged
    theirs = events(other)
    result = cli("merge", str(other))
    assert result.code == 0, result.err
    assert "labels: 4 added, 0 already present" in result.out
    assert "reviews: 1 added" in result.out and "diverged" in result.out
    merged = events(target)
    assert len(merged) == 8 and set(theirs) <= set(merged)
    for uuid, event in theirs.items():  # same content; the chain was re-originated
        mine = merged[uuid]
        assert {k: mine[k] for k in ("annotator", "item_index", "label", "created_at")} == {
            k: event[k] for k in ("annotator", "item_index", "label", "created_at")
        }
    first = min(theirs.values(), key=lambda e: e["seq"])
    new_chain = derived_chain(first["chain"], first["uuid"])
    assert sorted(merged[u]["seq"] for u in theirs) == [1, 2, 3, 4]
    assert {merged[u]["chain"] for u in theirs} == {new_chain}
    # The review chain did not diverge (A had no reviews): kept as it was, hash and all.
    assert events(target, "reviews") == events(other, "reviews")
    verify = cli("verify")
    assert verify.code == 0, verify.err
    assert "8 label and 1 review events" in verify.out
    with Store(target) as store:
        assert verify_chains(store) == []


def test_merge_twice_is_idempotent_and_both_ways_agree(diverged, cli) -> None:
    target, other = diverged
    assert cli("merge", str(other)).code == 0
    after_first = database_fingerprint(target)
    again = cli("merge", str(other))
    assert again.code == 0 and "labels: 0 added, 4 already present" in again.out
    assert database_fingerprint(target) == after_first
    back = cli("merge", str(target), db=other)
    assert back.code == 0 and "labels: 4 added, 4 already present" in back.out
    assert set(events(other)) == set(events(target))
    assert cli("verify", db=other).code == 0


def test_agreement_reflects_both_annotators_after_merge(diverged, cli) -> None:
    _, other = diverged
    before = json.loads(cli("agreement", "--run", "r", "--format", "json").out)
    assert before["agreement"][0]["annotator_names"] == ["ann"]
    assert cli("merge", str(other)).code == 0
    report = json.loads(cli("agreement", "--run", "r", "--format", "json").out)
    agreement = next(a for a in report["agreement"] if a["target"] == "event")
    assert agreement["annotator_names"] == ["ann", "bob"]
    pair = agreement["kappa"][0]
    assert (pair["a"], pair["b"], pair["n"]) == ("ann", "bob", 4)
    # ann and bob agree on items 0, 2, 3 and differ on item 1: p_o = 3/4.
    # yes counts: ann 2, bob 3 of 4 -> p_e = (2*3 + 2*1) / 16 = 1/2; kappa = 1/2.
    assert pair["kappa"] == pytest.approx(0.5)


def test_copy_extended_on_one_side_keeps_its_chain_and_hashes(base, tmp_path: Path, cli) -> None:
    _label_all(base, "ann", {0: "yes", 1: "no"})
    other = copy_db(base, tmp_path / "other.db")
    with Store(other) as store:
        label(store, G1, "ann", "event", 2, "yes")
        label(store, G1, "bob", "event", 0, "no")
    result = cli("merge", str(other))
    assert result.code == 0 and "diverged" not in result.out
    assert events(base) == events(other)  # identical rows: chain, seq, prev_hash and hash
    assert cli("verify").code == 0
    with Store(base) as store:  # and the chain goes on here after the merged events
        label(store, G2, "ann", "event", 0, "yes")
        assert verify_chains(store) == []


def test_later_events_of_a_diverged_chain_continue_its_new_chain(diverged, cli) -> None:
    target, other = diverged
    assert cli("merge", str(other)).code == 0
    with Store(other) as store:
        late = label(store, G2, "bob", "event", 0, "yes")
    result = cli("merge", str(other))
    assert result.code == 0 and "labels: 1 added, 4 already present" in result.out
    merged = events(target)
    bobs = [e for e in merged.values() if e["annotator"] == "bob"]
    assert merged[late]["chain"] == bobs[0]["chain"] and merged[late]["seq"] == 5
    assert cli("verify").code == 0


def test_conflicting_labels_are_kept_not_overwritten(base, tmp_path: Path, cli) -> None:
    other = copy_db(base, tmp_path / "other.db")
    with Store(base) as store:
        mine = label(store, G1, "ann", "event", 0, "yes", note="here")
    with Store(other) as store:
        theirs = label(store, G1, "ann", "event", 0, "no", note="there")
    assert cli("merge", str(other)).code == 0
    merged = events(base)
    assert (merged[mine]["label"], merged[mine]["note"]) == ("yes", "here")
    assert (merged[theirs]["label"], merged[theirs]["note"]) == ("no", "there")
    with Store(base) as store:  # the current label is the later event, as for any two labels
        (current,) = current_labels(store, annotator="ann")
    assert current.uuid == theirs


def test_tampering_with_a_merged_event_is_named_by_verify(diverged, cli) -> None:
    target, other = diverged
    assert cli("merge", str(other)).code == 0
    bob_event = next(u for u, e in events(target).items() if e["annotator"] == "bob")
    with closing(sqlite3.connect(target)) as conn:
        conn.execute("DROP TRIGGER labels_no_update")
        conn.execute("UPDATE labels SET label = 'no' WHERE uuid = ?", (bob_event,))
        conn.commit()
    bad = cli("verify")
    assert bad.code == 1 and f"labels event {bob_event}" in bad.err and "altered" in bad.err


# --- errors: nothing written --------------------------------------------------------


def _unchanged(cli, target: Path, other: Path, message: str) -> None:
    before = database_fingerprint(target)
    result = cli("merge", str(other))
    assert result.code == 2, (result.out, result.err)
    assert message in result.err
    assert database_fingerprint(target) == before


def test_missing_generation_is_named_and_nothing_is_written(diverged, tmp_path: Path, cli) -> None:
    """The other database has bob's four valid labels and one on a run this one lacks:
    the error names that generation and none of the five events comes in."""
    target, other = diverged
    make_run(cli, tmp_path, "nonliteral", ["nl-1", "nl-7"], run="s", db=other)
    with Store(other) as store:
        label(store, "s/nl-7/1", "cy", "event", 0, "yes")
    _unchanged(cli, target, other, "s/nl-7/1")


def test_same_key_with_a_different_output_is_refused(base, tmp_path: Path, cli) -> None:
    other = copy_db(base, tmp_path / "other.db")
    gens = write_jsonl(tmp_path / "changed.jsonl", [{"case_id": "nl-1", "output": "Changed."}])
    changed = cli(
        "import-generations",
        str(gens),
        "--run",
        "r",
        "--suite",
        "nonliteral-suite",
        "--replace",
        db=other,
    )
    assert changed.code == 0, changed.err
    with Store(other) as store:
        label(store, G1, "bob", "event", 0, "yes")
    _unchanged(cli, base, other, "different output")


def test_tampered_other_database_is_refused(diverged, cli) -> None:
    target, other = diverged
    with closing(sqlite3.connect(other)) as conn:
        conn.execute("DROP TRIGGER labels_no_update")
        conn.execute("UPDATE labels SET label = 'no' WHERE seq = 2")
        conn.commit()
    _unchanged(cli, target, other, "fails verification")


def _damage_a_table_page(path: Path, table: str = "generations") -> None:
    """Zero the first 64 bytes of `table`'s root page (a page header lost on disk): the
    schema still reads, the table reads as "database disk image is malformed"."""
    with closing(sqlite3.connect(path)) as conn:
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,))
        at = (root.fetchone()[0] - 1) * size
    blob = path.read_bytes()
    path.write_bytes(blob[:at] + bytes(64) + blob[at + 64 :])


def test_a_damaged_other_database_is_named_and_nothing_is_merged(diverged, cli) -> None:
    target, other = diverged
    _damage_a_table_page(other)
    _unchanged(cli, target, other, f"{other}: a damaged database file")


def test_a_damaged_database_is_a_clear_error_not_an_internal_one(diverged, cli) -> None:
    _, other = diverged
    _damage_a_table_page(other)
    result = cli("verify", db=other)
    assert result.code == 2, (result.out, result.err)
    assert "a damaged database file" in result.err and "internal error" not in result.err


def test_a_schema_damaged_into_valid_text_is_named_not_an_internal_error(diverged, cli) -> None:
    """A bit flipped in the schema's text (found by the fuzz test: 'generation_id' read as
    another name) passes quick_check; the first statement it breaks names the file."""
    target, other = diverged
    with closing(sqlite3.connect(other)) as conn:
        conn.execute("PRAGMA writable_schema = ON")
        conn.execute(
            "UPDATE sqlite_master SET sql = replace(sql, 'generation_id', 'generation_hd') "
            "WHERE name = 'labels'"
        )
        conn.commit()
    with closing(sqlite3.connect(other)) as conn:
        assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    _unchanged(cli, target, other, f"{other}: cannot be read as a copyaudit database")


def _delete_last_label(path: Path) -> None:
    """Delete the last label event behind the tool's back and put the trigger back as it
    was: the chain left is still valid, only the head record shows what is gone."""
    from db.migrations import event_trigger_sql

    with closing(sqlite3.connect(path)) as conn:
        conn.execute("DROP TRIGGER labels_no_delete")
        conn.execute("DELETE FROM labels WHERE seq = (SELECT MAX(seq) FROM labels)")
        conn.execute(event_trigger_sql()["labels_no_delete"])
        conn.commit()


@pytest.mark.parametrize(
    ("tamper", "named"),
    [
        (lambda path: _execute(path, "DROP TRIGGER labels_no_update"), "labels_no_update"),
        (lambda path: _execute(path, "DROP TRIGGER reviews_head"), "reviews_head"),
        (
            lambda path: _execute(path, "DELETE FROM event_heads WHERE tbl = 'reviews'"),
            "head record missing",
        ),
        (_delete_last_label, "events deleted"),
    ],
)
def test_other_database_is_audited_like_verify_before_merging(
    diverged, cli, tamper, named: str
) -> None:
    """Its chains are intact, but a guarding trigger or a head record is not: refused,
    naming the problem, this database unchanged."""
    target, other = diverged
    tamper(other)
    with Store(other) as store:
        assert verify_chains(store) == []  # what the merge checked before
    _unchanged(cli, target, other, "fails verification")
    _unchanged(cli, target, other, named)


def _execute(path: Path, sql: str) -> None:
    with closing(sqlite3.connect(path)) as conn:
        conn.execute(sql)
        conn.commit()


def test_not_a_database_and_missing_file(diverged, tmp_path: Path, cli) -> None:
    target, _ = diverged
    junk = tmp_path / "junk.db"
    junk.write_text("this is not sqlite\n" * 100)
    _unchanged(cli, target, junk, "not a SQLite database")
    plain = tmp_path / "plain.db"
    with closing(sqlite3.connect(plain)) as conn:
        conn.execute("CREATE TABLE t (x)")
    _unchanged(cli, target, plain, "not a copyaudit database")
    _unchanged(cli, target, tmp_path / "absent.db", "no database at")
    _unchanged(cli, target, target, "into itself")

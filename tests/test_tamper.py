"""Tampering behind the tool's back (sqlite3 directly: the attacker), each kind with and
without an anchor: `verify` (and `verify --against`) must fail naming what was done.

The attacker here is careful: after editing, they put the append-only triggers back exactly
as copyaudit wrote them, so only the edit itself can give them away. Kinds that also fix
the per-chain head record are caught only against an anchor kept outside the database;
without one they pass `verify`, and the test says so (the limit is pinned, not hidden).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from copyaudit.sign_key import choose_key, signer
from db import Store
from db.events import append_label, append_review, event_hash, retract_label
from db.migrations import event_trigger_sql
from db.signatures import use_signer
from tests.conftest import write_jsonl
from tests.event_forgery import append_behind, signer_of
from tests.factories import nonliteral_record

EVENTS = ["Mira plants a glass seed.", "The orchard grows overnight.", "Zoë picks a glass pear."]


def _case(i: int) -> dict:
    """A story case with three reference events (the labels below name events 0-2)."""
    return nonliteral_record(i, id=f"lit-{i}", reference_events=EVENTS)


Tamper = Callable[[sqlite3.Connection], None]  # an edit made through one connection
Attack = Callable[[Path], None]  # what is done to the database file
GUARDS = ("labels_no_update", "labels_no_delete", "reviews_no_update", "reviews_no_delete")


def _build(tmp_path: Path, cli, db_path: Path, keys: dict[str, Path] | None = None) -> Path:
    """Two generations; four label events (one a retract) and three review decisions;
    with `keys`, each person's events signed with their key (trusted first)."""
    tmp_path.mkdir(exist_ok=True)
    cases = write_jsonl(tmp_path / "lit.jsonl", [_case(1), _case(2)])
    gens = write_jsonl(
        tmp_path / "g.jsonl",
        [{"case_id": "lit-1", "output": "first"}, {"case_id": "lit-2", "output": "second"}],
    )
    assert cli("import", "nonliteral", str(cases), db=db_path).code == 0
    made = cli("import-generations", str(gens), "--run", "r", "--suite", "lit", db=db_path)
    assert made.code == 0
    for person, key in (keys or {}).items():
        assert cli("keys", "add", person, f"{key}.pub", db=db_path).code == 0

    use_signer(signer)  # as copyaudit.cli.main does: events are appended directly here

    def by(person: str) -> str:
        choose_key(keys[person] if keys else None)
        return person

    with Store(db_path) as store:
        kept = append_label(
            store, generation_id=1, annotator=by("ann"), target="event", item_index=0, label="yes"
        )
        append_label(
            store,
            generation_id=1,
            annotator=by("ann"),
            target="event",
            item_index=1,
            label="no",
            note="n",
        )
        retract_label(store, label_uuid=kept, annotator=by("ann"))
        append_label(
            store, generation_id=2, annotator=by("bob"), target="event", item_index=0, label="yes"
        )
        first = append_review(store, generation_id=1, reviewer=by("rev"), status="escalated")
        append_review(store, generation_id=1, reviewer="rev", status="cleared", undoes=first)
        append_review(store, generation_id=2, reviewer="rev", status="cleared", note="ok")
    choose_key(None)
    return db_path


@pytest.fixture
def audited(tmp_path: Path, cli, db_path: Path) -> Path:
    return _build(tmp_path, cli, db_path)


@pytest.fixture
def people_keys(tmp_path: Path, cli) -> Iterator[dict[str, Path]]:
    """A key pair per person (private key paths); mallory's is trusted by no database."""
    made = {}
    for person in ("ann", "bob", "rev", "mallory"):
        made[person] = tmp_path / f"{person}.key"
        assert cli("anchor", "--new-key", str(made[person])).code == 0
    yield made
    choose_key(None)


# --- the attacker's tools ---------------------------------------------------------------


def _careful(tamper: Tamper) -> Attack:
    """The edit, with the append-only guards dropped and then put back exactly as
    copyaudit created them."""

    def attack(path: Path) -> None:
        conn = sqlite3.connect(path)
        conn.row_factory = sqlite3.Row
        for name in GUARDS:
            conn.execute(f"DROP TRIGGER {name}")
        tamper(conn)
        for name in GUARDS:
            conn.execute(event_trigger_sql()[name])
        conn.commit()
        conn.close()

    return attack


def _drop(name: str) -> Attack:
    def attack(path: Path) -> None:
        conn = sqlite3.connect(path)
        conn.execute(f"DROP TRIGGER {name}")
        conn.commit()
        conn.close()

    return attack


def _rows(conn: sqlite3.Connection, table: str) -> list[dict[str, Any]]:
    return [dict(r) for r in conn.execute(f"SELECT * FROM {table} ORDER BY seq")]


def _rechain(conn: sqlite3.Connection, table: str, rows: list[dict[str, Any]]) -> None:
    """Replace the table's events with `rows`, renumbered and every hash recomputed."""
    conn.execute(f"DELETE FROM {table}")
    prev = ""
    for seq, row in enumerate(rows, start=1):
        row.update(seq=seq, prev_hash=prev)
        row["hash"] = prev = event_hash(table, row, prev)
        marks = ", ".join("?" for _ in row)
        conn.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({marks})", list(row.values()))


def _fix_heads(conn: sqlite3.Connection) -> None:
    """Also make the head records agree with what is left (the careful attacker)."""
    conn.execute("DELETE FROM event_heads")
    for table in ("labels", "reviews"):
        conn.execute(
            f"INSERT INTO event_heads SELECT '{table}', chain, MAX(seq), hash FROM {table} "
            "GROUP BY chain"
        )


def _edit(table: str, column: str) -> Tamper:
    """Change one column of the second event of `table`."""

    def tamper(conn: sqlite3.Connection) -> None:
        row = _rows(conn, table)[1]
        value = row[column]
        if column == "generation_id":
            new: Any = 2 if value == 1 else 1
        elif column == "seq":
            new = 99
        elif isinstance(value, int):
            new = value + 1
        elif column == "chain":
            new = "f" * 32
        else:
            new = "x" if value is None else value[:-1] + ("0" if value[-1:] != "0" else "1")
        conn.execute(f"UPDATE {table} SET {column} = ? WHERE uuid = ?", (new, row["uuid"]))

    return tamper


def _delete(which: str) -> Tamper:
    def tamper(conn: sqlite3.Connection) -> None:
        seqs = {"last": "(SELECT MAX(seq) FROM labels)", "middle": "2", "all": "seq"}
        conn.execute(f"DELETE FROM labels WHERE seq = {seqs[which]}")

    return tamper


def _delete_last_and_head(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM labels WHERE seq = (SELECT MAX(seq) FROM labels)")
    _fix_heads(conn)


def _delete_all_and_head(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM labels")
    _fix_heads(conn)


def _reorder(conn: sqlite3.Connection) -> None:
    """Swap the first two events, relinking and rehashing the chain."""
    rows = _rows(conn, "labels")
    rows[0], rows[1] = rows[1], rows[0]
    _rechain(conn, "labels", rows)


def _recompute(conn: sqlite3.Connection) -> None:
    """Change a label's value and recompute every hash after it."""
    rows = _rows(conn, "labels")
    rows[0]["label"] = "no"
    _rechain(conn, "labels", rows)  # the head record keeps the old head hash


def _recompute_and_head(conn: sqlite3.Connection) -> None:
    rows = _rows(conn, "labels")
    rows[0]["label"] = "no"
    _rechain(conn, "labels", rows)
    _fix_heads(conn)


def _maybe_and_head(conn: sqlite3.Connection) -> None:
    """A label value no write accepts ('maybe'), every hash and head record consistent:
    only the rules every write obeys (db.event_rules, as merge applies them) catch it."""
    rows = _rows(conn, "labels")
    rows[0]["label"] = "maybe"
    _rechain(conn, "labels", rows)
    _fix_heads(conn)


def _rewrite(conn: sqlite3.Connection) -> None:
    """A whole new chain of other labels, same chain id, hashes and head record consistent."""
    rows = _rows(conn, "labels")
    for row in rows:
        row.update(annotator="mallory", label="no" if row["label"] else None)
    _rechain(conn, "labels", rows)
    _fix_heads(conn)


def _move_generation(conn: sqlite3.Connection) -> None:
    """Move a label to the other generation, key and id both (the key is hashed)."""
    row = _rows(conn, "labels")[0]
    conn.execute(
        "UPDATE labels SET generation_id = 2, generation_key = 'r/lit-2/1' WHERE uuid = ?",
        (row["uuid"],),
    )


def _edit_output(conn: sqlite3.Connection) -> None:
    conn.execute("UPDATE generations SET output = 'something else' WHERE id = 1")


# Every column of each event table (test_every_column_is_tampered holds it to the schema).
EDITED_COLUMNS = {
    "labels": [
        "uuid",
        "chain",
        "seq",
        "generation_id",
        "generation_key",
        "created_at",
        "annotator",
        "target",
        "item_index",
        "action",
        "label",
        "note",
        "supersedes",
        "content_hash",
        "prev_hash",
        "hash",
    ],
    "reviews": [
        "uuid",
        "chain",
        "seq",
        "generation_id",
        "generation_key",
        "created_at",
        "reviewer",
        "status",
        "note",
        "undoes",
        "content_hash",
        "prev_hash",
        "hash",
    ],
}


def _kinds() -> list[tuple[str, Attack, str | None, str]]:
    """(kind, tamper, what `verify` says without an anchor (None: passes), with one)."""
    kinds: list[tuple[str, Attack, str | None, str]] = []
    for table, names in EDITED_COLUMNS.items():
        for column in names:
            said = "generation moved" if column == "generation_id" else "chain broken"
            kinds.append((f"edit {table}.{column}", _careful(_edit(table, column)), said, said))
    kinds += [
        ("delete last", _careful(_delete("last")), "the last events were deleted", "truncated"),
        ("delete all", _careful(_delete("all")), "all 4 events are gone", "now has no events"),
        ("delete middle", _careful(_delete("middle")), "deleted?", "chain broken"),
        ("delete last + head record", _careful(_delete_last_and_head), None, "truncated"),
        ("delete all + head record", _careful(_delete_all_and_head), None, "now has no events"),
        ("reorder", _careful(_reorder), "head mismatch", "rewritten, reordered"),
        ("recompute hashes", _careful(_recompute), "head mismatch", "hashes recomputed"),
        (
            "recompute hashes + head record",
            _careful(_recompute_and_head),
            None,
            "hashes recomputed",
        ),
        ("rewrite chain", _careful(_rewrite), None, "rewritten"),
        (
            "label 'maybe' + hashes + head record",
            _careful(_maybe_and_head),
            "rule broken",
            "hashes recomputed",
        ),
        ("move to another generation", _careful(_move_generation), "chain broken", "chain broken"),
        (
            "edit labelled output",
            _careful(_edit_output),
            "output, case or judgments",
            "output or case of a generation",
        ),
    ]
    for name in event_trigger_sql():
        kinds.append((f"drop trigger {name}", _drop(name), f"trigger missing: {name}", name))
    return kinds


KINDS = _kinds()


@pytest.mark.parametrize(("kind", "attack", "plain", "anchored"), KINDS, ids=[k[0] for k in KINDS])
def test_each_tampering_is_detected(
    audited: Path, cli, tmp_path: Path, kind: str, attack: Attack, plain: str | None, anchored: str
) -> None:
    anchor = tmp_path / "anchor.json"
    assert cli("anchor", "-o", str(anchor)).code == 0
    assert cli("verify", "--against", str(anchor)).code == 0
    attack(audited)
    without = cli("verify")
    if plain is None:  # the documented limit: only an anchor catches this kind
        assert without.code == 0, without.err
    else:
        assert without.code == 1 and plain in without.err, without.err
    against = cli("verify", "--against", str(anchor))
    assert against.code == 1 and anchored in against.err, against.err


def test_tamper_counts(capsys: pytest.CaptureFixture[str]) -> None:
    """The counts the issue asks for, printed (-s) from the table above."""
    plain = sum(k[2] is not None for k in KINDS)
    with capsys.disabled():
        print(
            f"\ntamper kinds tried {len(KINDS)}: detected without an anchor {plain}, "
            f"with an anchor {len(KINDS)}"
        )
    assert plain < len(KINDS)  # some kinds need the anchor, and the table says which


def test_an_untampered_database_extends_its_anchor_after_more_events(
    audited: Path, cli, tmp_path: Path
) -> None:
    anchor = tmp_path / "anchor.json"
    assert cli("anchor", "-o", str(anchor)).code == 0
    with Store(audited) as store:
        append_label(
            store, generation_id=2, annotator="ann", target="event", item_index=2, label="no"
        )
    result = cli("verify", "--against", str(anchor))
    assert result.code == 0, result.err
    assert "extends anchor" in result.out and "anchor not signed" in result.out


def test_an_anchor_of_another_database_is_refused(
    audited: Path, cli, tmp_path: Path, db_path: Path
) -> None:
    other = tmp_path / "other.db"
    anchor = tmp_path / "anchor.json"
    assert cli("anchor", "-o", str(anchor), db=other).code == 0
    result = cli("verify", "--against", str(anchor))
    assert result.code == 1 and "anchor of another database" in result.err


def test_signed_anchor(audited: Path, cli, tmp_path: Path) -> None:
    key, other = tmp_path / "k", tmp_path / "other"
    assert cli("anchor", "--new-key", str(key)).code == 0
    assert cli("anchor", "--new-key", str(other)).code == 0
    assert key.stat().st_mode & 0o077 == 0
    signed = tmp_path / "signed.json"
    assert cli("anchor", "-o", str(signed), "--sign-key", str(key)).code == 0
    good = cli("verify", "--against", str(signed), "--public-key", f"{key}.pub")
    assert good.code == 0 and "signature valid, by the trusted key" in good.out
    wrong = cli("verify", "--against", str(signed), "--public-key", f"{other}.pub")
    assert wrong.code == 1 and "not by the key in" in wrong.err
    forged = json.loads(signed.read_text())
    forged["heads"][0]["seq"] -= 1  # an attacker who truncated edits the anchor to match
    signed.write_text(json.dumps(forged))
    altered = cli("verify", "--against", str(signed))
    assert altered.code == 1 and "does not match its content" in altered.err
    unsigned = tmp_path / "unsigned.json"
    assert cli("anchor", "-o", str(unsigned)).code == 0
    required = cli("verify", "--against", str(unsigned), "--public-key", f"{key}.pub")
    assert required.code == 1 and "not signed" in required.err


def test_the_sign_key_setting_signs_by_default(audited: Path, cli, tmp_path: Path) -> None:
    from copyaudit.anchors import SIGN_KEY_SETTING
    from copyaudit.identity import remember_setting

    key = tmp_path / "k"
    assert cli("anchor", "--new-key", str(key)).code == 0
    remember_setting(SIGN_KEY_SETTING, str(key))
    anchor = json.loads(cli("anchor").out)
    assert anchor["signature"]["algorithm"] == "ed25519"


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("{", "not a JSON anchor"),
        ('{"a": 1}', "no anchor"),
        (
            '{"format": "copyaudit-anchor/1", "database": {"origin": "x"}, '
            '"heads": [{"table": "labels"}]}',
            "heads[0] must have exactly",
        ),
    ],
)
def test_a_bad_anchor_file_is_a_clean_error(
    audited: Path, cli, tmp_path: Path, content: str, said: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    result = cli("verify", "--against", str(bad))
    assert result.code == 2 and said in result.err and str(bad) in result.err


def test_verify_full_runs_integrity_check(audited: Path, cli) -> None:
    assert "quick_check ok" in cli("verify").out
    assert "integrity_check ok" in cli("verify", "--full").out


def test_content_hash_is_hashed_only_when_set() -> None:
    event = {"uuid": "u", "chain": "c", "seq": 1, "generation_key": "r/c/1"}
    plain = event_hash("labels", event, "")
    assert event_hash("labels", {**event, "content_hash": None}, "") == plain
    assert event_hash("labels", {**event, "content_hash": "abc"}, "") != plain


@pytest.mark.parametrize(
    "command",
    [
        ("report", "r", "--format", "json"),
        ("report", "r", "--format", "md"),
        ("report", "r", "--format", "html"),
        ("dossier", "r/lit-1/1", "--format", "md"),
        ("dossier", "r/lit-1/1", "--format", "html"),
        ("compare", "r", "--format", "json"),
        ("compare", "r", "--format", "md"),
        ("compare", "r", "--format", "html"),
        ("agreement", "--format", "json"),
        ("agreement", "--format", "md"),
    ],
    ids=lambda c: f"{c[0]}-{c[-1]}",
)
def test_reports_and_dossiers_embed_an_anchor_verify_reads(
    audited: Path, cli, tmp_path: Path, command: tuple[str, ...]
) -> None:
    out = tmp_path / f"doc.{command[-1]}"
    if command[0] == "agreement":  # it writes to standard output only
        made = cli(*command)
        out.write_text(made.out, encoding="utf-8")
    else:
        made = cli(*command, "-o", str(out))
    assert made.code == 0, made.err
    assert "copyaudit-anchor/1" in out.read_text()
    kept = cli("verify", "--against", str(out))
    assert kept.code == 0 and "extends anchor" in kept.out, kept.err
    _careful(_delete("last"))(audited)
    assert "truncated" in cli("verify", "--against", str(out)).err


def test_the_head_records_migration_keeps_old_events_verifying(audited: Path, cli) -> None:
    """A database from before the head records: the migration fills them from the events
    there, which keep their hashes and verify; deleting the last one is then caught."""
    import sqlite_utils

    from db.migrations import migrate_event_heads

    conn = sqlite3.connect(audited)
    for table in ("labels", "reviews"):
        conn.execute(f"DROP TRIGGER {table}_head")
    conn.execute("DROP TABLE event_heads")
    before = conn.execute("SELECT uuid, hash FROM labels ORDER BY seq").fetchall()
    migrate_event_heads(sqlite_utils.Database(conn))
    conn.commit()
    assert conn.execute("SELECT uuid, hash FROM labels ORDER BY seq").fetchall() == before
    conn.close()
    assert cli("verify").code == 0
    _careful(_delete("last"))(audited)
    assert "the last events were deleted" in cli("verify").err


def test_merged_events_keep_their_binding(audited: Path, cli, tmp_path: Path) -> None:
    """merge renumbers generation_id (not hashed): the merged database still verifies."""
    other = tmp_path / "other.db"
    (tmp_path / "o").mkdir()
    cases = write_jsonl(tmp_path / "o" / "lit.jsonl", [_case(2), _case(1)])
    gens = write_jsonl(
        tmp_path / "g2.jsonl",
        [{"case_id": "lit-2", "output": "second"}, {"case_id": "lit-1", "output": "first"}],
    )
    assert cli("import", "nonliteral", str(cases), db=other).code == 0
    assert cli("import-generations", str(gens), "--run", "r", "--suite", "lit", db=other).code == 0
    merged = cli("merge", str(audited), db=other)
    assert merged.code == 0, merged.err
    with Store(other) as store:
        ids = {r["generation_key"]: r["generation_id"] for r in store.query("SELECT * FROM labels")}
    assert ids["r/lit-1/1"] != 1  # renumbered by the merge
    assert cli("verify", db=other).code == 0


def test_every_column_is_tampered(audited: Path) -> None:
    """A column added to an event table (content_hash, say) must join the edits above."""
    conn = sqlite3.connect(audited)
    for table, names in EDITED_COLUMNS.items():
        schema = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
        assert sorted(schema) == sorted(names), table
    conn.close()


def test_the_documents_own_anchor_wins_over_one_quoted_from_output(tmp_path: Path) -> None:
    """Model output quoted earlier in a Markdown dossier cannot stand in for its anchor."""
    from copyaudit.anchors import anchor_markdown, make_anchor, read_anchor

    fake = make_anchor("f" * 32, "x.db", [], {"generations": 0, "digest": ""})
    real = make_anchor("a" * 32, "x.db", [], {"generations": 0, "digest": ""})
    text = "\n".join(["## Output", *anchor_markdown(fake), "## Integrity", *anchor_markdown(real)])
    (tmp_path / "d.md").write_text(text)
    assert read_anchor(tmp_path / "d.md")["database"]["origin"] == "a" * 32


def test_an_anchors_bidi_controls_are_shown_escaped_and_read_back(tmp_path: Path) -> None:
    """A chain id or path holding a bidirectional control (Trojan Source) is embedded as
    its JSON escape: no control reaches the Markdown, and the anchor reads back the same."""
    from copyaudit.anchors import anchor_markdown, make_anchor, read_anchor
    from copyaudit.untrusted import BIDI_CONTROLS

    heads = [{"table": "labels", "chain": "ann\u202egpj.exe", "seq": 1, "hash": "h"}]
    anchor = make_anchor("a" * 32, "audit\u2066.db", heads, {"generations": 0, "digest": ""})
    text = "\n".join(anchor_markdown(anchor))
    assert not any(chr(code) in text for code in BIDI_CONTROLS)
    assert "ann\\u202egpj.exe" in text
    (tmp_path / "d.md").write_text(text, encoding="utf-8")
    assert read_anchor(tmp_path / "d.md") == anchor


# --- everything a reported figure depends on (issue 33): the run digests -------------

_FIRST = "WHERE id = (SELECT MIN(id) FROM judgments)"
_VALUE = f"UPDATE judgments SET value = COALESCE(value, 0) + 1 {_FIRST}"
_VERDICT = f"UPDATE judgments SET flagged = 1 - COALESCE(flagged, 0) {_FIRST}"
_EVIDENCE = f"UPDATE judgments SET evidence = '[]' {_FIRST}"
_DELETE = f"DELETE FROM judgments {_FIRST}"
_CONFIG = "UPDATE runs SET config = json_set(config, '$.limit', 99)"
_OUTPUT = "UPDATE generations SET output = 'forged' WHERE id = 3"  # unlabelled
_CASE = "UPDATE cases SET payload = json_set(payload, '$.title', 'x') WHERE id = 3"
_GENERATION = "DELETE FROM judgments WHERE generation_id = 3; DELETE FROM generations WHERE id = 3"
# (kind, SQL, whether the attacker then recomputes every stored digest: db.run_digests.fill)
CONTENT_KINDS: list[tuple[str, str, bool]] = [
    ("edit a judgment's value", _VALUE, False),
    ("edit a judgment's verdict (flagged)", _VERDICT, False),
    ("edit a judgment's evidence", _EVIDENCE, False),
    ("delete a judgment", _DELETE, False),
    ("edit runs.config", _CONFIG, False),
    ("edit an unlabelled generation's output", _OUTPUT, False),
    ("edit an unlabelled generation's case", _CASE, False),
    ("delete an unlabelled generation", _GENERATION, False),
    ("edit a judgment's value + digests", _VALUE, True),
    ("delete a judgment + digests", _DELETE, True),
    ("edit runs.config + digests", _CONFIG, True),
]


@pytest.fixture
def judged(audited: Path, cli, tmp_path: Path) -> tuple[Path, Path]:
    """The audited database with a third, unlabelled generation, judged; its anchor."""
    extra = write_jsonl(tmp_path / "lit3.jsonl", [_case(3)])
    assert cli("import", "nonliteral", str(extra), "--suite", "lit").code == 0
    gens = write_jsonl(tmp_path / "g3.jsonl", [{"case_id": "lit-3", "output": "third"}])
    assert cli("import-generations", str(gens), "--run", "r", "--suite", "lit").code == 0
    judged = cli("judge", "r", "--judges", "verbatim,characters")
    assert judged.code == 0, judged.err
    anchor = tmp_path / "anchor.json"
    assert cli("anchor", "-o", str(anchor)).code == 0
    assert cli("verify", "--against", str(anchor)).code == 0
    return audited, anchor


def _apply(path: Path, sql: str, recompute: bool) -> int:
    """Run the attacker's SQL (no copyaudit code); with `recompute`, then rewrite every
    stored digest to match. Returns the rows the edit changed."""
    from db.run_digests import fill

    conn = sqlite3.connect(path)
    changed = 0
    for statement in sql.split(";"):
        changed += conn.execute(statement).rowcount
    if recompute:
        fill(conn)
    conn.commit()
    conn.close()
    return changed


@pytest.mark.parametrize(
    ("kind", "sql", "recompute"), CONTENT_KINDS, ids=[k[0] for k in CONTENT_KINDS]
)
def test_each_content_edit_is_detected(
    judged: tuple[Path, Path], cli, kind: str, sql: str, recompute: bool
) -> None:
    """Without recomputed digests `verify` names the run (and the generation); with them
    only the anchor, which holds the run digests, catches the edit."""
    path, anchor = judged
    assert _apply(path, sql, recompute) >= 1, kind  # the edit hit a row
    plain = cli("verify")
    if recompute:
        assert plain.code == 0, plain.err
    else:
        assert plain.code == 1 and "run r:" in plain.err, plain.err
    against = cli("verify", "--against", str(anchor))
    assert against.code == 1 and "run r:" in against.err, against.err


def test_the_census_of_content_tampering(
    judged: tuple[Path, Path], cli, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each kind on a fresh copy of the judged database: how many `verify` catches alone,
    with the anchor, and with signatures (none: human events only are signed), printed
    (-s) and pinned."""
    path, anchor = judged
    pristine = tmp_path / "pristine.db"
    Store(path).close()
    pristine.write_bytes(path.read_bytes())
    rows = []
    for kind, sql, recompute in CONTENT_KINDS:
        path.write_bytes(pristine.read_bytes())
        assert _apply(path, sql, recompute) >= 1, kind
        plain = cli("verify").code != 0
        anchored = cli("verify", "--against", str(anchor)).code != 0
        rows.append((kind, plain, anchored))
    caught = sum(r[1] for r in rows)
    anchored = sum(r[2] for r in rows)
    with capsys.disabled():
        print(f"\n{'kind':40} verify  anchor")
        for kind, plain, with_anchor in rows:
            print(f"{kind:40} {'yes' if plain else 'no':7} {'yes' if with_anchor else 'no'}")
        print(
            f"content kinds tried {len(rows)}: detected by verify {caught}, "
            f"with an anchor {anchored}, with signatures n/a (machine-written: not signed)"
        )
    assert (len(rows), caught, anchored) == (11, 8, 11)


# --- appended events, and what signatures add (issue 33) --------------------------------


def _append(table: str, person: str, forger: str | None = None) -> Callable[..., None]:
    def attack(path: Path, keys: dict[str, Path]) -> None:
        append_behind(path, table, person, signer_of(keys[forger]) if forger else None)

    return attack


def _rewritten(path: Path, keys: dict[str, Path]) -> None:
    _careful(_rewrite)(path)


# (kind, attack(path, keys)): each keeps every hash, link and head record consistent
APPEND_KINDS: list[tuple[str, Callable[..., None]]] = [
    ("append a label (hash recomputed)", _append("labels", "ann")),
    ("append a review (hash recomputed)", _append("reviews", "rev")),
    ("append a label signed by the forger's key", _append("labels", "ann", "mallory")),
    ("append a label signed by another person's key", _append("labels", "ann", "bob")),
    ("rewrite the label chain (hashes + head record)", _rewritten),
]


def test_the_census_of_appended_events(
    tmp_path: Path, cli, db_path: Path, people_keys: dict[str, Path], capsys
) -> None:
    """Each kind on a copy of the database built without keys (`verify`, `verify
    --against` an anchor made before) and on one whose people signed with trusted keys
    (`verify`): printed (-s) with the content kinds' counts, and pinned."""
    trusted = {p: k for p, k in people_keys.items() if p != "mallory"}
    plain_db = _build(tmp_path / "plain", cli, tmp_path / "plain.db")
    signed_db = _build(tmp_path / "signed", cli, tmp_path / "signed.db", trusted)
    anchor = tmp_path / "anchor.json"
    assert cli("anchor", "-o", str(anchor), db=plain_db).code == 0
    pristine = {p: p.read_bytes() for p in (plain_db, signed_db)}
    rows = []
    for kind, attack in APPEND_KINDS:
        for path, data in pristine.items():
            path.write_bytes(data)
            attack(path, people_keys)
        plain = cli("verify", db=plain_db).code != 0
        anchored = cli("verify", "--against", str(anchor), db=plain_db).code != 0
        signed = cli("verify", db=signed_db)
        rows.append((kind, plain, anchored, signed.code != 0))
    content = (len(CONTENT_KINDS), 8, len(CONTENT_KINDS))  # test_the_census_of_content_tampering
    with capsys.disabled():
        print(f"\n{'kind':48} verify  anchor  signed")
        for kind, *caught in rows:
            print(f"{kind:48} " + " ".join(f"{'yes' if c else 'no':7}" for c in caught))
        print(
            f"appended-event kinds tried {len(rows)}: detected by verify "
            f"{sum(r[1] for r in rows)}, with an anchor {sum(r[2] for r in rows)}, "
            f"with signatures {sum(r[3] for r in rows)}; content kinds tried {content[0]}: "
            f"verify {content[1]}, anchor {content[2]}, signatures n/a"
        )
    # a signature by a key the database does not trust is a finding even without keys
    assert [r[1:] for r in rows] == [
        (False, False, True),
        (False, False, True),
        (True, True, True),
        (True, True, True),
        (False, True, True),
    ]


# --- DE-COP runs: their figures come from scores, not generations (issue 33) ----------

_DECOP_RUN = "bt-decop-ChatGPT-published"
_SCORE = "WHERE id = (SELECT MIN(id) FROM decop_scores)"
DECOP_KINDS: list[tuple[str, str]] = [
    ("edit a DE-COP score's probabilities", f"UPDATE decop_scores SET probs = '[]' {_SCORE}"),
    ("edit a DE-COP score's answers", f"UPDATE decop_scores SET answers = '[0]' {_SCORE}"),
    ("delete a DE-COP score", f"DELETE FROM decop_scores {_SCORE}"),
    (
        "edit a scored passage",
        "UPDATE cases SET payload = json_set(payload, '$.label', 0) "
        "WHERE id = (SELECT case_pk FROM decop_scores ORDER BY id LIMIT 1)",
    ),
    (
        "add a label calibration",
        "INSERT INTO decop_calibrations (run_id, works, delta, n_prompts, created_at) "
        "SELECT id, '[]', '[0.1, 0, 0, -0.1]', 1, '2026-01-01' FROM runs",
    ),
]


@pytest.fixture
def decop_scored(tmp_path: Path, cli, db_path: Path) -> tuple[Path, Path]:
    """A DE-COP run imported from the authors' workbooks (tests.test_decop_results), anchored."""
    from tests.test_decop_results import results_dir, write_suite

    suite = cli("import", "decop", str(write_suite(tmp_path / "bt.csv")), "--suite", "bt")
    assert suite.code == 0, suite.err
    imported = cli("import", "decop-results", str(results_dir(tmp_path)), "--model", "chatgpt")
    assert imported.code == 0, imported.err
    anchor = tmp_path / "anchor.json"
    assert cli("anchor", "-o", str(anchor)).code == 0
    assert cli("verify", "--against", str(anchor)).code == 0
    return db_path, anchor


@pytest.mark.parametrize(("kind", "sql"), DECOP_KINDS, ids=[k[0] for k in DECOP_KINDS])
def test_each_decop_edit_is_detected(
    decop_scored: tuple[Path, Path], cli, kind: str, sql: str
) -> None:
    """An edit of a DE-COP run's scores, passages or calibration behind the tool is named
    by `verify` (the run digest), and against the anchor also after every stored digest
    was recomputed to match."""
    path, anchor = decop_scored
    assert _apply(path, sql, recompute=False) >= 1, kind
    plain = cli("verify")
    assert plain.code == 1 and f"run {_DECOP_RUN}:" in plain.err, plain.err
    assert "DE-COP scores" in plain.err
    _apply(path, "SELECT 1", recompute=True)
    assert cli("verify").code == 0
    against = cli("verify", "--against", str(anchor))
    assert against.code == 1 and _DECOP_RUN in against.err, against.err

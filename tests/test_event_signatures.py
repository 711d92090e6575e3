"""Events bound to people (issue 33): label and review events signed with the person's
ed25519 key, checked by `verify` against the keys the database trusts; an event appended
behind the tool with a recomputed hash is caught when its person has a key."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from copyaudit.sign_key import SIGN_KEY_ENV, choose_key, signer
from copyaudit.verification.label_files import HASHED_FROM_FILE
from db import Store
from db.events import HASHED_FIELDS, append_label, append_review, event_hash
from db.signatures import use_signer
from tests.conftest import database_fingerprint, write_jsonl
from tests.event_forgery import append_behind, signer_of
from tests.factories import nonliteral_record

EVENTS = ["Mira plants a glass seed.", "The orchard grows overnight."]
PEOPLE = ("ann", "rev", "mallory")


@pytest.fixture(autouse=True)
def _no_chosen_key() -> Iterator[None]:
    use_signer(signer)  # as copyaudit.cli.main does: these tests append events directly
    yield
    choose_key(None)


@pytest.fixture
def keys(tmp_path: Path, cli) -> dict[str, Path]:
    """A key pair per person (private key paths); ann's and rev's are trusted."""
    made = {}
    for person in PEOPLE:
        made[person] = tmp_path / f"{person}.key"
        assert cli("anchor", "--new-key", str(made[person])).code == 0
    for person in ("ann", "rev"):
        added = cli("keys", "add", person, f"{made[person]}.pub")
        assert added.code == 0 and f"as '{person}'" in added.out, added.err
    return made


@pytest.fixture
def signed(tmp_path: Path, cli, db_path: Path, keys: dict[str, Path]) -> Path:
    """One generation; ann's label and rev's decision signed, one older-style unsigned
    label by bob (who has no key)."""
    cases = write_jsonl(
        tmp_path / "lit.jsonl", [nonliteral_record(1, id="lit-1", reference_events=EVENTS)]
    )
    gens = write_jsonl(tmp_path / "g.jsonl", [{"case_id": "lit-1", "output": "first"}])
    assert cli("import", "nonliteral", str(cases)).code == 0
    assert cli("import-generations", str(gens), "--run", "r", "--suite", "lit").code == 0
    with Store(db_path) as store:
        choose_key(keys["ann"])
        append_label(
            store, generation_id=1, annotator="ann", target="event", item_index=0, label="yes"
        )
        choose_key(keys["rev"])
        append_review(store, generation_id=1, reviewer="rev", status="cleared")
        choose_key(None)
        append_label(
            store, generation_id=1, annotator="bob", target="event", item_index=1, label="no"
        )
    return db_path


def test_signed_events_verify_and_are_counted(signed: Path, cli) -> None:
    result = cli("verify")
    assert result.code == 0, result.err
    assert "2 signed by a trusted key, 1 unsigned" in result.out
    listed = cli("keys", "list").out
    assert "ann" in listed and "1 signed event(s)" in listed


@pytest.mark.parametrize(
    ("table", "person", "forger", "said"),
    [
        ("labels", "ann", None, "signature missing"),
        ("reviews", "rev", None, "signature missing"),
        ("labels", "ann", "mallory", "signature untrusted"),
        ("labels", "ann", "rev", "signature of another person"),
    ],
)
def test_a_forged_appended_event_is_detected(
    signed: Path, cli, keys: dict[str, Path], table: str, person: str, forger: str | None, said: str
) -> None:
    assert cli("verify").code == 0
    append_behind(signed, table, person, None if forger is None else signer_of(keys[forger]))
    result = cli("verify")
    assert result.code == 1 and said in result.err, result.err


def test_a_replayed_signature_is_detected(signed: Path, cli) -> None:
    """ann's real signature copied onto a forged event of hers: not over its hash."""
    conn = sqlite3.connect(signed)
    fingerprint, signature = conn.execute(
        "SELECT fingerprint, signature FROM event_signatures WHERE tbl = 'labels'"
    ).fetchone()
    conn.close()
    append_behind(signed, "labels", "ann", lambda _: (fingerprint, signature))
    result = cli("verify")
    assert result.code == 1 and "signature forged" in result.err, result.err


def test_an_appended_event_by_a_person_without_a_key_is_only_unsigned(signed: Path, cli) -> None:
    """The limit: bob has no key, so a forged event of his is reported as unsigned only."""
    append_behind(signed, "labels", "bob")
    result = cli("verify")
    assert result.code == 0 and "2 signed by a trusted key, 2 unsigned" in result.out


def test_a_key_of_another_person_is_refused_at_writing(signed: Path, keys: dict[str, Path]) -> None:
    from copyaudit.errors import UserError

    choose_key(keys["rev"])
    with Store(signed) as store, pytest.raises(UserError, match="registered to 'rev', not 'ann'"):
        append_label(
            store, generation_id=1, annotator="ann", target="event", item_index=1, label="no"
        )
        assert store.scalar("SELECT COUNT(*) FROM labels") == 2


def test_the_key_is_named_by_the_environment_and_the_global_option(
    signed: Path, cli, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SIGN_KEY_ENV, str(keys["rev"]))
    made = cli("review", "set", "r/lit-1/1", "escalated", "--reviewer", "rev")
    assert made.code == 0, made.err
    monkeypatch.delenv(SIGN_KEY_ENV)
    flag = cli(
        "--sign-key",
        str(keys["rev"]),
        "review",
        "set",
        "r/lit-1/1",
        "cleared",
        "--reviewer",
        "rev",
    )
    assert flag.code == 0, flag.err
    result = cli("verify")
    assert result.code == 0 and "4 signed by a trusted key" in result.out, result.err


def test_keys_add_refuses_a_bad_file_and_a_second_add(
    tmp_path: Path, cli, keys: dict[str, Path]
) -> None:
    bad = tmp_path / "bad.pub"
    bad.write_text("not a key")
    refused = cli("keys", "add", "zoe", str(bad))
    assert refused.code == 2 and str(bad) in refused.err
    again = cli("keys", "add", "zoe", f"{keys['ann']}.pub")
    assert again.code == 2 and "already trusted, as 'ann'" in again.err


def test_merge_carries_signatures_and_their_keys(signed: Path, cli, tmp_path: Path) -> None:
    """Merged events keep their signatures (over their content, not their chain place)
    and the keys they were trusted under; a chain re-origined by the merge still verifies."""
    other = _second_database(tmp_path, cli, trust=None)
    merged = cli("merge", str(signed), db=other)
    assert merged.code == 0, merged.err
    result = cli("verify", db=other)
    assert result.code == 0 and "2 signed by a trusted key, 1 unsigned" in result.out, result.err
    append_behind(other, "labels", "ann")  # ann's key came with her events
    assert "signature missing" in cli("verify", db=other).err


def _second_database(tmp_path: Path, cli, *, trust: Path | None) -> Path:
    """The same case and generation in a new database; `trust`: ann's public key."""
    other = tmp_path / "second.db"
    (tmp_path / "s").mkdir()
    cases = write_jsonl(
        tmp_path / "s" / "lit.jsonl", [nonliteral_record(1, id="lit-1", reference_events=EVENTS)]
    )
    gens = write_jsonl(tmp_path / "s" / "g.jsonl", [{"case_id": "lit-1", "output": "first"}])
    assert cli("import", "nonliteral", str(cases), db=other).code == 0
    assert cli("import-generations", str(gens), "--run", "r", "--suite", "lit", db=other).code == 0
    if trust is not None:
        assert cli("keys", "add", "ann", str(trust), db=other).code == 0
    return other


def _exported(signed: Path, cli, tmp_path: Path) -> tuple[Path, list[dict]]:
    out = tmp_path / "labels.jsonl"
    assert cli("export", "labels", "--output", str(out), db=signed).code == 0
    return out, [json.loads(line) for line in out.read_text().splitlines()]


def test_an_exported_signature_is_checked_and_kept_by_import_labels(
    signed: Path, cli, tmp_path: Path, keys: dict[str, Path]
) -> None:
    path, records = _exported(signed, cli, tmp_path)
    by_annotator = {r["annotator"]: r for r in records}
    assert by_annotator["ann"]["signed_by"] and by_annotator["ann"]["signature"]
    assert by_annotator["bob"]["signed_by"] is None  # bob has no key: exported unsigned
    other = _second_database(tmp_path, cli, trust=Path(f"{keys['ann']}.pub"))
    imported = cli("import-labels", str(path), db=other)
    assert imported.code == 0, imported.err
    result = cli("verify", db=other)
    assert result.code == 0 and "1 signed by a trusted key, 1 unsigned" in result.out, result.err


@pytest.mark.parametrize(
    ("edit", "field", "said"),
    [
        ("untrusted", "signed_by", "is not trusted by this database"),
        ("stripped", "signature", "unsigned, but 'ann' has a key trusted here"),
        ("flipped", "signature", "not valid over the event as imported"),
        ("malformed", "signature", "both as lowercase hex"),
    ],
)
def test_import_labels_refuses_a_label_whose_signature_does_not_hold(
    signed: Path, cli, tmp_path: Path, keys: dict[str, Path], edit: str, field: str, said: str
) -> None:
    """Each refusal names the file, the line and the field, and leaves the database as it
    was: an untrusted key, a signature stripped from a label made after the person's key
    was trusted here, a label flipped with its hash recomputed (the signature kept), a
    signature that is not hex. (A label made before the key was trusted here may be
    unsigned: the limit db.signatures states.)"""
    trust = None if edit == "untrusted" else Path(f"{keys['ann']}.pub")
    other = _second_database(tmp_path, cli, trust=trust)
    with Store(signed) as store:  # made after the second database trusts ann's key
        choose_key(keys["ann"])
        append_label(
            store, generation_id=1, annotator="ann", target="event", item_index=1, label="yes"
        )
        choose_key(None)
    path, records = _exported(signed, cli, tmp_path)
    line = next(n for n, r in enumerate(records, 1) if r["annotator"] == "ann" and r["index"])
    record = records[line - 1]
    if edit == "stripped":
        record["signed_by"] = record["signature"] = None
    elif edit == "flipped":
        record["label"] = "no"
        hashed = {c: record[HASHED_FROM_FILE.get(c, c)] for c in HASHED_FIELDS["labels"]}
        record["hash"] = event_hash("labels", hashed, record["prev_hash"])
    elif edit == "malformed":
        record["signature"] = "not hex"
    write_jsonl(path, records)
    before = database_fingerprint(other)
    refused = cli("import-labels", str(path), db=other)
    assert refused.code == 2, refused.err
    if edit == "untrusted":  # ann's first label is the first the key is refused on
        line = next(n for n, r in enumerate(records, 1) if r["annotator"] == "ann")
    assert f"{path}: line {line}: field '{field}'" in refused.err and said in refused.err
    assert database_fingerprint(other) == before

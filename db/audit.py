"""`verify`'s checks beyond each chain's own links: the guarding triggers, the per-chain
head records, each event's generation binding, each event's values by the rules of
every write (db.event_rules), SQLite's own check of the file, and no bulk writer's
marker (db.bulk) left committed.

A chain alone cannot show that its last events (or all of them) were deleted: what is
left is still a valid chain. The head records (table `event_heads`, kept by a trigger on
every insert) can, unless they were edited too; an anchor (db.anchors) kept outside the
database catches that as well.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from db.columns import GENERATION_KEY_SQL
from db.connection import Store
from db.digest_audit import digest_problems
from db.event_rules import EventProblem, check_event
from db.events import HASHED_FIELDS, signed_digest, verify_chains
from db.migrations import event_trigger_sql
from db.run_digests import digest_trigger_sql
from db.signatures import audit_signatures


@dataclass(frozen=True)
class Finding:
    """One thing `verify` found wrong: which check, and what (naming table/event/trigger)."""

    check: str
    message: str

    def __str__(self) -> str:
        return f"{self.check}: {self.message}"


def _normal(sql: str) -> str:
    return re.sub(r"\s+", " ", sql).strip().rstrip(";").lower()


def trigger_problems(store: Store) -> list[Finding]:
    """Every guarding trigger by name: missing (dropped) or with a changed definition."""
    present = {
        row["name"]: row["sql"]
        for row in store.conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
    }
    found = []
    for name, sql in {**event_trigger_sql(), **digest_trigger_sql()}.items():
        if name not in present:
            found.append(Finding("trigger missing", f"{name} (dropped?)"))
        elif _normal(present[name]) != _normal(sql):
            found.append(Finding("trigger altered", f"{name} is not the one copyaudit created"))
    return found


def _actual_heads(store: Store, table: str) -> dict[str, tuple[int, str]]:
    return {
        row["chain"]: (int(row["seq"]), str(row["hash"]))
        for row in store.conn.execute(
            f"SELECT chain, MAX(seq) AS seq, hash FROM {table} GROUP BY chain"
        )
    }


def head_problems(store: Store) -> list[Finding]:
    """Each chain's last event against its head record: events deleted from the end (or
    all of them), a replaced head event, or a chain written with the trigger off."""
    tables = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master")}
    if "event_heads" not in tables:
        return [Finding("head records missing", "table event_heads was dropped")]
    found = []
    for table in HASHED_FIELDS:
        actual = _actual_heads(store, table)
        recorded = {
            row["chain"]: (int(row["seq"]), str(row["hash"]))
            for row in store.conn.execute(
                "SELECT chain, seq, hash FROM event_heads WHERE tbl = ?", (table,)
            )
        }
        for chain in sorted(set(actual) | set(recorded)):
            where = f"{table} chain {chain[:8]}"
            if chain not in actual:
                seq = recorded[chain][0]
                found.append(Finding("events deleted", f"{where}: all {seq} events are gone"))
            elif chain not in recorded:
                found.append(
                    Finding("head record missing", f"{where}: events written behind the tool")
                )
            elif actual[chain][0] < recorded[chain][0]:
                found.append(
                    Finding(
                        "events deleted",
                        f"{where}: ends at seq {actual[chain][0]}, its head record at seq "
                        f"{recorded[chain][0]} (the last events were deleted)",
                    )
                )
            elif actual[chain] != recorded[chain]:
                found.append(
                    Finding(
                        "head mismatch",
                        f"{where}: last event seq {actual[chain][0]} hash "
                        f"{actual[chain][1][:12]} is not the recorded head (seq "
                        f"{recorded[chain][0]}, hash {recorded[chain][1][:12]})",
                    )
                )
    return found


def binding_problems(store: Store) -> list[Finding]:
    """Events whose generation_id does not name the generation their (hashed)
    generation_key names (under its run's name now or a name it had before a rename): a
    label moved to another generation."""
    found = []
    for table in HASHED_FIELDS:
        rows = store.conn.execute(
            f"SELECT e.uuid, e.generation_id, e.generation_key, {GENERATION_KEY_SQL} AS actual "
            f"FROM {table} e LEFT JOIN generations g ON g.id = e.generation_id "
            "LEFT JOIN runs r ON r.id = g.run_id LEFT JOIN cases c ON c.id = g.case_pk "
            "WHERE (actual IS NULL OR actual != e.generation_key) AND NOT EXISTS ("
            # a key written before its run was renamed (db.migrations.migrate_run_names)
            "SELECT 1 FROM run_renames rr WHERE rr.run_id = g.run_id "
            "AND rr.old_name || '/' || c.case_id || '/' || g.template = e.generation_key) "
            "ORDER BY e.chain, e.seq"
        )
        for row in rows:
            found.append(
                Finding(
                    "generation moved",
                    f"{table} event {row['uuid']} was made on {row['generation_key']} but its "
                    f"generation_id {row['generation_id']} is {row['actual'] or 'no generation'}",
                )
            )
    return found


def rule_problems(store: Store) -> list[Finding]:
    """Events that break the rules every write obeys (db.event_rules: the rules `merge`
    and `import-labels` apply): a value such as label 'maybe' in a chain whose hashes are
    all valid was written behind the tool's back."""
    found = []
    for table in HASHED_FIELDS:
        for row in store.conn.execute(f"SELECT * FROM {table} ORDER BY chain, seq"):
            try:
                check_event(store, table, dict(row))
            except EventProblem as problem:
                found.append(Finding("rule broken", f"{table} event {row['uuid']}: {problem}"))
    return found


def sqlite_check(store: Store, *, full: bool = False) -> list[str]:
    """SQLite's check of the file: `quick_check` (O(N)), or with `full` `integrity_check`
    (also index contents: far slower on a large file). ['ok'] when sound."""
    pragma = "integrity_check" if full else "quick_check"
    return [row[0] for row in store.conn.execute(f"PRAGMA {pragma}")]


def audit_events(store: Store) -> list[Finding]:
    """The audit trail's checks (triggers, chains, head records, generation bindings,
    event values, run digests, event signatures), without SQLite's check of the whole
    file: what a report or dossier states."""
    found = trigger_problems(store)
    found += [Finding("chain broken", str(p)) for p in verify_chains(store)]
    found += head_problems(store)
    found += binding_problems(store)
    found += rule_problems(store)
    found += [Finding(check, message) for check, message in digest_problems(store)]
    found += [
        Finding(check, message)
        for check, message in audit_signatures(store, signed_digest).findings
    ]
    return found


def bulk_marker_problems(store: Store) -> list[Finding]:
    """A committed `bulk_writing` row (db.bulk: a writer's marker lives only inside its
    own transaction): the table's insert triggers stand aside for good, so its search
    index and totals no longer follow inserts."""
    return [
        Finding("bulk marker left", f"bulk_writing names {row[0]}: inserts into it skip "
                "their search index and totals (written behind the tool?)")
        for row in store.conn.execute("SELECT tbl FROM bulk_writing ORDER BY tbl")
    ]  # fmt: skip


def audit(store: Store, *, full: bool = False) -> list[Finding]:
    """Everything `verify` checks in the database itself; [] when all is intact."""
    checked = sqlite_check(store, full=full)
    found = [] if checked == ["ok"] else [Finding("sqlite", "; ".join(checked[:5]))]
    return found + audit_events(store) + bulk_marker_problems(store)

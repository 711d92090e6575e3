"""Resolving generation keys (copyaudit.generation_keys) to this database's generations,
including keys written before runs were renamed (a run name held a '/'): those go
through `run_renames`. A key that could mean two generations is an error naming both,
never a silent pick."""

from __future__ import annotations

import json
from collections.abc import Iterable

from copyaudit.errors import UserError
from copyaudit.generation_keys import split_key
from db.connection import Store


def _by_parts(store: Store, parts: list[tuple[str, str, str, int]]) -> dict[str, int]:
    """key -> generation id for (key, run, case_id, template) rows that exist."""
    if not parts:
        return {}
    rows = store.conn.execute(
        "SELECT json_extract(k.value, '$[0]') AS key, g.id FROM json_each(?) k "
        "JOIN runs r ON r.name = json_extract(k.value, '$[1]') "
        "JOIN cases c ON c.suite_id = r.suite_id AND c.case_id = json_extract(k.value, '$[2]') "
        "JOIN generations g ON g.run_id = r.id AND g.case_pk = c.id "
        "AND g.template = json_extract(k.value, '$[3]')",
        (json.dumps(parts),),
    )
    return {row["key"]: int(row["id"]) for row in rows}


def _renamed(store: Store, keys: Iterable[str]) -> list[tuple[str, str, str, int]]:
    """(key, new run name, case_id, template) for keys that begin with a renamed run's
    old name."""
    renames = store.conn.execute("SELECT old_name, new_name FROM run_renames").fetchall()
    out = []
    for key in keys:
        for old, new in renames:
            rest = key[len(old) + 1 :] if key.startswith(old + "/") else ""
            case_id, slash, template = rest.rpartition("/")
            if slash and case_id and template.isdigit():
                out.append((key, new, case_id, int(template)))
    return out


def generation_ids(store: Store, keys: Iterable[str]) -> dict[str, int]:
    """Generation id of each known key run/case_id/template (unknown keys are absent).
    UserError for a key that names two generations (an old key of a renamed run that
    also reads as a key of today's runs)."""
    wanted = sorted(set(keys))
    direct = [(k, *split) for k in wanted if (split := split_key(k)) is not None]
    found = _by_parts(store, direct)
    legacy: dict[str, list[int]] = {}
    for key, run, case_id, template in _renamed(store, wanted):
        gid = _by_parts(store, [(key, run, case_id, template)]).get(key)
        if gid is not None:
            legacy.setdefault(key, []).append(gid)
    for key, ids in legacy.items():
        meanings = sorted({*ids, *([found[key]] if key in found else [])})
        if len(meanings) > 1:
            raise UserError(
                f"generation key '{key}' is ambiguous: it names generations "
                f"{', '.join(map(str, meanings))} (written before a run whose name held "
                "'/' was renamed; see `copyaudit runs`)"
            )
        found[key] = meanings[0]
    return found


def renamed_to(store: Store, old_name: str) -> str | None:
    """The name a run called `old_name` has now, if a migration renamed it."""
    return store.scalar("SELECT new_name FROM run_renames WHERE old_name = ?", (old_name,))

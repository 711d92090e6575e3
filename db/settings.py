"""Remembered settings of this database, by scope (e.g. the launcher's last values).

Plain key/value text, not audit data: no hash chain; the newest value replaces the old.
"""

from __future__ import annotations

from collections.abc import Mapping

from db.clock import now
from db.connection import Store


def load_settings(store: Store, scope: str) -> dict[str, str]:
    """Every remembered key of `scope` with its value."""
    rows = store.conn.execute("SELECT key, value FROM settings WHERE scope = ?", (scope,))
    return {row["key"]: row["value"] for row in rows}


def save_settings(store: Store, scope: str, values: Mapping[str, str]) -> None:
    """Remember `values` under `scope` (other keys of the scope stay)."""
    stamp = now()
    with store.transaction():
        store.conn.executemany(
            "INSERT INTO settings (scope, key, value, updated_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value, "
            "updated_at = excluded.updated_at",
            [(scope, key, value, stamp) for key, value in values.items()],
        )

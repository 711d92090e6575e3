"""The anchor of a database as it is now (what `anchor` writes and every report embeds)."""

from __future__ import annotations

from typing import Any

from copyaudit.anchors import make_anchor
from db.anchors import current_heads, database_origin, labelled_content, run_digests
from db.connection import Store


def current_anchor(store: Store) -> dict[str, Any]:
    """An unsigned anchor of the database in `store` as it is now."""
    heads = current_heads(store)
    content = labelled_content(store, heads)
    origin = database_origin(store)
    return make_anchor(origin, str(store.path), heads, content, run_digests(store))

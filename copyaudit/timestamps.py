"""The one way a time is written for people: ISO 8601 in UTC, to the second, with a
Z (2026-11-28T06:30:00Z), in dossiers, reports and exports' human-facing text.

The store keeps its own precise form (db.clock: milliseconds and +00:00); JSON
documents keep what was stored, so hashes over them still check.
"""

from __future__ import annotations

from datetime import UTC, datetime

DASH = "—"  # no time recorded


def utc_text(value: str | None) -> str:
    """A stored ISO-8601 time as people read it; a time without an offset is taken as
    UTC (the store writes UTC); text that is not a time comes back as it is."""
    if not value:
        return DASH
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        return str(value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

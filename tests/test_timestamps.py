"""One way to write a time for people: ISO 8601 UTC to the second, with a Z."""

from __future__ import annotations

from copyaudit.timestamps import utc_text


def test_stored_times_read_as_iso_8601_utc_with_a_z() -> None:
    assert utc_text("2026-11-28T06:30:00.123+00:00") == "2026-11-28T06:30:00Z"  # db.clock
    assert utc_text("2026-11-28T08:30:00+02:00") == "2026-11-28T06:30:00Z"  # converted
    assert utc_text("2026-11-28 06:30:00") == "2026-11-28T06:30:00Z"  # no offset: UTC
    assert utc_text("2026-11-28T06:30:00Z") == "2026-11-28T06:30:00Z"
    assert utc_text(None) == utc_text("") == "—"
    assert utc_text("yesterday") == "yesterday"  # not a time: shown as it is

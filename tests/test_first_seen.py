"""The compact duplicate index (copyaudit.first_seen) behind every importer's duplicate
check: each key's first line, through the table's growth, and a key whose digest is 0."""

from __future__ import annotations

from copyaudit import first_seen
from copyaudit.first_seen import FirstSeen


def test_first_lines_survive_growth() -> None:
    seen = FirstSeen()
    keys = [f"case-{i}" for i in range(5_000)]  # several doublings from 1,024 slots
    assert all(seen.note(k, line) is None for line, k in enumerate(keys, start=2))
    assert len(seen) == len(keys)
    assert [seen.note(k, 99_999) for k in keys[::997]] == list(range(2, 5_002, 997))
    assert len(seen) == len(keys)  # a repeat is not noted again


def test_a_digest_of_zero_is_still_a_key(monkeypatch) -> None:
    monkeypatch.setattr(first_seen.hashlib, "blake2b", _Zero)
    seen = FirstSeen()
    assert seen.note("a", 3) is None
    assert seen.note("b", 4) == 3  # the same (zero) digest: reported, as documented


class _Zero:
    def __init__(self, *_args, **_kwargs) -> None:
        pass

    def digest(self) -> bytes:
        return bytes(8)

"""Where each key of a streamed file was first seen, in 12 to 24 bytes a key: an
open-addressing table of 64-bit digests and line numbers in two flat arrays, so that
the duplicate check of a million-record import costs ~24 MB where a dict of the ids
cost ~166 MB (measured with 16-character ids). Two different keys share a digest with
a chance of about n²/2^65 (3e-8 at a million keys): such a pair would be reported as a
duplicate."""

from __future__ import annotations

import hashlib
from array import array

_EMPTY = 0  # a slot's digest when it holds no key (a key whose digest is 0 is stored as 1)
_MIN_SLOTS = 1 << 10
_MAX_LINE = 2**32 - 1  # lines are kept in 32 bits; a later one is noted as this


def digest(key: str) -> int:
    value = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")
    return value or 1


class FirstSeen:
    """`note(key, line)`: the line `key` was first noted on, or None (and it is noted)."""

    def __init__(self) -> None:
        self._digests = array("Q", bytes(8 * _MIN_SLOTS))
        self._lines = array("I", bytes(4 * _MIN_SLOTS))
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def note(self, key: str, line: int) -> int | None:
        value = digest(key)
        slot, first = self._slot(value)
        if first is not None:
            return first
        self._digests[slot] = value
        self._lines[slot] = min(line, _MAX_LINE)
        self._count += 1
        if 2 * self._count > len(self._digests):  # at most half full: probes stay short
            self._grow()
        return None

    def _slot(self, value: int) -> tuple[int, int | None]:
        """(the slot holding `value` or the empty one it would go to, its line or None)."""
        digests = self._digests
        mask = len(digests) - 1
        slot = value & mask
        while True:
            held = digests[slot]
            if held == value:
                return slot, self._lines[slot]
            if held == _EMPTY:
                return slot, None
            slot = (slot + 1) & mask

    def _grow(self) -> None:
        old = zip(self._digests, self._lines, strict=True)
        size = 2 * len(self._digests)
        self._digests = array("Q", bytes(8 * size))
        self._lines = array("I", bytes(4 * size))
        for value, line in old:
            if value != _EMPTY:
                slot, _ = self._slot(value)
                self._digests[slot] = value
                self._lines[slot] = line

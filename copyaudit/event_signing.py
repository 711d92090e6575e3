"""Ed25519 signatures of label and review events: an event bound to the person who made it.

An annotator or reviewer keeps a private key file (never in the database) and points at
it with `--sign-key FILE`, $COPYAUDIT_SIGN_KEY or the `event_sign_key` setting
(copyaudit.sign_key); every
event they write then carries a signature over its hash by that key. A person adds their
public key to the database's trusted keys (`copyaudit keys add NAME PUBKEYFILE`);
`verify` checks every signature against those keys, and an event by a person with a
trusted key that is unsigned, or signed by any other key, is reported: an event appended
behind the tool with a recomputed hash cannot be signed without the private key.
Key files are those of copyaudit.anchor_signing (`copyaudit anchor --new-key FILE`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from copyaudit.anchor_signing import key_fingerprint, load_key, raw_public


@dataclass(frozen=True)
class PublicKey:
    fingerprint: str
    pem: str


def public_key(path: Path) -> PublicKey:
    """The ed25519 public key in PEM file `path` (UserError naming the file otherwise)."""
    key: Ed25519PublicKey = load_key(path, private=False)
    return _public(key)


def _public(key: Ed25519PublicKey) -> PublicKey:
    pem = key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()
    return PublicKey(key_fingerprint(raw_public(key).hex()), pem)


@dataclass(frozen=True)
class Signer:
    """A loaded private key: signs event hashes."""

    key: Ed25519PrivateKey
    path: Path

    @property
    def fingerprint(self) -> str:
        return _public(self.key.public_key()).fingerprint

    def sign(self, event_hash: str) -> str:
        return self.key.sign(event_hash.encode()).hex()


@functools.lru_cache(maxsize=8)
def load_signer(path: Path) -> Signer:
    return Signer(load_key(path, private=True), path)

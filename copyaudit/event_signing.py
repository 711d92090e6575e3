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

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from copyaudit.anchor_signing import key_fingerprint, load_key, raw_public
from copyaudit.errors import UserError
from copyaudit.sign_key import named_sign_key


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


def current_signer() -> Signer | None:
    """The key events are signed with now (copyaudit.sign_key); None when none is named."""
    path = named_sign_key()
    return None if path is None else load_signer(path)


def signature_valid(pem: str, event_hash: str, signature: str) -> bool:
    """Whether `signature` (hex) is the key `pem`'s over `event_hash`."""
    try:
        key = serialization.load_pem_public_key(pem.encode())
        if not isinstance(key, Ed25519PublicKey):
            return False
        key.verify(bytes.fromhex(signature), event_hash.encode())
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True


def check_registered(signer: Signer, name: str, registered_to: str | None) -> None:
    """Refuse to sign `name`'s event with a key the database trusts as someone else's."""
    if registered_to is not None and registered_to != name:
        raise UserError(
            f"the signing key {signer.path} is registered to {registered_to!r}, not {name!r}"
        )

"""Ed25519 signatures of anchors (the `cryptography` package).

A key pair is two PEM files: the private key (PKCS#8, owner-only) and beside it the
public key (`<name>.pub`). A signed anchor carries the public key and the signature;
`verify --against` checks the signature, and with `--public-key` also that it is the
key the person trusts (a forger can sign with a key of their own).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes, PublicKeyTypes

from copyaudit.anchors import signed_bytes
from copyaudit.errors import UserError

ALGORITHM = "ed25519"


def raw_public(public: Ed25519PublicKey) -> bytes:
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_fingerprint(public_hex: str) -> str:
    return hashlib.sha256(bytes.fromhex(public_hex)).hexdigest()[:16]


def generate_key(path: Path) -> Path:
    """Write a new private key to `path` (0600, never over a file) and its public key to
    `path`.pub; return the public key's path."""
    public_path = path.with_name(path.name + ".pub")
    for target in (path, public_path):
        if target.exists() or target.is_symlink():
            raise UserError(f"{target} already exists; choose another name")
    key = Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(private_pem)
    public_path.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return public_path


def load_key(path: Path, private: bool) -> Any:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise UserError(f"cannot read key file {path}: {error.strerror}") from None
    key: PrivateKeyTypes | PublicKeyTypes
    try:
        if private:
            key = serialization.load_pem_private_key(data, password=None)
        else:
            key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError) as error:
        raise UserError(f"{path}: not an unencrypted PEM key ({error})") from None
    wanted = Ed25519PrivateKey if private else Ed25519PublicKey
    if not isinstance(key, wanted):
        raise UserError(f"{path}: not an {ALGORITHM} key")
    return key


def sign_anchor(anchor: dict[str, Any], key_path: Path) -> dict[str, Any]:
    """The anchor with an ed25519 signature by the private key at `key_path`."""
    key: Ed25519PrivateKey = load_key(key_path, private=True)
    unsigned = {k: v for k, v in anchor.items() if k != "signature"}
    return {
        **unsigned,
        "signature": {
            "algorithm": ALGORITHM,
            "public_key": raw_public(key.public_key()).hex(),
            "value": key.sign(signed_bytes(unsigned)).hex(),
        },
    }


def check_signature(anchor: dict[str, Any], trusted: Path | None) -> tuple[bool, str]:
    """(sound, a line saying so): whether the anchor bears a valid signature, by the
    `trusted` public key when one is given (then a signature is required)."""
    signature = anchor.get("signature")
    if signature is None:
        if trusted is not None:
            return False, "the anchor is not signed, but --public-key asks for a signature"
        return True, "anchor not signed"
    try:
        if signature["algorithm"] != ALGORITHM:
            return False, f"anchor signature algorithm {signature['algorithm']!r} is unknown"
        public_hex = str(signature["public_key"])
        public = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_hex))
        value = bytes.fromhex(str(signature["value"]))
    except (KeyError, TypeError, ValueError):
        return False, "the anchor's signature is malformed"
    try:
        public.verify(value, signed_bytes(anchor))
    except InvalidSignature:
        return False, "the anchor's signature does not match its content (altered)"
    fingerprint = key_fingerprint(public_hex)
    if trusted is None:
        return True, f"signature valid, by key {fingerprint} (--public-key requires yours)"
    if raw_public(load_key(trusted, private=False)).hex() != public_hex:
        return False, f"the anchor is signed by key {fingerprint}, not by the key in {trusted}"
    return True, f"signature valid, by the trusted key {fingerprint}"

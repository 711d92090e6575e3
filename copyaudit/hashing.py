"""Stable content hashes for provenance (canonical JSON, SHA-256)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path


def canonical_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def stable_json(value: object) -> str:
    """Indented, key-sorted JSON for configs and payloads shown to people."""
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True, default=str)


def stable_hash(value: object, length: int = 16) -> str:
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()[:length]


def file_sha256(path: str | Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def generation_content_hash(output: str, case_hash: str) -> str:
    """What a label or review decision was made on: the generation's output and its
    case's content hash (reference items included). A `--replace` of either changes it."""
    return stable_hash({"output": output, "case": case_hash}, 32)

"""Anchor documents: a database's chain heads, written down outside it.

An anchor (`copyaudit anchor`, and the one every report and dossier embeds) names the
database (its origin id), the time, each chain's head (table, chain id, seq, hash) and
a digest of the content the anchored events were made on, and each run's digest
(everything its figures depend on: db.run_digests). Kept elsewhere (mailed,
committed, printed), it lets `copyaudit verify --against` prove later that the database
still extends it, as a certificate-transparency log's signed tree head does. It may be
signed with an ed25519 key (copyaudit.anchor_signing).
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from copyaudit import __version__
from copyaudit.errors import UserError
from copyaudit.hashing import canonical_json
from copyaudit.timestamps import utc_text
from copyaudit.untrusted import visible_bidi

ANCHOR_FORMAT = "copyaudit-anchor/1"
HEAD_FIELDS = ("table", "chain", "seq", "hash")
MARKDOWN_FENCE = "```json copyaudit-anchor"  # opens the anchor embedded in Markdown
HTML_TAG = '<pre class="anchor">'  # holds the anchor embedded in HTML
# The setting (copyaudit.identity) naming the private key `anchor` signs with by default.
SIGN_KEY_SETTING = "anchor_sign_key"


def make_anchor(
    origin: str,
    path: str,
    heads: list[dict[str, Any]],
    content: dict[str, Any],
    runs: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """An unsigned anchor document of the database `origin` (at `path`); `runs`: each
    run's digest (db.run_digests: its judgments, generations, cases, configuration)."""
    return {
        "format": ANCHOR_FORMAT,
        "database": {"origin": origin, "path": path},
        "created_at": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "copyaudit": __version__,
        "heads": heads,
        "labelled_content": content,
        "runs": runs or [],
    }


def signed_bytes(anchor: dict[str, Any]) -> bytes:
    """What a signature covers: the canonical JSON of every field but the signature."""
    return canonical_json({k: v for k, v in anchor.items() if k != "signature"}).encode()


def anchor_digest(anchor: dict[str, Any]) -> str:
    """SHA-256 of the signed bytes: a short way to name an anchor in a report line."""
    return hashlib.sha256(signed_bytes(anchor)).hexdigest()


def anchor_line(anchor: dict[str, Any]) -> str:
    """One line naming an embedded anchor (Markdown/HTML reports)."""
    chains = len(anchor["heads"])
    events = sum(h["seq"] for h in anchor["heads"])
    return (
        f"anchor {anchor_digest(anchor)[:16]} of database {anchor['database']['origin'][:8]} "
        f"at {utc_text(anchor['created_at'])}: {chains} chain(s), {events} event(s) "
        "(copyaudit verify --against this file)"
    )


def anchor_reading(anchor: dict[str, Any]) -> str:
    """What the anchor says, for a reader who is not a programmer."""
    events = sum(h["seq"] for h in anchor["heads"])
    runs = len(anchor.get("runs") or ())
    return (
        f"At {utc_text(anchor['created_at'])} the database (id "
        f"{anchor['database']['origin'][:8]}) held {events} recorded label and review "
        f"event(s) in {len(anchor['heads'])} chain(s), and {runs} run(s) with their "
        "figures. Each event is sealed with a hash of itself and of the event before it, so "
        "editing or deleting one breaks every later seal. The anchor below writes down the "
        f"last seal of each chain (its digest is {anchor_digest(anchor)[:16]}…). Anyone "
        "holding the database can run `copyaudit verify --against` on this file: it says "
        "whether every event and every run's figures named here are still in the database "
        "unchanged (later events may have been added after them)."
    )


def anchor_json(anchor: dict[str, Any]) -> str:
    """The anchor as indented JSON with no backtick (safe inside a Markdown fence) and
    its bidirectional controls (in the database's path, or any other text) as
    JSON escapes: what a reader sees is what `verify --against` reads."""
    return visible_bidi(json.dumps(anchor, ensure_ascii=False, indent=2).replace("`", "\\u0060"))


def anchor_markdown(anchor: dict[str, Any]) -> list[str]:
    """The anchor embedded in a Markdown document: what it says in plain words, its
    line, then the whole of it."""
    reading = visible_bidi(anchor_reading(anchor))
    return [reading, "", anchor_line(anchor), "", MARKDOWN_FENCE, anchor_json(anchor), "```"]


def _embedded(text: str) -> str | None:
    """The JSON of an anchor embedded in Markdown or HTML text, if any: the last one, since
    the document's own comes after any text quoted from model output or notes."""
    fenced = list(re.finditer(re.escape(MARKDOWN_FENCE) + r"\n(.*?)\n```", text, re.S))
    if fenced:
        return fenced[-1].group(1)
    tagged = list(re.finditer(re.escape(HTML_TAG) + r"(.*?)</pre>", text, re.S))
    return html.unescape(tagged[-1].group(1)) if tagged else None


def _find(document: object) -> Any:
    """The anchor in an anchor file, or embedded in a report or dossier's JSON."""
    if isinstance(document, dict):
        if document.get("format") == ANCHOR_FORMAT:
            return document
        for key in ("anchor", "integrity"):
            if key in document:
                found = _find(document[key])
                if found is not None:
                    return found
    return None


def _check_shape(anchor: dict[str, Any], path: Path) -> None:
    heads = anchor.get("heads")
    if not isinstance(heads, list):
        raise UserError(f"{path}: field 'heads' must be a list")
    for number, head in enumerate(heads):
        if not isinstance(head, dict) or set(head) != set(HEAD_FIELDS):
            raise UserError(f"{path}: heads[{number}] must have exactly {', '.join(HEAD_FIELDS)}")
        kinds = (str, str, int, str)
        for field, kind in zip(HEAD_FIELDS, kinds, strict=True):
            if not isinstance(head[field], kind) or isinstance(head[field], bool):
                raise UserError(f"{path}: heads[{number}].{field} must be a {kind.__name__}")
    runs = anchor.get("runs", [])
    if not isinstance(runs, list):
        raise UserError(f"{path}: field 'runs' must be a list")
    for number, run in enumerate(runs):
        if not isinstance(run, dict) or not all(
            isinstance(run.get(f), str) for f in ("run", "digest")
        ):
            raise UserError(f"{path}: runs[{number}] must have a string run and digest")
    database = anchor.get("database")
    if not isinstance(database, dict) or not isinstance(database.get("origin"), str):
        raise UserError(f"{path}: field 'database.origin' must be a string")


def read_anchor(path: Path) -> dict[str, Any]:
    """The anchor held by `path`: an anchor file, or a report or dossier (JSON, Markdown
    or HTML) embedding one."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"no anchor file {path}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise UserError(f"{path}: cannot read an anchor ({error})") from None
    try:
        document = json.loads(_embedded(text) or text)
    except json.JSONDecodeError as error:
        raise UserError(f"{path}: not a JSON anchor ({error})") from None
    anchor = _find(document)
    if anchor is None:
        raise UserError(f"{path}: no anchor (format {ANCHOR_FORMAT}) in this file")
    _check_shape(anchor, path)
    return anchor

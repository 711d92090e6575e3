"""What every framework reader gives: one run's cases, outputs and provenance."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from copyaudit.errors import InputError
from copyaudit.hashing import file_sha256
from copyaudit.records import LocatedCase, LocatedGeneration

MAX_LOG_BYTES = 2 * 1024**3  # a log read whole (JSON documents) is refused above this


@dataclass
class FrameworkLog:
    """One framework run: its cases (kind extraction: the prompt and the reference the
    framework compared against), one generation per output (template = the output's
    number within its instance, from 1), the model and decoding the framework recorded,
    the files read (name and sha256), and the framework's own per-instance figures
    (case id -> metric -> value) where the log keeps them."""

    framework: str
    run: str  # the run name the log suggests
    model: str
    cases: list[LocatedCase] = field(default_factory=list)
    generations: list[LocatedGeneration] = field(default_factory=list)
    decoding: dict[str, Any] = field(default_factory=dict)
    files: list[dict[str, str]] = field(default_factory=list)
    published: dict[str, dict[str, float]] = field(default_factory=dict)
    normalise_by_prefix: bool = False  # HELM's run spec divides its figures by prefix tokens
    normalise_whitespace: bool = False  # HELM's normalize_newline_space_tab
    notes: list[str] = field(default_factory=list)

    def read_file(self, path: Path) -> None:
        """Record `path` (name and sha256) among the files the log was read from."""
        self.files.append({"file": str(path), "sha256": file_sha256(path)})

    def provenance(self) -> dict[str, Any]:
        return {
            "framework": self.framework,
            "imported_from": self.files,
            "provenance": f"imported from {self.framework}: "
            + "; ".join(f"{f['file']} ({f['sha256']})" for f in self.files[:3])
            + (f" and {len(self.files) - 3} more" if len(self.files) > 3 else ""),
            **({"notes": self.notes} if self.notes else {}),
        }


def load_json(path: Path) -> Any:
    """A whole JSON document (a framework's log file), with errors naming the file."""
    if not path.is_file():
        raise InputError(path, None, None, "is a directory" if path.is_dir() else "no such file")
    if path.stat().st_size > MAX_LOG_BYTES:
        raise InputError(path, None, None, f"larger than {MAX_LOG_BYTES} bytes")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise InputError(path, None, None, "not UTF-8 text: is this the framework's log?") from None
    except json.JSONDecodeError as exc:
        raise InputError(path, exc.lineno, None, f"not JSON: {exc.msg}") from None


def json_lines(path: Path) -> list[tuple[int, Any]]:
    """(line, value) of every non-blank line of a JSON Lines log."""
    if not path.is_file():
        raise InputError(path, None, None, "is a directory" if path.is_dir() else "no such file")
    out = []
    with path.open(encoding="utf-8") as stream:
        for number, line in enumerate(stream, 1):
            if not line.strip():
                continue
            try:
                out.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise InputError(path, number, None, f"not JSON: {exc.msg}") from None
    return out


def need(path: Path, line: int | None, value: object, keys: str, kind: type = str) -> Any:
    """`value` at the dotted `keys` (e.g. "instance.input.text"), which must be a `kind`;
    InputError naming the file, line and field otherwise."""
    current = value
    for key in keys.split("."):
        if isinstance(current, list) and key.isdigit() and int(key) < len(current):
            current = current[int(key)]
        elif isinstance(current, dict) and key in current:
            current = current[key]
        else:
            raise InputError(path, line, keys, "missing")
    if not isinstance(current, kind) or (isinstance(current, bool) and kind is not bool):
        raise InputError(
            path, line, keys, f"expected {kind.__name__}, got {type(current).__name__}"
        )
    return current


# A log's reader: one run, or one per model the log holds (promptfoo: per provider).
Reader = Callable[[Path], FrameworkLog | list[FrameworkLog]]

"""inspect_ai evaluation logs: a `.eval` file (a zip archive: `header.json` with the eval
spec, `samples/<id>_epoch_<n>.json` one sample each) or a `.json` log (the whole EvalLog,
`samples` inside), as inspect_ai/log/_recorders writes them. Read with the standard
library (no inspect_ai needed), entries bounded in size.

A sample becomes an extraction case (its input as the prefix: a string, or the text of
its messages; its target as the reference) and its output a generation per epoch
(template = the epoch). The model and its generate config come from the eval spec.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from copyaudit.errors import InputError
from copyaudit.frameworks.log import MAX_LOG_BYTES, FrameworkLog, load_json
from copyaudit.records import LocatedCase, LocatedGeneration
from copyaudit.types import Case, Work

MAX_ENTRY_BYTES = 256 * 1024**2  # one sample or header inside a .eval archive


def _text(content: object) -> str:
    """A message's content as text: a string, or its text parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "") for part in content if isinstance(part, dict)
        )  # fmt: skip
    return ""


def _input_text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text(m.get("content")) for m in value if isinstance(m, dict))
    return ""


def _output_text(output: object) -> str | None:
    if not isinstance(output, dict):
        return None
    if isinstance(output.get("completion"), str):
        return str(output["completion"])
    choices = output.get("choices") or []
    if choices and isinstance(choices[0], dict):
        return _text((choices[0].get("message") or {}).get("content"))
    return None


def _archive(path: Path) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    """(header, [(entry name, sample)]) of a .eval archive."""
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise InputError(
            path, None, None, "not an inspect .eval archive (not a zip file)"
        ) from None
    with archive:

        def entry(name: str) -> dict[str, Any]:
            info = archive.getinfo(name)
            if info.file_size > MAX_ENTRY_BYTES:
                raise InputError(path, None, name, f"larger than {MAX_ENTRY_BYTES} bytes")
            try:
                value = json.loads(archive.read(name).decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise InputError(path, None, name, f"not JSON: {exc}") from None
            if not isinstance(value, dict):
                raise InputError(path, None, name, "expected an object")
            return value

        names = archive.namelist()
        header_name = "header.json" if "header.json" in names else "_journal/start.json"
        if header_name not in names:
            raise InputError(path, None, None, "no header.json: not an inspect .eval log")
        samples = sorted(n for n in names if n.startswith("samples/") and n.endswith(".json"))
        return entry(header_name), [(n, entry(n)) for n in samples]


def read_inspect(path: Path) -> FrameworkLog:
    if path.suffix == ".eval":
        if path.stat().st_size > MAX_LOG_BYTES:
            raise InputError(path, None, None, f"larger than {MAX_LOG_BYTES} bytes")
        header, samples = _archive(path)
    else:
        document = load_json(path)
        if not isinstance(document, dict) or "eval" not in document:
            raise InputError(path, None, "eval", "missing: not an inspect log")
        header = document
        samples = [(f"samples.{i}", s) for i, s in enumerate(document.get("samples") or [])]
    spec = header.get("eval") or {}
    model = str(spec.get("model") or "inspect")
    task = str(spec.get("task") or path.stem)
    log = FrameworkLog(framework="inspect", run=f"inspect-{task}".replace("/", "_"), model=model)
    log.read_file(path)
    config = spec.get("model_generate_config") or (header.get("plan") or {}).get("config") or {}
    log.decoding = {k: v for k, v in config.items() if v is not None}
    title = f"inspect {task}"
    seen: set[str] = set()
    for number, (where, sample) in enumerate(samples, 1):
        if not isinstance(sample, dict) or "id" not in sample:
            raise InputError(path, None, f"{where}.id", "missing: not an inspect sample")
        case_id = str(sample["id"])
        target = sample.get("target")
        reference = target[0] if isinstance(target, list) and target else target
        if case_id not in seen:
            seen.add(case_id)
            payload = {
                "prefix": _input_text(sample.get("input")),
                "reference": str(reference or ""),
            }
            log.cases.append(LocatedCase(number, Case(case_id, "extraction", Work(title), payload)))
        output = _output_text(sample.get("output"))
        if output is None:
            raise InputError(path, None, f"{where}.output", "no completion in the sample")
        epoch = sample.get("epoch", 1)
        log.generations.append(
            LocatedGeneration(
                number, case_id, int(epoch) if isinstance(epoch, int) else 1, output, model
            )
        )
    return log

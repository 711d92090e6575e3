"""garak reports (`garak.<run id>.report.jsonl`), as garak/command.py and
attempt.Attempt.as_dict write them: a `start_run setup` entry (the configuration, among it
`plugins.target_name` / `plugins.model_name`), then `attempt` entries, each written when
started (status 1) and again when evaluated (status 2): `uuid`, `seq`,
`probe_classname`, `prompt` (a conversation: turns of {role, content: {text}}; a string
in older reports), `outputs` ([{text}] or strings), `notes.triggers`.

Every attempt is kept (the last entry of each uuid): one extraction case per attempt
(the prompt's last user turn as the prefix; the triggers, the text a leakreplay probe
expects, as the reference) and each output a generation (template = its number). The
probe's class is in the case's work title, so cloze and completion probes stay apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from copyaudit.errors import InputError
from copyaudit.frameworks.log import FrameworkLog, json_lines
from copyaudit.records import LocatedCase, LocatedGeneration
from copyaudit.types import Case, Work

MODEL_KEYS = ("plugins.target_name", "plugins.model_name")


def _prompt_text(prompt: object) -> str:
    if isinstance(prompt, str):
        return prompt
    turns = prompt.get("turns") if isinstance(prompt, dict) else None
    for turn in reversed(turns or []):
        if isinstance(turn, dict) and turn.get("role", "user") == "user":
            content = turn.get("content")
            return str(content.get("text") or "") if isinstance(content, dict) else str(content)
    return ""


def _output_text(output: object) -> str | None:
    if output is None:
        return None
    if isinstance(output, dict):
        return None if output.get("text") is None else str(output["text"])
    return str(output)


def read_garak(path: Path) -> FrameworkLog:
    entries = json_lines(path)
    setup = next(
        (e for _, e in entries if isinstance(e, dict) and e.get("entry_type") == "start_run setup"),
        {},
    )
    model = next((str(setup[k]) for k in MODEL_KEYS if setup.get(k)), "garak")
    run = path.name.removesuffix(".report.jsonl").removesuffix(".jsonl")
    log = FrameworkLog(framework="garak", run=run, model=model)
    log.read_file(path)
    latest: dict[str, tuple[int, dict[str, Any]]] = {}
    for line, entry in entries:
        if not isinstance(entry, dict) or entry.get("entry_type") != "attempt":
            continue
        uuid = entry.get("uuid")
        if not isinstance(uuid, str):
            raise InputError(path, line, "uuid", "missing: every attempt has one")
        latest[uuid] = (line, entry)
    for uuid, (line, attempt) in latest.items():
        probe = str(attempt.get("probe_classname") or "garak")
        triggers = (attempt.get("notes") or {}).get("triggers") or []
        reference = " | ".join(str(t) for t in triggers)
        payload = {"prefix": _prompt_text(attempt.get("prompt")), "reference": reference}
        case = Case(
            f"{probe}-{attempt.get('seq', 0)}-{uuid[:8]}",
            "extraction",
            Work(f"garak {probe}"),
            payload,
        )
        log.cases.append(LocatedCase(line, case))
        outputs = attempt.get("outputs")
        if not isinstance(outputs, list):
            raise InputError(path, line, "outputs", "expected a list of outputs")
        for number, output in enumerate(outputs, 1):
            text = _output_text(output)
            if text is not None:
                log.generations.append(LocatedGeneration(line, case.case_id, number, text, model))
    unfinished = sum(1 for _, a in latest.values() if a.get("status") != 2)
    if unfinished:
        log.notes.append(f"{unfinished} attempt(s) not evaluated by garak (status not 2)")
    return log

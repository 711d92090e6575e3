"""promptfoo results (`promptfoo eval -o results.json`): `{"evalId", "results": {"version",
"results": [...]}, "config"}`, each result a test case run against one provider:
`prompt.raw`, `vars`, `response.output`, `provider.id` (or label), `testIdx`,
`promptIdx`, `testCase.assert` (each {type, value}). A JSONL export (`-o
results.jsonl`) holds the results one per line.

One run per provider (named after it); a test becomes an extraction case (the raw prompt
as the prefix; the reference from the first string-valued assertion of an equality or
similarity kind, else a var named reference / expected / continuation / answer) and each
result a generation. A test without a reference keeps an empty one (judged as such).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from copyaudit.errors import InputError
from copyaudit.frameworks.log import FrameworkLog, json_lines, load_json
from copyaudit.records import LocatedCase, LocatedGeneration
from copyaudit.types import Case, Work

REFERENCE_ASSERTIONS = (
    "equals",
    "contains",
    "icontains",
    "starts-with",
    "similar",
    "levenshtein",
    "rouge-n",
    "bleu",
)
REFERENCE_VARS = ("reference", "expected", "continuation", "answer")


def _reference(result: dict[str, Any]) -> str:
    for assertion in (result.get("testCase") or {}).get("assert") or []:
        if (
            isinstance(assertion, dict)
            and assertion.get("type") in REFERENCE_ASSERTIONS
            and isinstance(assertion.get("value"), str)
        ):
            return str(assertion["value"])
    variables = result.get("vars") or {}
    return next(
        (str(variables[k]) for k in REFERENCE_VARS if isinstance(variables.get(k), str)), ""
    )


def _results(path: Path) -> list[tuple[int | None, Any]]:
    if path.suffix == ".jsonl":
        return [(line, value) for line, value in json_lines(path)]
    document = load_json(path)
    inner = document.get("results") if isinstance(document, dict) else None
    rows = inner.get("results") if isinstance(inner, dict) else inner
    if not isinstance(rows, list):
        raise InputError(path, None, "results.results", "missing: not a promptfoo output file")
    return [(None, r) for r in rows]


def read_promptfoo(path: Path) -> list[FrameworkLog]:
    logs: dict[str, FrameworkLog] = {}
    cases: dict[str, set[str]] = {}  # provider -> its case ids
    for index, (line, result) in enumerate(_results(path)):
        where = f"results.results.{index}"
        if not isinstance(result, dict):
            raise InputError(path, line, where, "expected an object")
        provider = result.get("provider") or "promptfoo"
        if isinstance(provider, dict):
            provider = provider.get("label") or provider.get("id") or "promptfoo"
        name = str(provider)
        log = logs.get(name)
        if log is None:
            log = logs[name] = FrameworkLog(
                framework="promptfoo",
                run=f"promptfoo-{name}".replace("/", "_").replace(":", "_"),
                model=name,
            )
            log.read_file(path)
        prompt = result.get("prompt") or {}
        raw = prompt.get("raw") if isinstance(prompt, dict) else prompt
        if not isinstance(raw, str):
            raise InputError(path, line, f"{where}.prompt.raw", "missing")
        output = (result.get("response") or {}).get("output")
        if output is None:
            log.notes.append(f"result {index}: no output ({result.get('error') or 'no response'})")
            continue
        case_id = f"test-{result.get('testIdx', index)}-prompt-{result.get('promptIdx', 0)}"
        if case_id not in cases.setdefault(name, set()):
            cases[name].add(case_id)
            payload = {"prefix": raw, "reference": _reference(result)}
            log.cases.append(
                LocatedCase(
                    line or index + 1, Case(case_id, "extraction", Work("promptfoo"), payload)
                )
            )
        text = output if isinstance(output, str) else str(output)
        log.generations.append(LocatedGeneration(line or index + 1, case_id, 1, text, name))
    return list(logs.values())

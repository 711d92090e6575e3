"""lm-evaluation-harness sample logs (`--log_samples`): `samples_<task>_<time>.jsonl`, one
line per document, as lm_eval/evaluator.py and loggers/evaluation_tracker.py write it:
`doc_id`, `doc`, `target`, `arguments` ({"gen_args_0": {"arg_0": prompt, "arg_1":
generation kwargs}}; older versions a list of [prompt, kwargs]), `resps` (per request,
the list of outputs), `filtered_resps`, `filter`, the sample's metrics by name. The
`results_<time>.json` beside it names the model (`model_name`, else `config.model_args`)
and the task's generation settings.

A document becomes an extraction case (the prompt as the prefix, `target` as the
reference: a generate_until task's expected text) and each output of its first request a
generation (template = its number). The log's own metrics are kept in the run's
provenance, not compared: they are the task's, not copyaudit's.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from copyaudit.errors import InputError, UserError
from copyaudit.frameworks.log import FrameworkLog, json_lines, load_json
from copyaudit.records import LocatedCase, LocatedGeneration
from copyaudit.types import Case, Work

SAMPLES = re.compile(r"samples_(?P<task>.+)_(?P<time>\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.jsonl$")


def _samples_file(path: Path) -> Path:
    if path.is_file():
        return path
    if not path.is_dir():
        raise InputError(path, None, None, "no such file")
    found = sorted(p for p in path.rglob("samples_*.jsonl"))
    if len(found) != 1:
        names = ", ".join(p.name for p in found[:5]) or "none"
        raise UserError(f"{path}: name one samples_<task>_<time>.jsonl file (found {names})")
    return found[0]


def _prompt_and_kwargs(path: Path, line: int, arguments: object) -> tuple[str, dict[str, Any]]:
    first: object = None
    if isinstance(arguments, dict):  # {"gen_args_0": {"arg_0": prompt, "arg_1": kwargs}}
        entry = arguments.get("gen_args_0")
        if isinstance(entry, dict):
            first = [entry.get("arg_0"), entry.get("arg_1")]
    elif isinstance(arguments, list) and arguments:  # [[prompt, kwargs], ...]
        first = arguments[0]
    if not isinstance(first, list | tuple) or not isinstance(first[0], str):
        raise InputError(path, line, "arguments", "expected the request's prompt first")
    kwargs = first[1] if len(first) > 1 and isinstance(first[1], dict) else {}
    return first[0], kwargs


def _results(samples: Path, time: str | None) -> dict[str, Any]:
    """The results_<time>.json written with the samples (empty when absent)."""
    candidates = sorted(samples.parent.glob(f"results_{time}.json" if time else "results_*.json"))
    return load_json(candidates[-1]) if candidates else {}


def read_lm_eval(path: Path) -> FrameworkLog:
    samples = _samples_file(path)
    match = SAMPLES.search(samples.name)
    task = match["task"] if match else samples.stem
    results = _results(samples, match["time"] if match else None)
    config = results.get("config") or {}
    model = str(results.get("model_name") or config.get("model_args") or "lm-eval")
    log = FrameworkLog(framework="lm-eval", run=f"lm-eval-{task}", model=model)
    log.read_file(samples)
    task_config = (results.get("configs") or {}).get(task) or {}
    if task_config.get("generation_kwargs"):
        log.decoding = dict(task_config["generation_kwargs"])
    title = f"lm-eval {task}"
    for line, sample in json_lines(samples):
        if not isinstance(sample, dict) or "doc_id" not in sample:
            raise InputError(samples, line, "doc_id", "missing: not an lm-eval sample line")
        prompt, kwargs = _prompt_and_kwargs(samples, line, sample.get("arguments"))
        if kwargs and not log.decoding:
            log.decoding = kwargs
        target = sample.get("target")
        if isinstance(target, list):
            target = target[0] if target else ""
        case_id = f"doc-{sample['doc_id']}"
        payload = {"prefix": prompt, "reference": str(target)}
        log.cases.append(LocatedCase(line, Case(case_id, "extraction", Work(title=title), payload)))
        responses = sample.get("resps")
        if not isinstance(responses, list) or not responses:
            raise InputError(samples, line, "resps", "expected the outputs of each request")
        outputs = responses[0] if isinstance(responses[0], list) else [responses[0]]
        for number, output in enumerate(outputs, 1):
            if not isinstance(output, str):
                raise InputError(samples, line, "resps", "expected text outputs (generate_until)")
            log.generations.append(LocatedGeneration(line, case_id, number, output, model))
    return log

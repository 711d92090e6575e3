"""HELM runs (stanford-crfm/helm, src/helm/benchmark/runner.py): a run directory
`runs/<suite>/<run>/` holding `run_spec.json`, `scenario_state.json` (the adapter spec and
every request state: instance, request, result) and `per_instance_stats.json` (per
instance and trial, a list of stats named {"name": ..., "split": ...}).

Read as HELM's copyright scenario writes it (copyright_scenario.py): an instance's
input is the prefix and its one reference the text from the prefix on (`prefix_to_end`),
so the case's continuation is the reference after the prefix, as HELM's
BasicCopyrightMetric cuts it. Every completion of a request becomes a generation
(template = its number). Only the first training trial is read (a copyright run has
one) and unperturbed instances; what is left out is said. HELM's own
`longest_common_prefix_length`, `edit_distance` and `edit_similarity` per instance are
kept to be compared with copyaudit's (divided by the prefix's token count when the run
spec's metrics say `normalize_by_prefix_length`, HELM's default).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from copyaudit.errors import InputError
from copyaudit.frameworks.log import FrameworkLog, load_json, need
from copyaudit.records import LocatedCase, LocatedGeneration
from copyaudit.types import Case, Work

# HELM's stat name -> the extraction judge's metric
HELM_METRICS = {
    "longest_common_prefix_length": "lcp_tokens",
    "edit_distance": "edit_distance",
    "edit_similarity": "edit_similarity",
}
DECODING_KEYS = ("temperature", "max_tokens", "num_outputs", "top_k_per_token", "stop_sequences")


def _metric_arg(run_spec: dict[str, Any], name: str) -> bool:
    """An argument of the run's BasicCopyrightMetric specs (False when absent)."""
    for spec in run_spec.get("metric_specs") or []:
        if str(spec.get("class_name", "")).endswith("BasicCopyrightMetric"):
            return bool((spec.get("args") or {}).get(name, False))
    return False


def _case_id(instance: dict[str, Any], prefix: str) -> str:
    given = instance.get("id")
    if isinstance(given, str) and given.strip():
        return given
    return "h" + hashlib.sha256(prefix.encode()).hexdigest()[:16]


def read_helm(path: Path) -> FrameworkLog:
    """The HELM run directory `path` (or its scenario_state.json)."""
    folder = path.parent if path.name == "scenario_state.json" else path
    state_path = folder / "scenario_state.json"
    if not state_path.is_file():
        raise InputError(path, None, None, "not a HELM run directory: no scenario_state.json")
    spec_path = folder / "run_spec.json"
    run_spec = load_json(spec_path) if spec_path.is_file() else {}
    state = load_json(state_path)
    adapter = state.get("adapter_spec") or {} if isinstance(state, dict) else {}
    model = str(adapter.get("model") or adapter.get("model_deployment") or "helm")
    log = FrameworkLog(
        framework="helm",
        run=folder.name.replace("/", "_").replace(":", "_").replace(",", "_") or "helm",
        model=model,
        decoding={k: adapter[k] for k in DECODING_KEYS if k in adapter},
        normalise_by_prefix=_metric_arg(run_spec, "normalize_by_prefix_length"),
        normalise_whitespace=_metric_arg(run_spec, "normalize_newline_space_tab"),
    )
    if spec_path.is_file():
        log.read_file(spec_path)
    log.read_file(state_path)
    title = f"HELM {run_spec.get('name') or folder.name}"
    states = need(state_path, None, state, "request_states", list)
    seen: dict[str, str] = {}  # case id -> prefix
    later_trials = perturbed = 0
    for index, request_state in enumerate(states):
        where = f"request_states.{index}"
        if not isinstance(request_state, dict):
            raise InputError(state_path, None, where, "expected an object")
        instance = need(state_path, None, request_state, "instance", dict)
        if request_state.get("train_trial_index", 0) != 0:
            later_trials += 1
            continue
        if instance.get("perturbation"):
            perturbed += 1
            continue
        prefix = need(state_path, None, instance, "input.text")
        references = need(state_path, None, instance, "references", list)
        if len(references) != 1:
            raise InputError(
                state_path, None, f"{where}.instance.references",
                f"the copyright scenario has one reference, found {len(references)}",
            )  # fmt: skip
        full = need(state_path, None, references[0], "output.text")
        case_id = _case_id(instance, prefix)
        if case_id not in seen:
            seen[case_id] = prefix
            payload = {"prefix": prefix, "reference": full[len(prefix) :]}
            case = Case(case_id, "extraction", Work(title=title), payload)
            log.cases.append(LocatedCase(index + 1, case))
        completions = need(state_path, None, request_state, "result.completions", list)
        for number, completion in enumerate(completions, 1):
            text = need(state_path, None, completion, "text")
            log.generations.append(LocatedGeneration(index + 1, case_id, number, text, model))
    stats_path = folder / "per_instance_stats.json"
    if stats_path.is_file():
        log.read_file(stats_path)
        log.published = _published(stats_path)
    if later_trials:
        log.notes.append(f"{later_trials} request(s) of training trials after the first left out")
    if perturbed:
        log.notes.append(f"{perturbed} perturbed instance(s) left out")
    return log


def _published(path: Path) -> dict[str, dict[str, float]]:
    """instance id -> extraction metric -> HELM's value (first trial, unperturbed)."""
    out: dict[str, dict[str, float]] = {}
    for entry in need(path, None, {"x": load_json(path)}, "x", list):
        if not isinstance(entry, dict) or entry.get("train_trial_index", 0) != 0:
            continue
        if entry.get("perturbation"):
            continue
        instance = need(path, None, entry, "instance_id")
        for stat in entry.get("stats") or []:
            name = (stat.get("name") or {}).get("name") if isinstance(stat, dict) else None
            if name in HELM_METRICS and stat.get("mean") is not None:
                out.setdefault(instance, {})[HELM_METRICS[name]] = float(stat["mean"])
    return out

"""`import-generations --from helm`: a HELM copyright run directory, built here in HELM's
layout (runner.py: run_spec.json, scenario_state.json, per_instance_stats.json) from the
generated pairs of tests.test_extraction_helm, whose per-instance stats are computed by
the transcription of HELM's functions there (best over completions, divided by the
prefix's Treebank tokens as HELM's run spec does by default). The import reproduces
every stat, and `copyaudit judge` stores the same figures."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from nltk.tokenize.treebank import TreebankWordTokenizer

from tests.test_extraction_helm import KINDS, _pair, helm_scores

RUN = "copyright_datatag=n_books_1000-extractions_per_book_1-prefix_length_125"
PREFIX = "The lamp burned low on the quay, and the keeper waited for the boat"


def _stat(name: str, value: float) -> dict[str, Any]:
    return {
        "name": {"name": name, "split": "test"},
        "count": 1,
        "sum": value,
        "sum_squared": value * value,
        "min": value,
        "max": value,
        "mean": value,
        "variance": 0.0,
        "stddev": 0.0,
    }


def write_helm_run(folder: Path, n: int = 70, *, normalise: bool = True) -> dict[str, dict]:
    """A HELM run directory of `n` instances (two completions for every third), plus one
    request of a second training trial; returns the per-instance stats written."""
    rng = random.Random(7)
    tokens = TreebankWordTokenizer()
    states, stats, expected = [], [], {}
    for i in range(n):
        prefix = f"{PREFIX} number {i}."
        completions = []
        output, reference = _pair(rng, KINDS[i % len(KINDS)])
        completions.append(output)
        if i % 3 == 0:
            completions.append(_pair(rng, KINDS[(i + 1) % len(KINDS)])[0])
        scores = [helm_scores(c, reference) for c in completions]
        best = {
            "longest_common_prefix_length": max(s[0] for s in scores),
            "edit_distance": min(s[1] for s in scores),
            "edit_similarity": max(s[2] for s in scores),
        }
        divisor = len(tokens.tokenize(prefix)) if normalise else 1
        best = {k: v / divisor for k, v in best.items()}
        instance = {
            "input": {"text": prefix},
            "references": [{"output": {"text": prefix + reference}, "tags": ["correct"]}],
            "split": "test",
            "id": f"id{i}",
        }
        for trial in (0, 1) if i == 0 else (0,):
            states.append(
                {
                    "instance": instance,
                    "train_trial_index": trial,
                    "request": {"model": "openai/gpt2", "prompt": prefix, "temperature": 0.2},
                    "result": {
                        "success": True,
                        "completions": [{"text": c, "logprob": -1.0} for c in completions],
                    },
                    "num_train_instances": 0,
                    "prompt_truncated": False,
                }
            )
        stats.append(
            {
                "instance_id": f"id{i}",
                "train_trial_index": 0,
                "stats": [_stat(k, v) for k, v in best.items()] + [_stat("num_prompt_tokens", 9)],
            }
        )
        expected[f"id{i}"] = best
    folder.mkdir(parents=True)
    args = {"normalize_by_prefix_length": normalise, "normalize_newline_space_tab": False}
    metric = "helm.benchmark.metrics.copyright_metrics.BasicCopyrightMetric"
    spec = {
        "name": "copyright:datatag=n_books_1000-extractions_per_book_1-prefix_length_125",
        "adapter_spec": {"model": "openai/gpt2", "temperature": 0.2, "max_tokens": 1024},
        "metric_specs": [
            {"class_name": metric, "args": {**args, "name": name}}
            for name in ("longest_common_prefix_length", "edit_distance", "edit_similarity")
        ],
    }
    adapter = {"model": "openai/gpt2", "temperature": 0.2, "max_tokens": 1024, "num_outputs": 1}
    (folder / "run_spec.json").write_text(json.dumps(spec, indent=2))
    state = {"adapter_spec": adapter, "request_states": states}
    (folder / "scenario_state.json").write_text(json.dumps(state, indent=2))
    (folder / "per_instance_stats.json").write_text(json.dumps(stats, indent=2))
    return expected


@pytest.mark.parametrize("normalise", [True, False])
def test_a_helm_run_imports_with_its_per_instance_stats_reproduced(
    cli, tmp_path: Path, normalise: bool
) -> None:
    folder = tmp_path / "runs" / "v1" / RUN
    expected = write_helm_run(folder, normalise=normalise)
    result = cli("import-generations", "--from", "helm", str(folder), "--suite", "helm")
    assert result.code == 0, result.err
    assert "helm: 70 cases added" in result.out
    assert f"{RUN}: 94 added" in result.out  # 70 instances, 24 with a second completion
    assert "model openai/gpt2" in result.out
    assert (
        "equal to the published per-instance figures: edit_distance 70/70, "
        "edit_similarity 70/70, lcp_tokens 70/70"
    ) in result.out, result.out + result.err
    assert "1 request(s) of training trials after the first left out" in result.out
    judged = cli("judge", RUN, "--judges", "extraction")
    assert judged.code == 0, judged.err
    exported = cli("export", "judgments", "--run", RUN)
    rows = [json.loads(line) for line in exported.out.splitlines()]
    prefix_tokens = {  # HELM's divisor, kept in the LCP's evidence
        r["generation"].split("/")[1]: r["evidence"]["extra"]["prefix_tokens"]
        for r in rows
        if r["metric"] == "lcp_tokens"
    }
    best: dict[str, dict[str, float]] = {}
    pick = {"lcp_tokens": max, "edit_similarity": max, "edit_distance": min}
    names = {"lcp_tokens": "longest_common_prefix_length"}
    for r in rows:
        if r["metric"] in pick:
            case = r["generation"].split("/")[1]
            value = r["value"] / (prefix_tokens[case] if normalise else 1)
            kept = best.setdefault(case, {}).get(r["metric"])
            best[case][r["metric"]] = value if kept is None else pick[r["metric"]](kept, value)
    for case, figures in expected.items():
        for metric, value in best[case].items():
            assert figures[names.get(metric, metric)] == pytest.approx(value, abs=1e-12), case


def test_the_run_records_the_log_it_came_from(cli, tmp_path: Path) -> None:
    folder = tmp_path / RUN
    write_helm_run(folder, n=5)
    assert cli("import-generations", "--from", "helm", str(folder), "--suite", "h").code == 0
    runs = json.loads(cli("runs", "--format", "json").out)
    (run,) = [r for r in runs if r["name"] == RUN]
    shown = json.dumps(run)
    assert "openai/gpt2" in shown


def test_a_folder_that_is_not_a_helm_run_is_refused(cli, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = cli("import-generations", "--from", "helm", str(tmp_path / "empty"), "--suite", "h")
    assert result.code == 2 and "not a HELM run directory" in result.err


def test_a_state_without_its_prefix_names_the_field(cli, tmp_path: Path) -> None:
    folder = tmp_path / RUN
    write_helm_run(folder, n=3)
    state = json.loads((folder / "scenario_state.json").read_text())
    del state["request_states"][2]["instance"]["input"]
    (folder / "scenario_state.json").write_text(json.dumps(state))
    result = cli("import-generations", "--from", "helm", str(folder), "--suite", "h")
    assert result.code == 2 and "scenario_state.json" in result.err
    assert "input.text" in result.err and "missing" in result.err

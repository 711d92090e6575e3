"""`import-generations --from NAME`: a small log in each framework's own layout (written
here from our own text, following each framework's code: lm_eval/evaluator.py and
loggers/evaluation_tracker.py, inspect_ai's .eval archive and .json log, garak's
attempt.as_dict and command.py, promptfoo's -o JSON and JSONL) imports as a suite of
extraction cases and runs with every output, the model and decoding recorded; a log that
is not one is refused naming the file and what is missing. Every registered framework
has its fixture here (tests.test_frameworks_helm: HELM)."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from copyaudit.frameworks.registry import FRAMEWORKS

PROMPTS = [
    "The lamp in the lighthouse burned low, and the keeper",
    "On the third night the ferry did not come, so the children",
    "Mrs. Penhallow counted the gulls that followed the boat past",
]
REFERENCES = [
    " waited for the boat that never came.",
    " walked the long road home by the shore.",
    " the breakwater and out to the open sea.",
]
OUTPUTS = [
    " waited for the boat that never came.",
    " went home.",
    " the breakwater and out to sea.",
]


def _lm_eval(folder: Path) -> Path:
    folder.mkdir(parents=True)
    lines = []
    for i, (prompt, reference, output) in enumerate(zip(PROMPTS, REFERENCES, OUTPUTS, strict=True)):
        lines.append(
            {
                "doc_id": i,
                "doc": {"context": prompt, "continuation": reference},
                "target": reference,
                "arguments": {
                    "gen_args_0": {"arg_0": prompt, "arg_1": {"until": ["\n"], "do_sample": False}}
                },
                "resps": [[output, output.upper()]],
                "filtered_resps": [output],
                "filter": "none",
                "metrics": ["exact_match"],
                "doc_hash": "d",
                "prompt_hash": "p",
                "target_hash": "t",
                "exact_match": float(output == reference),
            }
        )
    samples = folder / "samples_book_continue_2026-11-28T06-00-00.123456.jsonl"
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines))
    results = {
        "results": {"book_continue": {"exact_match,none": 1 / 3}},
        "configs": {"book_continue": {"generation_kwargs": {"until": ["\n"], "do_sample": False}}},
        "config": {"model": "hf", "model_args": "pretrained=EleutherAI/pythia-70m"},
        "model_name": "EleutherAI/pythia-70m",
    }
    (folder / "results_2026-11-28T06-00-00.123456.json").write_text(json.dumps(results))
    return samples


def _inspect_samples() -> list[dict[str, Any]]:
    return [
        {
            "id": f"s{i}",
            "epoch": 1,
            "input": [{"role": "user", "content": prompt}],
            "target": reference,
            "output": {
                "model": "openai/gpt-4o-mini",
                "choices": [
                    {
                        "message": {
                            "role": "assistant",
                            "content": [{"type": "text", "text": output}],
                        }
                    }
                ],
            },
            "scores": {},
        }
        for i, (prompt, reference, output) in enumerate(
            zip(PROMPTS, REFERENCES, OUTPUTS, strict=True)
        )
    ]


def _inspect_header() -> dict[str, Any]:
    return {
        "version": 2,
        "status": "success",
        "eval": {
            "task": "book_continue",
            "model": "openai/gpt-4o-mini",
            "model_generate_config": {"temperature": 0.0, "max_tokens": 64},
        },
    }


def _inspect_eval(folder: Path) -> Path:
    folder.mkdir(parents=True)
    path = folder / "2026-11-28T06-00-00+00-00_book-continue_abc.eval"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("header.json", json.dumps(_inspect_header()))
        for sample in _inspect_samples():
            archive.writestr(f"samples/{sample['id']}_epoch_1.json", json.dumps(sample))
    return path


def _inspect_json(folder: Path) -> Path:
    folder.mkdir(parents=True)
    path = folder / "book-continue.json"
    path.write_text(json.dumps({**_inspect_header(), "samples": _inspect_samples()}))
    return path


def _garak(folder: Path) -> Path:
    folder.mkdir(parents=True)
    entries: list[dict[str, Any]] = [
        {
            "entry_type": "start_run setup",
            "plugins.target_type": "huggingface",
            "plugins.target_name": "gpt2",
        },
        {"entry_type": "init", "garak_version": "0.13", "start_time": "2026-11-28T06:00:00"},
    ]
    for i, (prompt, reference, output) in enumerate(zip(PROMPTS, REFERENCES, OUTPUTS, strict=True)):
        attempt = {
            "entry_type": "attempt",
            "uuid": f"{i:08d}-aaaa-bbbb-cccc-000000000000",
            "seq": i,
            "probe_classname": "leakreplay.LiteratureComplete",
            "probe_params": {},
            "targets": [],
            "prompt": {"turns": [{"role": "user", "content": {"text": prompt, "lang": "en"}}]},
            "outputs": [{"text": output, "lang": "en"}, {"text": output[::-1], "lang": "en"}],
            "detector_results": {},
            "notes": {"triggers": [reference.strip()]},
            "goal": "replay training data",
        }
        entries.append({**attempt, "status": 1})
        entries.append(
            {**attempt, "status": 2, "detector_results": {"leakreplay.StartsWith": [1.0, 0.0]}}
        )
    path = folder / "garak.6b8a.report.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


def _promptfoo(folder: Path) -> Path:
    folder.mkdir(parents=True)
    results = []
    for provider in ("openai:gpt-4o-mini", "ollama:llama3"):
        for i, (prompt, reference, output) in enumerate(
            zip(PROMPTS, REFERENCES, OUTPUTS, strict=True)
        ):
            results.append(
                {
                    "id": f"{provider}-{i}",
                    "promptIdx": 0,
                    "testIdx": i,
                    "prompt": {"raw": prompt, "label": "continue"},
                    "vars": {"passage": prompt},
                    "provider": {"id": provider, "label": ""},
                    "response": {"output": output if provider.startswith("openai") else "No."},
                    "success": True,
                    "score": 1,
                    "testCase": {
                        "assert": [{"type": "similar", "value": reference, "threshold": 0.8}]
                    },
                }
            )
    path = folder / "results.json"
    path.write_text(json.dumps({"evalId": "eval-1", "results": {"version": 3, "results": results}}))
    return path


# framework -> (fixture writer, {run it makes: generations}, model)
FIXTURES: dict[str, tuple[Callable[[Path], Path], dict[str, int], str]] = {
    "lm-eval": (_lm_eval, {"lm-eval-book_continue": 6}, "EleutherAI/pythia-70m"),
    "inspect": (_inspect_eval, {"inspect-book_continue": 3}, "openai/gpt-4o-mini"),
    "garak": (_garak, {"garak.6b8a": 6}, "gpt2"),
    "promptfoo": (
        _promptfoo,
        {"promptfoo-openai_gpt-4o-mini": 3, "promptfoo-ollama_llama3": 3},
        "openai:gpt-4o-mini",
    ),
}


def test_every_registered_framework_has_a_fixture() -> None:
    assert set(FRAMEWORKS) == set(FIXTURES) | {"helm"}


@pytest.mark.parametrize("framework", sorted(FIXTURES))
def test_a_framework_log_imports_as_cases_and_runs(cli, tmp_path: Path, framework: str) -> None:
    write, runs, model = FIXTURES[framework]
    path = write(tmp_path / framework)
    result = cli("import-generations", "--from", framework, str(path), "--suite", "logs")
    assert result.code == 0, result.err
    assert "logs: 3 cases added" in result.out, result.out
    for run, count in runs.items():
        assert f"{run}: {count} added" in result.out, result.out
        assert f"not judged yet: copyaudit judge {run}" in result.err
    assert f"model {model}" in result.out
    exported = [
        json.loads(line) for line in cli("export", "cases", "--suite", "logs").out.splitlines()
    ]
    assert sorted(c["prefix"] for c in exported) == sorted(PROMPTS)
    assert {c["reference"].strip() for c in exported} == {r.strip() for r in REFERENCES}
    run = next(iter(runs))
    generations = [
        json.loads(line) for line in cli("export", "generations", "--run", run).out.splitlines()
    ]
    assert {g["output"] for g in generations} >= set(OUTPUTS)
    judged = cli("judge", run, "--judges", "extraction")
    assert judged.code == 0, judged.err
    again = cli("import-generations", "--from", framework, str(path), "--suite", "logs")
    assert again.code == 0 and f"{run}: 0 added, {runs[run]} unchanged" in again.out


def test_an_inspect_json_log_reads_as_its_eval_archive(cli, tmp_path: Path) -> None:
    """The same samples as a .json log import as nothing new after the .eval archive."""
    archive = _inspect_eval(tmp_path / "a")
    plain = _inspect_json(tmp_path / "b")
    assert cli("import-generations", "--from", "inspect", str(archive), "--suite", "s").code == 0
    again = cli("import-generations", "--from", "inspect", str(plain), "--suite", "s")
    assert again.code == 0, again.err
    assert "s: 0 cases added, 3 unchanged" in again.out
    assert "inspect-book_continue: 0 added, 3 unchanged" in again.out


def test_the_run_records_model_decoding_and_files(cli, tmp_path: Path) -> None:
    path = _lm_eval(tmp_path / "lm")
    assert (
        cli("import-generations", "--from", "lm-eval", str(path.parent), "--suite", "s").code == 0
    )
    runs = json.loads(cli("runs", "--format", "json").out)
    (run,) = [r for r in runs if r["name"] == "lm-eval-book_continue"]
    assert run["model"] == "EleutherAI/pythia-70m"


@pytest.mark.parametrize(
    ("framework", "text", "said"),
    [
        ("lm-eval", '{"no": "doc"}\n', "doc_id"),
        ("inspect", "not a zip", "not a zip file"),
        ("garak", '{"entry_type": "attempt", "seq": 0}\n', "uuid"),
        ("promptfoo", '{"results": 3}', "not a promptfoo output"),
    ],
)
def test_a_file_that_is_not_the_frameworks_log_is_refused(
    cli, tmp_path: Path, framework: str, text: str, said: str
) -> None:
    suffix = {"inspect": ".eval", "promptfoo": ".json"}.get(framework, ".jsonl")
    path = tmp_path / f"log{suffix}"
    path.write_text(text)
    result = cli("import-generations", "--from", framework, str(path), "--suite", "s")
    assert result.code == 2 and str(path) in result.err and said in result.err, result.err

"""What a run request will do, known before a model loads: its size, and conflicts with
the stored run of its name (the launcher names its fields, the CLI its flags)."""

from __future__ import annotations

from pathlib import Path

import pytest

from copyaudit.engine import runner
from copyaudit.engine.runner import RunRequest
from copyaudit.errors import UserError
from copyaudit.judges.options import JudgeOptions
from copyaudit.runs.launch_plan import cli_flag, configuration_conflicts
from copyaudit.studies.decop.run import DecopRequest
from copyaudit.studies.registry import run_size
from db import Store
from db.runs import RunSpec, create_or_resume_run, stored_configuration
from screens.runs.launcher_form import conflict_message
from tests.conftest import write_jsonl
from tests.factories import literal_record


def test_run_size_counts_prompts_times_templates_after_the_limit() -> None:
    assert run_size("literal", 40, (1, 2, 3)).total == 120
    assert run_size("literal", 40, (1, 2, 3), limit=5).describe() == (
        "15 generations (5 cases x 3 templates)"
    )
    assert run_size("qa", 3, (1,), limit=10).cases == 3
    resumed = run_size("literal", 4, (1, 2), stored=3)
    assert resumed.describe("r").endswith("; resumes run r (3 of 8 done, 5 to go)")
    decop = run_size("decop", 6)  # the passages kept per work, counted in the database
    assert (decop.total, decop.unit) == (144, "prompt")
    assert decop.describe() == "144 prompts (6 passages x 24 option orders)"


def _stored(**over: object) -> dict:
    return {
        "suite": "s",
        "backend": "hf",
        "model": "default",
        "templates": [1],
        "mitigation": "none",
        "config": {"limit": None, "judges": "offline", "memfree_n": 10},
        **over,
    }


def test_a_judge_option_that_differs_from_the_stored_run_is_named_by_its_flag() -> None:
    stored = _stored()
    assert configuration_conflicts(stored, RunRequest(suite="s")) == []
    request = RunRequest(suite="s", judging=JudgeOptions("paper", notice_embedding_model="e"))
    conflicts = configuration_conflicts(stored, request)
    assert [(c.field, c.stored, c.requested) for c in conflicts] == [
        ("judges", "offline", "paper"),
        ("notice_embedding_model", None, "e"),
    ]
    assert cli_flag(conflicts[1].field) == "--notice-embedding-model"


def test_conflicts_name_the_request_fields_that_differ() -> None:
    same = RunRequest(suite="s")
    assert configuration_conflicts(_stored(), same) == []
    changed = RunRequest(suite="s", templates=(1, 2), limit=3, notice_position="end")
    found = {c.field: (c.stored, c.requested) for c in configuration_conflicts(_stored(), changed)}
    assert found == {
        "templates": ((1,), (1, 2)),
        "limit": (None, 3),
        "notice_position": ("before_query", "end"),
    }
    message = conflict_message("r", configuration_conflicts(_stored(), changed))
    assert "Templates: 1 there, 1,2 here" in message and "Limit: empty there, 3 here" in message
    assert "--" not in message
    shots = configuration_conflicts(_stored(config={"shots": 2}), same)
    assert [c.field for c in shots] == ["shots"]  # a CLI-only option is still compared


def test_decop_conflicts_compare_passages_per_work_and_calibration() -> None:
    stored = _stored(templates=[], config={"calibration": {"mode": "auto", "works": ["A"]}})
    request = DecopRequest(suite="s", passages_per_work=2, calibrate_on="auto")
    found = configuration_conflicts(stored, request, calibration=("auto", ["A"]))
    assert [c.field for c in found] == ["passages_per_work"]
    found = configuration_conflicts(stored, request, calibration=("none", []))
    assert {c.field for c in found} == {"passages_per_work", "calibrate_on"}


def test_the_cli_refuses_a_conflicting_run_before_loading_the_model(
    tmp_path: Path, cli, db_path: Path, monkeypatch
) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", [literal_record(1)])
    assert cli("import", "literal", str(path), "--suite", "s").code == 0
    with Store(db_path) as store:
        create_or_resume_run(store, RunSpec("r", "s", "hf", "default", templates=(1,)))
        before = stored_configuration(store, "r")
    loads: list[str] = []
    monkeypatch.setattr(runner, "load_generator", lambda request: loads.append(request.model))
    with pytest.raises(UserError) as raised:
        runner.execute_run(db_path, RunRequest(suite="s", name="r", templates=(1, 2)))
    assert "--templates: (1,) there, (1, 2) here" in str(raised.value)
    assert loads == []  # refused before the model was loaded
    with Store(db_path) as store:
        assert stored_configuration(store, "r") == before  # nothing written

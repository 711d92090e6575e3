"""The study registry: every kind's spec is complete, and a fourth study registered
here (a tiny haiku study) is imported, exported, prompted, protected, shown and
labelled through the generic paths without editing any other module."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from copyaudit import formats, prompts, types, vocabulary
from copyaudit.engine.demo import sample_cases, samples_dir
from copyaudit.errors import InputError, UserError
from copyaudit.items import EVERY_OUTPUT_TARGETS, WHOLE_OUTPUT_TARGETS
from copyaudit.judges.options import JudgeOptions
from copyaudit.judges.presets import build_judges
from copyaudit.judges.registry import JUDGES
from copyaudit.judges.verbatim import LONGEST_VERBATIM
from copyaudit.metrics_spec import Headline
from copyaudit.records import LocatedCase, Record, collect_cases, read_json_records, string_field
from copyaudit.reports.dossier.build import _reference_blocks
from copyaudit.rows import Loaded
from copyaudit.studies import registry
from copyaudit.studies.registry import STUDIES
from copyaudit.studies.spec import ReferenceText, StudySpec, UserTurn
from copyaudit.studies.verbatim import verbatim_kinds
from copyaudit.types import Case, JudgeInput, Work
from db import Store
from screens.runs.dashboard import load_dashboard, run_columns


@pytest.mark.parametrize("kind", list(STUDIES))
def test_every_kind_has_a_complete_spec(kind: str) -> None:
    spec = STUDIES[kind]
    assert kind in spec.kinds and spec.name and spec.title
    for item in dataclasses.fields(StudySpec):
        optional = ("prompter", "doc_types", "execute", "export_run", "limit_label", "split_cases")
        if item.name not in (*optional, "prompts_per_case"):
            assert getattr(spec, item.name) is not None, item.name
    # a generation study is prompted; a study with its own loop executes it
    assert (spec.prompter is None) == (spec.execute is not None)
    # and says how many prompts a case costs, for the launcher's run size
    assert (spec.prompts_per_case is None) == (spec.execute is None)
    cases = formats.load_cases(kind, samples_dir() / spec.samples[kind])
    assert cases and {c.case.kind for c in cases} == {kind}
    case = cases[0].case
    assert all(isinstance(t, str) for t in spec.protected_texts(case))
    blocks = spec.reference(kind, case.payload, [])
    assert blocks and all(isinstance(b, ReferenceText) and b.title for b in blocks)
    assert set(EVERY_OUTPUT_TARGETS) <= set(spec.whole_output_targets(kind, case.payload))
    assert set(spec.whole_output_targets(kind, case.payload)) <= set(WHOLE_OUTPUT_TARGETS)
    if spec.prompter is not None:
        for template in prompts.templates_for(kind):
            assert prompts.build_prompt(kind, case.payload, template=template).user


def test_kinds_are_the_registry_keys() -> None:
    assert registry.task_kinds() == types.TASK_KINDS
    assert [kind for _, kind in sample_cases()] == list(STUDIES)
    prompted = tuple(kind for kind, spec in STUDIES.items() if spec.prompter is not None)
    assert prompted and registry.prompt_kinds() == prompted
    assert registry.prompt_kinds() == vocabulary.GENERATION_KINDS


# --- a fourth study, registered only here --------------------------------------------------


def _parse_haiku(record: Record) -> Case:
    return Case(
        case_id=string_field(record, "id"),
        kind="haiku",
        work=Work(title=string_field(record, "title")),
        payload={
            "input": string_field(record, "input"),
            "reference": string_field(record, "reference"),
        },
    )


def _read_haiku(kind: str, path: str | Path) -> Loaded[LocatedCase]:
    return collect_cases(path, read_json_records(path), _parse_haiku, ("id", "title", "input"))


def _haiku_record(case: Case) -> dict[str, Any]:
    return {"id": case.case_id, "title": case.work.title, **case.payload}


class _HaikuPrompter:
    def templates(self, kind: str) -> tuple[int, ...]:
        return (1, 2)

    def demonstrations(self, kind: str) -> int:
        return 0

    def user_turn(
        self,
        kind: str,
        payload: Mapping[str, Any],
        template: int,
        shots: int | None,
        options: Mapping[str, Any],
    ) -> UserTurn:
        verb = "Complete" if template == 1 else "Finish"
        return UserTurn(f"{verb} the haiku: {payload['input']}", 0, 32)

    def describe(self) -> dict[str, Any]:
        return {"haiku": {"1": {"source": "test"}, "2": {"source": "test"}}}

    def fixed_budgets(self) -> dict[str, int]:
        return {"haiku": 32}


def _haiku_reference(kind: str, payload: Mapping[str, Any], judgments: Sequence[Any]):
    return [ReferenceText("Reference haiku", payload["reference"].split(" / "))]


HAIKU = StudySpec(
    name="haiku",
    title="Haiku",
    kinds=("haiku",),
    read_cases=_read_haiku,
    to_record=_haiku_record,
    reference=_haiku_reference,
    samples={"haiku": "haiku.jsonl"},
    prompter=_HaikuPrompter(),
    protected_texts=lambda case: [case.payload["reference"]],
    # literal-style: the verbatim judge measures an output against the reference
    verbatim_sources={"haiku": lambda payload: payload["reference"]},
    # its own headline: the share of outputs copying a verbatim run (flagged by the judge)
    headlines=(
        Headline(
            "haiku_copied",
            LONGEST_VERBATIM,
            "copied %",
            "Copied",
            kinds=("haiku",),
            dashboard=9,
        ),
    ),
)
RECORDS = [
    {"id": "h1", "title": "Pond", "input": "an old silent pond", "reference": "a frog / splash"},
    {"id": "h2", "title": "Moon", "input": "the autumn moon", "reference": "a worm / digs"},
]


@pytest.fixture
def haiku(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setitem(STUDIES, "haiku", HAIKU)
    path = tmp_path / "haiku.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    return path


def test_a_fourth_study_imports_and_exports_through_formats(haiku: Path) -> None:
    cases = [located.case for located in formats.load_cases("haiku", haiku)]
    assert [c.case_id for c in cases] == ["h1", "h2"]
    assert [formats.case_to_record(c) for c in cases] == RECORDS
    duplicate = haiku.with_name("dup.jsonl")
    duplicate.write_text(haiku.read_text() + json.dumps(RECORDS[0]) + "\n", encoding="utf-8")
    loaded = formats.read_cases("haiku", duplicate)
    assert [p.reason for p in loaded.problems] == ["duplicate id 'h1' (first on line 1)"]


def test_a_fourth_study_is_prompted_and_described(haiku: Path) -> None:
    payload = RECORDS[0]
    assert prompts.templates_for("haiku") == (1, 2)
    spec = prompts.build_prompt("haiku", payload, template=2, reminder=True)
    assert spec.user == "Finish the haiku: an old silent pond"
    assert spec.text == f"{prompts.REMINDER_SYSTEM_PROMPT}\n\n{spec.user}"
    assert (spec.max_new_tokens, spec.shots) == (32, 0)
    with pytest.raises(UserError, match="template 3 is not available"):
        prompts.build_prompt("haiku", payload, template=3)
    description = prompts.describe_templates()
    assert description["kinds"]["haiku"]["1"] == {"source": "test"}
    assert description["max_new_tokens"]["haiku"] == 32


def test_a_fourth_study_is_protected_shown_and_labelled(haiku: Path) -> None:
    case = formats.load_cases("haiku", haiku)[0].case
    assert registry.protected_texts(case) == ["a frog / splash"]
    [block] = _reference_blocks("haiku", case.payload, [])
    assert block.title == "Reference haiku"
    assert "".join(segment.text for segment in block.segments) == "a frog\nsplash"
    assert registry.whole_output_targets("haiku", case.payload) == EVERY_OUTPUT_TARGETS


def test_a_fourth_study_imports_through_the_cli(haiku: Path, cli) -> None:
    result = cli("import", "haiku", str(haiku))
    assert result.code == 0, result.err
    assert "2 added" in result.out
    exported = cli("export", "cases", "--suite", "haiku")
    assert [json.loads(line) for line in exported.out.splitlines()] == RECORDS


def test_an_unknown_kind_is_refused_with_the_registry_kinds(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text("{}\n", encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(f"one of {', '.join(STUDIES)}")):
        formats.load_cases("sonnet", path)


def test_a_fourth_study_is_judged_by_the_verbatim_judge(haiku: Path) -> None:
    assert "haiku" in verbatim_kinds() and JUDGES["verbatim"].applies("haiku", paper=False)
    judges, skipped = build_judges(JudgeOptions("verbatim", verbatim_chars=5), "haiku")
    assert [j.name for j in judges] == ["verbatim"] and skipped == []
    payload = RECORDS[0]
    [[score]] = judges[0].judge([JudgeInput("haiku", payload, "", "so a frog / splash!")])
    assert score.metric == "longest_verbatim_chars"
    assert (score.value, score.flagged) == (len("a frog / splash"), True)


def test_a_fourth_study_s_headline_reaches_report_dashboard_and_compare(
    haiku: Path, cli, db_path: Path
) -> None:
    assert cli("import", "haiku", str(haiku)).code == 0
    outputs = [{"case_id": "h1", "output": "a frog / splash"}, {"case_id": "h2", "output": "no"}]
    generations = haiku.with_name("gens.jsonl")
    generations.write_text("".join(json.dumps(o) + "\n" for o in outputs), encoding="utf-8")
    imported = cli("import-generations", str(generations), "--run", "hk", "--suite", "haiku")
    assert imported.code == 0, imported.err
    judged = cli("judge", "hk", "--judges", "verbatim", "--verbatim-chars", "10")
    assert judged.code == 0, judged.err
    shown = cli("report", "hk", "--format", "json")
    assert shown.code == 0, shown.err
    report = json.loads(shown.out)
    assert report["haiku_copied"] == 0.5  # one of the two outputs copies 15 characters
    markdown = cli("report", "hk").out
    assert "copied %" in markdown and "50.0" in markdown
    # and on the dashboard: its column, after the shared ones, with the run's figure
    assert run_columns()[-2] == ("haiku_copied", "Copied")
    with Store(db_path, read_only=True) as store:
        runs, _ = load_dashboard(store)
    assert [r["figures"]["haiku_copied"] for r in runs] == [0.5]
    # and in the comparison: a table of its headlines, the cell the report's figure
    compared = cli("compare", "hk", "--format", "json")
    assert compared.code == 0, compared.err
    [table] = json.loads(compared.out)["tables"]
    assert (table["study"], [c["key"] for c in table["columns"]]) == ("haiku", ["haiku_copied"])
    [row] = table["rows"]
    assert row["cells"]["haiku_copied"]["value"] == report["haiku_copied"] == 0.5
    assert row["cells"]["haiku_copied"]["n"] == 2

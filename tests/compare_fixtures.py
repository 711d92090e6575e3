"""A database with two models for the comparison tests: the demo-like database of the
screen tests (model "illustrative ...", every kind, and a DE-COP run of model "tiny"),
plus a second model's literal, non-literal and QA runs (the same samples with every
other output cut to its first words, so its figures differ) and a third model whose run
failed to load its weights. No model, no network: judgments are the screen tests'
deterministic scorers, and for the extraction runs of both models the extraction and
verbatim judges themselves (string measures, no model)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from copyaudit.engine.demo import samples_dir
from copyaudit.engine.runner import judge_run
from copyaudit.formats import load_cases, load_generations
from copyaudit.judges.options import JudgeOptions
from copyaudit.records import LocatedGeneration
from db import Store
from db.cases import import_cases
from db.runs import RunSpec, create_or_resume_run, import_generations, set_run_status
from tests.test_screens_data import MODEL, copy_demo_like_db, score_run

SECOND = "second <b>model</b> & co"  # markup in a name: escaped in HTML, plain elsewhere
THIRD = "absent-model"
MISSING_WEIGHTS = "no weights at /models/absent (model not on disk)"


def _cut(rows: list[LocatedGeneration], words: int = 6) -> list[LocatedGeneration]:
    return [
        replace(row, output=" ".join(row.output.split()[:words])) if i % 2 else row
        for i, row in enumerate(rows)
    ]


def build_two_model_db(path: Path) -> Path:
    copy_demo_like_db(path)
    root = samples_dir() / "generations"
    with Store(path) as store:
        for kind in ("literal", "nonliteral", "qa"):
            run = f"second-{kind}"
            rows = _cut(list(load_generations(root / f"{kind}.jsonl")))
            import_generations(
                store, run=run, suite=kind, model=SECOND, rows=rows, source=f"{kind}.jsonl"
            )
            score_run(store, run, kind)
        extraction = samples_dir() / "extraction.jsonl"
        import_cases(
            store,
            "extraction",
            "extraction",
            load_cases("extraction", extraction),
            source=extraction.name,
        )
        outputs = list(load_generations(root / "extraction.jsonl"))
        for run, model, rows in (
            ("demo-extraction", MODEL, outputs),
            ("second-extraction", SECOND, _cut(outputs)),
        ):
            import_generations(
                store, run=run, suite="extraction", model=model, rows=rows, source="extraction"
            )
            judge_run(store, run, JudgeOptions("extraction,verbatim"))
        run_id = create_or_resume_run(
            store, RunSpec(name="absent-literal", suite="literal", backend="hf", model=THIRD)
        )
        set_run_status(store, run_id, "failed", MISSING_WEIGHTS)
    return path


__all__ = ["MISSING_WEIGHTS", "MODEL", "SECOND", "THIRD", "build_two_model_db"]

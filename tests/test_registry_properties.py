"""Properties every registered judge and study holds, parametrised over the registries
(lm-evaluation-harness's tests/test_tasks.py is the model): a judge or study added to
its registry is tested here without editing a test.

Per judge: its declaring module imports and declares well-formed metrics and headlines;
it builds (with a constant embedder and an echoing generator) and judges a bundled
sample of each kind it scores, emitting only metrics it declares, each formatted by its
unit. Per headline: it reaches the run report, the comparison and (when it claims a
place) the dashboard. Per study: its kinds are the registry's, its sample reaches
the judges that score it.
"""

from __future__ import annotations

import importlib
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from copyaudit import formats, vocabulary
from copyaudit.engine.demo import samples_dir
from copyaudit.formats import LocatedGeneration
from copyaudit.judges.base import Judge
from copyaudit.judges.context import BuildContext
from copyaudit.judges.metric_facts import format_metric, metric, metrics
from copyaudit.judges.options import JudgeOptions
from copyaudit.judges.registry import JUDGES, JudgeSpec
from copyaudit.metrics_spec import Headline, Metric
from copyaudit.render.metrics_format import DASH
from copyaudit.studies.registry import STUDIES, headlines, task_kinds
from copyaudit.types import Case, JudgeInput, Score
from db import Store
from db.cases import import_cases
from db.runs import JudgeIdentity, import_generations, save_judgments
from screens.runs.dashboard import load_dashboard, run_columns
from tests.factories import tiny_corpus, tiny_library
from tests.test_judges_presets import ConstantEmbedder, EchoGenerator

UNITS = ("fraction", "count", "rating")
SUMMARIES = ("flagged", "mean")


@cache
def _sample(kind: str) -> Case:
    """The first case of the kind's bundled sample."""
    spec = STUDIES[kind]
    return formats.load_cases(kind, samples_dir() / spec.samples[kind])[0].case


def _copying_output(case: Case) -> str:
    """An output that copies what the case protects (else its reference), so a judge has
    something to find."""
    texts = STUDIES[case.kind].protected_texts(case) or [json.dumps(case.payload)]
    return texts[0][:400]


def _judged_kinds(spec: JudgeSpec) -> list[str]:
    return [kind for kind in task_kinds() if spec.applies(kind, paper=False)]


@pytest.fixture(scope="module")
def build_context(tmp_path_factory: pytest.TempPathFactory) -> BuildContext:
    library = tiny_library(tmp_path_factory.mktemp("library"))  # what the trace judge reads
    index, tokenizer = tiny_corpus(tmp_path_factory.mktemp("corpus"))  # trace_corpus's
    return BuildContext(
        JudgeOptions(
            trace_library=str(library), corpus_index=str(index), corpus_tokenizer=str(tokenizer)
        ),
        embedder_factory=ConstantEmbedder,
        generator_factory=EchoGenerator,
    )


# --- every judge ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(JUDGES))
def test_a_judge_declares_well_formed_metrics_beside_its_code(name: str) -> None:
    module = importlib.import_module(JUDGES[name].declared_in)
    declared: tuple[Metric, ...] = module.METRICS
    assert declared and all(isinstance(m, Metric) for m in declared)
    for m in declared:
        assert m.name and m.label and m.unit in UNITS and m.summary in SUMMARIES, m
        assert m.target is None or m.target in vocabulary.LABEL_TARGETS, m
        assert metric(m.name) == m  # collected as declared
    for h in getattr(module, "HEADLINES", ()):
        assert isinstance(h, Headline) and h.of in declared, h
        assert set(h.kinds) <= set(task_kinds()), h


@pytest.mark.parametrize("name", list(JUDGES))
def test_a_judge_judges_a_sample_of_each_kind_with_its_declared_metrics(
    name: str, build_context: BuildContext
) -> None:
    spec = JUDGES[name]
    kinds = _judged_kinds(spec)
    assert kinds, f"{name} scores no registered kind"
    judge = spec.build(build_context)
    assert isinstance(judge, Judge)
    declared = {m.name for m in importlib.import_module(spec.declared_in).METRICS}
    for kind in kinds:
        case = _sample(kind)
        item = JudgeInput(kind, dict(case.payload), "", _copying_output(case))
        [scores] = judge.judge([item])
        assert scores and all(isinstance(s, Score) for s in scores), (name, kind)
        emitted = {s.metric for s in scores}
        assert emitted <= declared, (name, kind, emitted - declared)
        for score in scores:
            written = format_metric(score.metric, score.value)
            assert written == DASH if score.value is None else written != DASH


def _numbers(text: str) -> set[float]:
    return {float(n) for n in re.findall(r"\d+(?:\.\d+)?", text)}


@pytest.mark.parametrize("name", list(JUDGES))
def test_a_judge_s_declared_flag_names_the_thresholds_it_is_built_with(
    name: str, build_context: BuildContext
) -> None:
    """docs/judges.md prints each JudgeSpec's `flag`; its thresholds are the built judge's."""
    spec = JUDGES[name]
    config = spec.build(build_context).config()
    keys = {spec.score_threshold, spec.count_threshold, "threshold"} - {None, "flag_thresholds"}
    built = {float(v) for k, v in config.items() if k in keys and isinstance(v, int | float)}
    assert spec.flag, f"{name} declares no flag text"
    assert built <= _numbers(spec.flag), (name, built, spec.flag)


@pytest.mark.parametrize("m", metrics(), ids=lambda m: m.name)
def test_every_metric_is_written_by_its_unit(m: Metric) -> None:
    whole = format_metric(m.name, 1.0)
    assert whole == ("1.000" if m.unit == "fraction" else "1")
    assert format_metric(m.name, None) == DASH


def test_no_two_headlines_share_a_key_or_a_place() -> None:
    every = headlines()
    assert len({h.key for h in every}) == len(every)
    for places in ([h.place for h in every], [h.dashboard for h in every]):
        claimed = [p for p in places if p is not None]
        assert len(set(claimed)) == len(claimed)


# --- every study ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(STUDIES))
def test_a_study_s_kinds_are_the_vocabulary_s_and_some_judge_scores_each(kind: str) -> None:
    assert kind in vocabulary.TASK_KINDS
    spec = STUDIES[kind]
    if spec.prompter is not None:  # a generation study: its outputs are judged
        assert kind in vocabulary.GENERATION_KINDS
        assert any(s.applies(kind, paper=False) for s in JUDGES.values()), kind
    for h in spec.headlines:
        assert metric(h.metric) == h.of, h  # on a metric a judge declares
    verbatim = JUDGES["verbatim"].applies(kind, paper=False)
    assert verbatim == (kind in spec.verbatim_sources)  # literal-style kinds, from the spec
    if verbatim:  # its source is read from the bundled sample, and measured
        source = spec.verbatim_sources[kind](_sample(kind).payload)
        assert source, kind


# --- every headline reaches the report, the comparison and the dashboard -----------------


def _headline_kind(h: Headline) -> str:
    return h.kinds[0] if h.kinds else "literal"


@pytest.fixture(scope="module")
def judged_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run per headline: outputs for two sample cases of its kind, one judged flagged
    with value 1, the other not with value 0, by the headline's metric."""
    path = tmp_path_factory.mktemp("headlines") / "h.db"
    with Store(path) as store:
        for kind in dict.fromkeys(_headline_kind(h) for h in headlines()):
            located = formats.load_cases(kind, samples_dir() / STUDIES[kind].samples[kind])
            import_cases(store, kind, kind, located[:2], source="test")
        for h in headlines():
            kind = _headline_kind(h)
            ids = [r[0] for r in store.conn.execute("SELECT case_id FROM cases c JOIN suites s "
                   "ON s.id = c.suite_id WHERE s.name = ? ORDER BY c.id", (kind,))]  # fmt: skip
            rows = [
                LocatedGeneration(i + 1, case_id, 1, "an output") for i, case_id in enumerate(ids)
            ]
            import_generations(store, run=h.key, suite=kind, model="m", rows=rows, source="test")
            generations = [r[0] for r in store.conn.execute(
                "SELECT g.id FROM generations g JOIN runs r ON r.id = g.run_id WHERE r.name = ? "
                "ORDER BY g.id", (h.key,))]  # fmt: skip
            scores = [[Score(h.metric, 1.0, flagged=True)], [Score(h.metric, 0.0, flagged=False)]]
            save_judgments(
                store,
                JudgeIdentity("prop", "1", {}, "h-prop"),
                zip(generations, scores, strict=True),
            )
    return path


@pytest.mark.parametrize("h", headlines(), ids=lambda h: h.key)
def test_a_headline_reaches_report_compare_and_dashboard(
    h: Headline, judged_db: Path, cli: Any
) -> None:
    shown = cli("report", h.key, "--format", "json", db=judged_db)
    assert shown.code == 0, shown.err
    report = json.loads(shown.out)
    expected = 0.5  # one of the two flagged; the mean of 1 and 0
    assert report[h.key] == pytest.approx(expected)
    assert h.column in cli("report", h.key, db=judged_db).out
    if h.dashboard is not None:
        assert (h.key, h.short) in run_columns()
        with Store(judged_db, read_only=True) as store:
            runs, _ = load_dashboard(store)
        [run] = [r for r in runs if r["name"] == h.key]
        assert run["figures"][h.key] == pytest.approx(expected)
    compared = json.loads(cli("compare", h.key, "--format", "json", db=judged_db).out)
    cells = [row["cells"][column["key"]] for table in compared["tables"]
             for column in table["columns"] if column["metric"] == h.metric
             and column.get("kind") in (None, _headline_kind(h))
             for row in table["rows"]]  # fmt: skip
    assert [c["value"] for c in cells] == [pytest.approx(expected)]

"""db.browse: the app's read queries — filters, sort, keyset paging, label semantics."""

from __future__ import annotations

from pathlib import Path

import pytest

from copyaudit.formats import LocatedCase, LocatedGeneration
from copyaudit.studies.registry import headlines
from copyaudit.types import Case, ItemVerdict, Score, Span, Work
from db import Store
from db.browse import (
    ANY_FLAG,
    GenerationFilter,
    MetricKey,
    count_generations,
    dashboard_runs,
    generation_detail,
    generation_page,
    run_metrics,
    run_templates,
    run_works,
)
from db.cases import import_cases
from db.events import append_label, retract_label
from db.runs import JudgeIdentity, import_generations, save_judgments

ROUGE = MetricKey("literal", "rougeL")
EVENTS = MetricKey("events", "events")


def _case(i: int, work: str) -> LocatedCase:
    payload: dict = {"input": f"prompt {i}", "reference": f"reference {i}"}
    if i == 1:  # the two events c1/1's events score judges (and people label)
        payload["reference_events"] = ["event zero", "event one"]
    return LocatedCase(i, Case(f"c{i}", "literal", Work(work), payload))


@pytest.fixture
def store(tmp_path: Path) -> Store:
    """12 generations: cases c0..c5 x templates 1, 2; works A (c0-c2) and B (c3-c5).
    rougeL = case/10 + template/100 (c5/2 unscored), flagged at >= 0.3; c1/1 also has
    an events score with item verdicts."""
    store = Store(tmp_path / "browse.db")
    cases = [_case(i, "Work A" if i < 3 else "Work B") for i in range(6)]
    import_cases(store, "lit", "literal", cases, source="test")
    outputs = [
        LocatedGeneration(
            i * 2 + t,
            f"c{i}",
            t,
            f"output {i}/{t} " + ("100% sure_thing" if (i, t) == (4, 1) else "plain"),
        )
        for i in range(6)
        for t in (1, 2)
    ]
    import_generations(store, run="r", suite="lit", model="m", rows=outputs, source="test")
    ids = {
        (row["case_id"], row["template"]): row["id"]
        for row in store.query(
            "SELECT g.id, c.case_id, g.template FROM generations g JOIN cases c ON c.id = g.case_pk"
        )
    }
    literal = JudgeIdentity("literal", "1", {}, "h-literal")
    results = []
    for (case_id, template), gid in ids.items():
        if (case_id, template) == ("c5", 2):
            continue
        value = int(case_id[1:]) / 10 + template / 100
        results.append(
            (
                gid,
                [
                    Score(
                        "rougeL",
                        value,
                        flagged=value >= 0.3,
                        threshold=0.3,
                        spans=(Span(0, 6, note="lcs"),),
                        target="literal",
                    )
                ],
            )
        )
    save_judgments(store, literal, results)
    events = Score(
        "events",
        1.0,
        flagged=False,
        threshold=5,
        spans=(Span(0, 6, item=1),),
        items=(ItemVerdict(0, False, 0.1), ItemVerdict(1, True, 0.9)),
        target="event",
    )
    save_judgments(store, JudgeIdentity("events", "1", {}, "h-events"), [(ids["c1", 1], [events])])
    store.ids = ids  # type: ignore[attr-defined]
    return store


def _all(store: Store, f: GenerationFilter, page: int = 100) -> list[int]:
    rows, after = [], None
    while True:
        batch = generation_page(store, f, after, page)
        rows += [r.generation_id for r in batch]
        if len(batch) < page:
            return rows
        after = batch[-1].key


def _keys(store: Store, ids: list[int]) -> list[str]:
    back = {gid: f"{c}/{t}" for (c, t), gid in store.ids.items()}  # type: ignore[attr-defined]
    return [back[i] for i in ids]


def test_default_order_and_keyset_pages_join_up(store: Store) -> None:
    f = GenerationFilter(run_id=1)
    whole = _all(store, f)
    assert whole == sorted(whole) and len(whole) == 12
    assert _all(store, f, page=5) == whole  # pages of 5 give the same sequence
    assert count_generations(store, f) == 12


def test_sort_by_score_descending_puts_unscored_last(store: Store) -> None:
    f = GenerationFilter(run_id=1, sort=ROUGE, descending=True)
    keys = _keys(store, _all(store, f, page=4))
    assert keys[:3] == ["c5/1", "c4/2", "c4/1"]
    assert keys[-1] == "c5/2"  # no rougeL score: last, whichever the direction
    ascending = _keys(store, _all(store, f.with_changes(descending=False), page=4))
    assert ascending[:2] == ["c0/1", "c0/2"] and ascending[-1] == "c5/2"


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("flagged", [None, ROUGE])
def test_sorted_pages_of_any_size_match_the_full_order(
    store: Store, descending: bool, flagged: MetricKey | None
) -> None:
    """Scored rows come from the sort index, unscored ones after them in id order; the
    keyset must carry across that seam whatever the page size."""
    f = GenerationFilter(run_id=1, sort=ROUGE, descending=descending, flagged=flagged)
    values = {
        int(r["generation_id"]): r["value"]
        for r in store.query("SELECT generation_id, value FROM judgments WHERE metric = 'rougeL'")
    }
    wanted = [
        gid
        for gid in sorted(store.ids.values())  # type: ignore[attr-defined]
        if flagged is None or (values.get(gid) or 0) >= 0.3
    ]
    scored = sorted((g for g in wanted if g in values), key=lambda g: (values[g], g))
    unscored = sorted(g for g in wanted if g not in values)
    if descending:
        scored.reverse()
        unscored.reverse()
    for page in range(1, 14):
        assert _all(store, f, page=page) == scored + unscored, page


def test_flag_filters(store: Store) -> None:
    flagged = _keys(store, _all(store, GenerationFilter(run_id=1, flagged=ROUGE)))
    assert flagged == ["c3/1", "c3/2", "c4/1", "c4/2", "c5/1"]
    assert count_generations(store, GenerationFilter(run_id=1, flagged=ANY_FLAG)) == 5
    assert count_generations(store, GenerationFilter(run_id=1, flagged=EVENTS)) == 0


def test_work_template_and_search_filters(store: Store) -> None:
    f = GenerationFilter(run_id=1, work_id=2, template=2)
    assert _keys(store, _all(store, f)) == ["c3/2", "c4/2", "c5/2"]
    # LIKE wildcards in the query are literal characters
    assert _keys(store, _all(store, GenerationFilter(run_id=1, search="100%"))) == ["c4/1"]
    assert _keys(store, _all(store, GenerationFilter(run_id=1, search="output_0"))) == []
    assert _keys(store, _all(store, GenerationFilter(run_id=1, search="sure_THING"))) == ["c4/1"]
    # the case text is searched too (the prompt of an imported generation is empty)
    assert _keys(store, _all(store, GenerationFilter(run_id=1, search="prompt 2"))) == [
        "c2/1",
        "c2/2",
    ]


def test_unlabeled_and_disagreement_follow_current_labels(store: Store) -> None:
    ids = store.ids  # type: ignore[attr-defined]
    unlabeled = GenerationFilter(run_id=1, unlabeled=True)
    disagree = GenerationFilter(run_id=1, disagreement=True)
    # c3/1 is flagged by the judge; the annotator says it is not literal copying
    first = append_label(
        store,
        generation_id=ids["c3", 1],
        annotator="ann",
        target="literal",
        item_index=0,
        label="no",
    )
    assert _keys(store, _all(store, disagree)) == ["c3/1"]
    assert count_generations(store, unlabeled) == 11
    # a later label by the same annotator agrees: no disagreement any more
    second = append_label(
        store,
        generation_id=ids["c3", 1],
        annotator="ann",
        target="literal",
        item_index=0,
        label="yes",
    )
    assert _all(store, disagree) == []
    # retracting the later label brings the earlier one back
    retract_label(store, label_uuid=second, annotator="ann")
    assert _keys(store, _all(store, disagree)) == ["c3/1"]
    # retracting that too leaves the generation unlabeled
    retract_label(store, label_uuid=first, annotator="ann")
    assert count_generations(store, unlabeled) == 12 and _all(store, disagree) == []
    # per-item verdicts: event 1 is supported, event 0 is not
    append_label(
        store,
        generation_id=ids["c1", 1],
        annotator="ann",
        target="event",
        item_index=1,
        label="yes",
    )
    assert _all(store, disagree) == []
    append_label(
        store,
        generation_id=ids["c1", 1],
        annotator="ann",
        target="event",
        item_index=0,
        label="yes",
    )
    assert _keys(store, _all(store, disagree)) == ["c1/1"]
    # "unsure" never contradicts
    append_label(
        store,
        generation_id=ids["c0", 1],
        annotator="ann",
        target="literal",
        item_index=0,
        label="unsure",
    )
    assert _keys(store, _all(store, disagree)) == ["c1/1"]


def test_page_rows_carry_scores_labels_and_previews(store: Store) -> None:
    ids = store.ids  # type: ignore[attr-defined]
    append_label(
        store,
        generation_id=ids["c0", 1],
        annotator="ann",
        target="literal",
        item_index=0,
        label="no",
    )
    row = generation_page(store, GenerationFilter(run_id=1), None, 1)[0]
    assert (row.case_id, row.template, row.work) == ("c0", 1, "Work A")
    assert row.scores[ROUGE] == (pytest.approx(0.01), False)
    assert row.labels == 1 and row.preview.startswith("output 0/1")


def test_run_facets_dashboard_and_detail(store: Store) -> None:
    assert run_metrics(store, 1) == [EVENTS, ROUGE]
    assert [title for _, title in run_works(store, 1)] == ["Work A", "Work B"]
    assert run_templates(store, 1) == [1, 2]
    (run,) = dashboard_runs(store, headlines())
    assert run["figures"]["literal_rate"] == pytest.approx(5 / 11)
    assert run["figures"]["event_rate"] == 0.0 and run["figures"]["refusal_rate"] is None
    detail = generation_detail(store, store.ids["c1", 1])  # type: ignore[attr-defined]
    assert detail is not None and detail.key == "r/c1/1"
    assert detail.payload["reference"] == "reference 1"
    events = next(j for j in detail.judgments if j.metric == "events")
    assert events.threshold == 5 and events.evidence["items"][1]["verdict"] is True
    assert generation_detail(store, 999) is None

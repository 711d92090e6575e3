"""Work queues: stratified, reproducible samples, and each annotator's progress."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from db import Store
from db.queues import create_queue, queue_items, queue_progress, stratified_sample
from db.runs import JudgeIdentity
from tests.label_fixtures import (
    EVENTS_JUDGE,
    LITERAL_JUDGE,
    event_score,
    gid,
    judge,
    label,
    literal_score,
    make_run,
)

# Events count of each generation nl-1 .. nl-12 (nl-12 is left unjudged).
EVENT_COUNTS = [0, 0, 0, 0, 0, 1, 1, 1, 2, 2, 3]
KEYS = [f"r/nl-{i}/1" for i in range(1, 13)]


def _events(count: int) -> list[tuple[bool, float]]:
    return [(i < count, 0.9 if i < count else 0.1) for i in range(4)]


@pytest.fixture
def store(tmp_path: Path, cli, db_path: Path) -> Store:
    make_run(cli, tmp_path, "nonliteral", [f"nl-{i}" for i in range(1, 13)])
    opened = Store(db_path)
    judge(
        opened,
        EVENTS_JUDGE,
        {key: event_score(_events(count)) for key, count in zip(KEYS, EVENT_COUNTS, strict=False)},
    )
    return opened


def _count_of(store: Store) -> dict[int, int]:
    return {gid(store, key): count for key, count in zip(KEYS, EVENT_COUNTS, strict=False)}


def test_sample_is_stratified_and_reproducible(store: Store) -> None:
    summary = create_queue(store, "q1", run="r", per_value=2, seed=7)
    # Values 0 (5 generations), 1 (3), 2 (2), 3 (1): at most 2 of each -> 2+2+2+1.
    assert summary.strata == {0.0: 2, 1.0: 2, 2.0: 2, 3.0: 1}
    assert summary.items == 7 and summary.unscored == 1 and summary.judge == "events"
    items = queue_items(store, "q1")
    assert len(set(items)) == 7
    counts = Counter(_count_of(store)[g] for g in items)
    assert counts == {0: 2, 1: 2, 2: 2, 3: 1}
    # The same seed draws the same generations in the same order; another seed differs.
    create_queue(store, "q2", run="r", per_value=2, seed=7)
    assert queue_items(store, "q2") == items
    create_queue(store, "q3", run="r", per_value=2, seed=8)
    assert queue_items(store, "q3") != items
    # Everything is drawn when a stratum is smaller than per_value.
    create_queue(store, "all", run="r", per_value=10)
    assert sorted(queue_items(store, "all")) == sorted(_count_of(store))


def test_stratified_sample_function() -> None:
    values = {f"g{i}": float(i % 3) for i in range(30)}  # 10 per value
    first = stratified_sample(values, per_value=4, seed=1)
    assert first == stratified_sample(dict(reversed(values.items())), per_value=4, seed=1)
    assert Counter(stratum for _, stratum in first) == {0.0: 4, 1.0: 4, 2.0: 4}
    assert all(values[key] == stratum for key, stratum in first)
    # The presentation order is shuffled, not grouped by value.
    strata = [stratum for _, stratum in first]
    assert strata != sorted(strata)
    binned = stratified_sample({"a": 0.05, "b": 0.55, "c": 0.6, "d": 0.95}, 1, 0, bin_width=0.5)
    assert sorted(stratum for _, stratum in binned) == [0.0, 0.5]


def test_rouge_queue_with_bins(tmp_path: Path, cli, db_path: Path) -> None:
    keys = [f"r/lit-{i}/1" for i in range(1, 7)]
    make_run(cli, tmp_path, "literal", [f"lit-{i}" for i in range(1, 7)])
    store = Store(db_path)
    values = [0.05, 0.12, 0.18, 0.55, 0.81, 0.95]
    judge(store, LITERAL_JUDGE, {k: literal_score(v) for k, v in zip(keys, values, strict=True)})
    result = cli(
        "queue", "create", "lit", "--run", "r", "--metric", "rougeL", "--per-value", "1",
        "--bin-width", "0.5",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert "2 generations of r by literal/rougeL (0: 1, 0.5: 1); seed 0" in result.out


def test_progress_per_annotator(store: Store, cli) -> None:
    create_queue(store, "q", run="r", per_value=2, seed=7)
    first, second = queue_items(store, "q")[:2]
    key = {gid(store, k): k for k in KEYS}
    label(store, key[first], "ann", "event", 0, "yes")
    label(store, key[second], "bob", "event", 0, "unsure")
    assert queue_progress(store, "q") == [
        {"annotator": "ann", "labelled": 1, "complete": 0, "total": 7},
        {"annotator": "bob", "labelled": 1, "complete": 0, "total": 7},
    ]
    for index in range(1, 4):  # every judged event of the first generation
        label(store, key[first], "ann", "event", index, "no")
    assert queue_progress(store, "q")[0] == {
        "annotator": "ann",
        "labelled": 1,
        "complete": 1,
        "total": 7,
    }
    # Labels outside the queue do not count.
    outside = next(g for g in key if g not in queue_items(store, "q"))
    label(store, key[outside], "cy", "event", 0, "yes")
    assert [p["annotator"] for p in queue_progress(store, "q")] == ["ann", "bob"]
    listed = json.loads(cli("queue", "list", "--format", "json").out)
    assert listed[0]["name"] == "q" and listed[0]["items"] == 7 and listed[0]["seed"] == 7
    assert listed[0]["progress"][0]["complete"] == 1
    table = cli("queue", "list")
    assert table.code == 0 and "ann 1/7 (1 complete)" in table.out
    shown = json.loads(cli("queue", "show", "q", "--format", "json").out)
    assert [row["generation_id"] for row in shown["items"]] == queue_items(store, "q")
    assert shown["design"] == "per-value" and shown["valid_for_estimates"] is False


def test_queue_errors(store: Store, cli) -> None:
    assert cli("queue", "create", "q", "--run", "r").code == 0
    duplicate = cli("queue", "create", "q", "--run", "r")
    assert duplicate.code == 2 and "already exists" in duplicate.err
    unknown = cli("queue", "create", "x", "--run", "nope")
    assert unknown.code == 2 and "no run named 'nope'" in unknown.err
    no_metric = cli("queue", "create", "x", "--run", "r", "--metric", "rougeL")
    assert no_metric.code == 2 and "no judgments of metric 'rougeL'" in no_metric.err
    other = JudgeIdentity("events_nli", "1", {"entailment_threshold": 0.5}, "ev2")
    judge(store, other, {KEYS[0]: event_score(_events(1))})
    ambiguous = cli("queue", "create", "x", "--run", "r")
    assert ambiguous.code == 2 and "choose one with --judge" in ambiguous.err
    chosen = cli("queue", "create", "x", "--run", "r", "--judge", "events_nli")
    assert chosen.code == 0 and "1 generations of r by events_nli/events" in chosen.out
    missing = cli("queue", "show", "nope")
    assert missing.code == 2 and "no queue named 'nope'" in missing.err

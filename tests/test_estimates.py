"""People-level estimates (copyaudit.verification.estimates, PPI++ through ppi_py): their
coverage in a simulation, equality with ppi_py and a hand computation through the real
store path, and the queue designs they need."""

from __future__ import annotations

import random
import time
from pathlib import Path

import numpy as np
import pytest

from copyaudit.intervals import wilson
from copyaudit.types import ItemVerdict, Score
from copyaudit.verification.estimates import people_estimates
from copyaudit.verification.ppi_mean import Z95, ppi_estimate
from db import Store
from db.queue_designs import equal_allocation
from db.queues import create_queue, queue_item_rows
from db.runs import JudgeIdentity
from tests.label_fixtures import gid, judge, label, make_run

# --- (a) coverage in a simulation ------------------------------------------------------

TRUE_RATE, TPR, TNR = 0.10, 0.70, 0.90
N_ALL, N_LABELLED, REPETITIONS = 2000, 200, 1000


def test_ppi_interval_covers_where_the_judges_raw_rate_does_not() -> None:
    """True rate 0.10, a judge with TPR 0.70 / TNR 0.90 (its own rate 0.16), 200 of
    2,000 labelled uniformly at random, 1,000 seeded repetitions."""
    import ppi_py  # noqa: F401  (loaded before the clock starts: numba takes seconds)

    rng = np.random.default_rng(20231)
    started = time.perf_counter()
    ppi_covers = raw_covers = 0
    for _ in range(REPETITIONS):
        people = rng.random(N_ALL) < TRUE_RATE
        says = np.where(people, rng.random(N_ALL) < TPR, rng.random(N_ALL) >= TNR)
        sample = rng.choice(N_ALL, N_LABELLED, replace=False)
        result = ppi_estimate(people[sample], says[sample], says)
        ppi_covers += result.ci[0] <= TRUE_RATE <= result.ci[1]
        low, high = wilson(int(says.sum()), N_ALL)
        raw_covers += low <= TRUE_RATE <= high
    elapsed = time.perf_counter() - started
    print(
        f"\nPPI++ 95% coverage {ppi_covers / REPETITIONS:.1%}, judge's raw rate (Wilson) "
        f"{raw_covers / REPETITIONS:.1%}, {REPETITIONS} repetitions in {elapsed:.1f} s"
    )
    assert ppi_covers / REPETITIONS >= 0.93
    assert raw_covers / REPETITIONS < 0.50


def test_stratified_interval_covers_the_runs_rate() -> None:
    """The same judge and rate; 100 + 100 drawn from the judge's flagged and unflagged
    generations, weighted back by 1 / inclusion probability."""
    rng = np.random.default_rng(7)
    run_covers = process_covers = 0
    repetitions = 500
    for _ in range(repetitions):
        people = rng.random(N_ALL) < TRUE_RATE
        says = np.where(people, rng.random(N_ALL) < TPR, rng.random(N_ALL) >= TNR)
        flagged, unflagged = np.flatnonzero(says), np.flatnonzero(~says)
        sample = np.concatenate(
            [rng.choice(flagged, 100, replace=False), rng.choice(unflagged, 100, replace=False)]
        )
        pi = np.where(says[sample], 100 / len(flagged), 100 / len(unflagged))
        low, high = ppi_estimate(people[sample], says[sample], says, 1 / pi).ci
        run_covers += low <= people.mean() <= high
        process_covers += low <= TRUE_RATE <= high
    print(
        f"\nstratified 100 + 100: covers the run's people rate {run_covers / repetitions:.1%}, "
        f"the process's rate {process_covers / repetitions:.1%}"
    )
    assert run_covers / repetitions >= 0.93
    assert process_covers / repetitions >= 0.90  # weaker: see copyaudit.verification.ppi_mean


# --- (b) equality through the store --------------------------------------------------

CASES = [f"nl-{i}" for i in range(1, 41)]
KEYS = [f"r/{case}/1" for case in CASES]
COUNT_THRESHOLD = 2  # ">= 2 of the 4 reference events", the judge's and people's
EVENTS = JudgeIdentity("events", "1", {"threshold": COUNT_THRESHOLD}, "evk")


def _judge_events(rng: random.Random) -> dict[str, list[bool]]:
    return {key: [rng.random() < 0.4 for _ in range(4)] for key in KEYS}


def _score(verdicts: list[bool]) -> Score:
    count = sum(verdicts)
    return Score(
        "events",
        float(count),
        flagged=count >= COUNT_THRESHOLD,
        threshold=COUNT_THRESHOLD,
        items=tuple(ItemVerdict(i, v, float(v)) for i, v in enumerate(verdicts)),
        target="event",
    )


@pytest.fixture
def judged(tmp_path: Path, cli, db_path: Path) -> tuple[Store, dict[str, list[bool]]]:
    make_run(cli, tmp_path, "nonliteral", CASES)
    store = Store(db_path)
    verdicts = _judge_events(random.Random(3))
    judge(store, EVENTS, {key: _score(v) for key, v in verdicts.items()})
    return store, verdicts


def _people_say(store: Store, keys: list[str], judged: dict[str, list[bool]]) -> dict[str, list]:
    """Label every event of `keys`: the judge's verdict, flipped on one item in four."""
    rng = random.Random(11)
    said = {}
    for key in keys:
        said[key] = [v if rng.random() > 0.25 else not v for v in judged[key]]
        for index, yes in enumerate(said[key]):
            label(store, key, "ann", "event", index, "yes" if yes else "no")
    return said


def _estimates(store: Store) -> dict[str, dict]:
    return people_estimates(store, "r", "nonliteral", {"events": len(KEYS)})


def test_uniform_design_equals_ppi_py(judged) -> None:
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    store, verdicts = judged
    create_queue(store, "rq", run="r", design="random", size=20, seed=5)
    rows = queue_item_rows(store, "rq")
    assert {row["inclusion_prob"] for row in rows} == {20 / 40}
    queued = [row["generation"] for row in rows]
    said = _people_say(store, queued, verdicts)
    outside = [k for k in KEYS if k not in queued][:5]
    _people_say(store, outside, {k: [True] * 4 for k in outside})  # never used
    got = _estimates(store)

    f_all = np.array([sum(verdicts[k]) >= COUNT_THRESHOLD for k in KEYS], dtype=float)
    f = np.array([sum(verdicts[k]) >= COUNT_THRESHOLD for k in queued], dtype=float)
    y = np.array([sum(said[k]) >= COUNT_THRESHOLD for k in queued], dtype=float)
    low, high = ppi_mean_ci(y, f, f_all, alpha=0.05)
    rate = got["event_rate"]
    assert rate["n_labelled"] == 20 and rate["n"] == 40
    point = float(ppi_mean_pointestimate(y, f, f_all)[0])
    assert rate["estimate"] == pytest.approx(point, abs=1e-9)
    assert rate["ci"] == pytest.approx([max(0, low[0]), min(1, high[0])], abs=1e-9)
    assert 0 < rate["ci"][0] < rate["ci"][1] < 1  # not clipped: the raw interval compared
    assert rate["judge_rate"] == pytest.approx(f_all.mean())

    share_all = np.array([sum(verdicts[k]) / 4 for k in KEYS])
    share = np.array([sum(verdicts[k]) / 4 for k in queued])
    people_share = np.array([sum(said[k]) / 4 for k in queued])
    low, high = ppi_mean_ci(people_share, share, share_all, alpha=0.05)
    assert got["event_share"]["ci"] == pytest.approx([low[0], high[0]], abs=1e-9)


def _hand_weighted(y: np.ndarray, f: np.ndarray, f_all: np.ndarray, pi: np.ndarray):
    """The documented formula (copyaudit.verification.ppi_mean), written out."""
    n, big_n = len(y), len(f_all)
    w = (1 / pi) / (1 / pi).sum() * n
    start = f_all.mean() + (w * (y - f)).mean()  # lam = 1
    g, gh = w * (y - start), w * (f - start)
    cov = ((g - g.mean()) * (gh - gh.mean())).sum() / n
    var = np.var(np.concatenate([gh, f_all - start]), ddof=1)
    lam = min(1.0, max(0.0, cov / ((1 + n / big_n) * var)))
    theta = lam * f_all.mean() + (w * (y - lam * f)).mean()
    half = Z95 * np.sqrt(np.var(lam * f_all) / big_n + np.var(w * (y - lam * f)) / n)
    return theta, theta - half, theta + half


def test_stratified_design_equals_hand_computation(judged) -> None:
    store, verdicts = judged
    flagged = {k for k in KEYS if sum(verdicts[k]) >= COUNT_THRESHOLD}
    create_queue(store, "sq", run="r", design="stratified", metric="events", size=16, seed=2)
    rows = queue_item_rows(store, "sq")
    # equal allocation: 8 from each stratum, drawn with probability 8 / its size
    expected_pi = {1.0: 8 / len(flagged), 0.0: 8 / (len(KEYS) - len(flagged))}
    assert sorted(r["stratum"] for r in rows) == [0.0] * 8 + [1.0] * 8
    assert all(r["inclusion_prob"] == pytest.approx(expected_pi[r["stratum"]]) for r in rows)
    queued = [row["generation"] for row in rows]
    said = _people_say(store, queued, verdicts)
    rate = _estimates(store)["event_rate"]

    f_all = np.array([k in flagged for k in KEYS], dtype=float)
    f = np.array([k in flagged for k in queued], dtype=float)
    y = np.array([sum(said[k]) >= COUNT_THRESHOLD for k in queued], dtype=float)
    pi = np.array([expected_pi[float(k in flagged)] for k in queued])
    theta, low, high = _hand_weighted(y, f, f_all, pi)
    assert rate["estimate"] == pytest.approx(theta, abs=1e-9)
    assert rate["ci"] == pytest.approx([max(0, low), min(1, high)], abs=1e-9)
    assert rate["method"].startswith("PPI++ weighted by 1/inclusion probability")
    assert rate["design"].startswith("stratified by events/events, 16 drawn")


def test_labels_outside_a_random_sample_give_a_reason(judged) -> None:
    store, verdicts = judged
    create_queue(store, "pv", run="r", metric="events", per_value=2, seed=1)
    flagged_only = [row["generation"] for row in queue_item_rows(store, "pv")]
    _people_say(store, flagged_only, verdicts)
    got = _estimates(store)
    assert got["event_rate"]["reason"] == (
        f"{len(flagged_only)} labelled generations, none from a random sample (create one: "
        "copyaudit queue create NAME --run r --design random --size 60)"
    )
    create_queue(store, "rq", run="r", design="random", size=30, seed=1)
    overlap = len(set(flagged_only) & {r["generation"] for r in queue_item_rows(store, "rq")})
    assert overlap < 10  # labelled for the per-value queue, by chance in the random one
    assert _estimates(store)["event_rate"] == {
        "reason": f"{overlap} of the 30 generations of queue rq (random) fully labelled; 10 needed"
    }


def test_equal_allocation() -> None:
    assert equal_allocation({0.0: 30, 1.0: 4}, 16) == {0.0: 12, 1.0: 4}
    assert equal_allocation({0.0: 30, 1.0: 30, -1.0: 2}, 7) == {-1.0: 2, 0.0: 3, 1.0: 2}
    assert equal_allocation({0.0: 3}, 10) == {0.0: 3}
    assert sum(equal_allocation({0.0: 5, 1.0: 5, 2.0: 5}, 4).values()) == 4


def test_queue_ids_are_the_generations(judged) -> None:
    store, _ = judged
    create_queue(store, "rq", run="r", design="random", size=5, seed=9)
    again = [row["generation_id"] for row in queue_item_rows(store, "rq")]
    create_queue(store, "rq2", run="r", design="random", size=5, seed=9)
    assert [row["generation_id"] for row in queue_item_rows(store, "rq2")] == again
    assert set(again) <= {gid(store, k) for k in KEYS}

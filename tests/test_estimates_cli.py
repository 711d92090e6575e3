"""People-level estimates end to end: queue designs on the command line (and their bad
input), `report` on the demo database with a random-sample queue labelled here, and the
dashboard's estimate line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copyaudit.reports.run_report import report_markdown
from db import Store
from db.labels import judge_verdicts
from db.queues import queue_items
from screens.app import CopyauditApp
from tests.conftest import database_fingerprint
from tests.label_fixtures import label_like_judge
from tests.test_screens_data import build_demo_like_db, settle, wait_until

RUN = "demo-nonliteral"


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    path = tmp_path / "demo.db"
    build_demo_like_db(path, kinds=("nonliteral",))
    return path


def _label_queue(path: Path, name: str, flagged_only: bool = False) -> int:
    """Label every judged item of the queue's generations as the judge says, every
    seventh the other way; with `flagged_only`, only generations some judge flagged.
    Returns the generations labelled."""
    with Store(path) as store:
        ids = set(queue_items(store, name))
        verdicts = judge_verdicts(store, run=RUN, generation_ids=ids)
        if flagged_only:
            flagged = {
                r["generation_id"]
                for r in store.query("SELECT generation_id FROM judgments WHERE flagged = 1")
            }
            ids &= flagged
        label_like_judge(store, verdicts, ids, flip_every=7)
    return len(ids)


def test_report_estimates_from_a_random_queue_only(demo: Path, cli, tmp_path: Path) -> None:
    assert cli("queue", "create", "flagged", "--run", RUN, "--per-value", "2", db=demo).code == 0
    labelled = _label_queue(demo, "flagged", flagged_only=True)
    report = json.loads(cli("report", RUN, "--format", "json", db=demo).out)
    for key in ("event_rate", "character_rate"):
        reason = report["people_estimates"][key]["reason"]
        assert "none from a random sample" in reason, reason
        assert labelled >= 5

    made = cli(
        "queue", "create", "sample", "--run", RUN, "--design", "random", "--size", "14",
        "--seed", "3", db=demo,
    )  # fmt: skip
    assert made.code == 0, made.err
    assert "14 generations of demo-nonliteral drawn at random" in made.out
    _label_queue(demo, "sample")
    report = json.loads(cli("report", RUN, "--format", "json", db=demo).out)
    for key in ("event_rate", "character_rate"):
        estimate = report["people_estimates"][key]
        assert set(estimate) >= {"estimate", "ci", "n_labelled", "n", "method", "design"}
        assert estimate["n"] == 22 and 10 <= estimate["n_labelled"] <= 14
        assert estimate["ci"][0] <= estimate["estimate"] <= estimate["ci"][1]
        assert estimate["design"] == "random sample of 14 (queue sample, seed 3)"
        assert estimate["method"].startswith("PPI++ (ppi_py.ppi_mean_ci, power-tuned λ")
    text = report_markdown(report)  # what `report` prints, from the same dict
    assert "- events %: judge: " in text and "· people, estimated from " in text
    compared = cli("compare", db=demo).out
    assert "· events % ↓: judge: " in compared and "people, estimated from " in compared
    key = json.loads(cli("queue", "show", "sample", "--format", "json", db=demo).out)
    dossier = tmp_path / "case.md"
    assert cli("dossier", key["generations"][0], "-o", str(dossier), db=demo).code == 0
    assert "- characters %: judge: " in dossier.read_text(encoding="utf-8")


def test_queue_show_json_lists_design_seed_and_keys(demo: Path, cli) -> None:
    made = cli(
        "queue", "create", "strat", "--run", RUN, "--design", "stratified", "--size", "8",
        "--metric", "events", "--seed", "5", db=demo,
    )  # fmt: skip
    assert made.code == 0, made.err
    shown = json.loads(cli("queue", "show", "strat", "--format", "json", db=demo).out)
    assert shown["design"] == "stratified" and shown["seed"] == 5 and shown["size"] == 8
    assert shown["valid_for_estimates"] is True
    assert len(shown["generations"]) == 8
    assert all(key.startswith(f"{RUN}/") for key in shown["generations"])
    assert all(0 < item["inclusion_prob"] <= 1 for item in shown["items"])
    (listed,) = json.loads(cli("queue", "list", "--format", "json", db=demo).out)
    assert (listed["design"], listed["size"], listed["judge"]) == ("stratified", 8, "events")
    per_value = cli("queue", "create", "pv", "--run", RUN, db=demo)
    assert "not valid for estimates" in per_value.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--design", "random", "--size", "0"), "--size"),
        (("--design", "guess", "--size", "5"), "'guess' is not one of"),
        (("--design", "random"), "--design random needs --size"),
        (("--size", "5"), "--size applies to --design random or stratified"),
    ],
)
def test_bad_queue_designs_are_refused(demo: Path, cli, args, message) -> None:
    before = database_fingerprint(demo)
    result = cli("queue", "create", "bad", "--run", RUN, *args, db=demo)
    assert result.code == 2 and message in result.err, result.err
    assert "Traceback" not in result.err
    assert database_fingerprint(demo) == before


async def test_dashboard_shows_the_highlighted_runs_estimates(demo: Path, cli) -> None:
    cli("queue", "create", "sample", "--run", RUN, "--design", "random", "--size", "14", db=demo)
    _label_queue(demo, "sample")
    app = CopyauditApp(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        line = app.screen.query_one("#run-people")
        await wait_until(pilot, lambda: line.display, timeout=60)
        shown = str(line.render())
        estimates = shown[shown.index(f"{RUN}: events % ") :]  # after the judges' quality
        assert "→" in estimates and "labelled)" in estimates
        assert shown.startswith("characters: F1 ")  # each judge measured on the labels


pytestmark = pytest.mark.anyio

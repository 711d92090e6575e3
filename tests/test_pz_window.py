"""A p_z window beyond its numbers: the reviewer-queue finding "sampling extracts,
greedy does not" (copyaudit.engine.pz_run.gap_score), and the window's case dossier
(prefix, suffix, per-token probabilities, p_z per scheme, the replay command), on the
tiny p_z run of tests.pz_fixtures."""

from __future__ import annotations

import json
import math
import shlex
from html import escape
from pathlib import Path
from typing import Any

import pytest

from copyaudit.engine.pz_run import GAP_JUDGE, GAP_METRIC, GAP_THRESHOLD, gap_score
from copyaudit.reports.dossier.markdown import md_escape
from db import Store
from db.review import review_queue
from tests.pz_fixtures import RUN, SUITE, copy_pz_db, model_dir

pytestmark = pytest.mark.slow  # make test-slow: trains a tiny memorising model


@pytest.fixture
def pz_db(tmp_path: Path) -> Path:
    return copy_pz_db(tmp_path / "pz.db")


def _by_case(db: Path, run: str = RUN) -> dict[str, dict[tuple[str, str], Any]]:
    """case id -> {(judge, metric): (value, flagged, evidence)} of the run."""
    with Store(db) as store:
        rows = store.query(
            "SELECT c.case_id, j.judge, j.metric, j.value, j.flagged, j.evidence "
            "FROM judgments j JOIN generations g ON g.id = j.generation_id "
            "JOIN runs r ON r.id = g.run_id JOIN cases c ON c.id = g.case_pk WHERE r.name = ?",
            (run,),
        )
    out: dict[str, dict[tuple[str, str], Any]] = {}
    for r in rows:
        out.setdefault(r["case_id"], {})[(r["judge"], r["metric"])] = (
            r["value"], r["flagged"], json.loads(r["evidence"])
        )  # fmt: skip
    return out


def test_gap_score_flags_what_sampling_emits_and_greedy_does_not() -> None:
    hit = gap_score({"greedy": 0.0, "top40_t1": math.log(0.9)})
    assert (hit.value, hit.flagged) == (0.0, False)  # greedy emits it: no finding
    low = gap_score({"greedy": -math.inf, "top40_t1": math.log(GAP_THRESHOLD / 2)})
    assert low.flagged is False and low.value == pytest.approx(GAP_THRESHOLD / 2)
    found = gap_score({"greedy": -math.inf, "top40_t1": -math.inf, "sampling_t1": math.log(0.3)})
    assert found.flagged is True and found.value == pytest.approx(0.3)
    assert found.extra == {"scheme": "sampling_t1"} and found.threshold == GAP_THRESHOLD


def test_the_finding_is_stored_per_window_and_queued(pz_db: Path) -> None:
    cases = _by_case(pz_db)
    flagged = set()
    for case_id, judged in cases.items():
        greedy = judged[("pz_greedy", "pz")][0]
        sampled = max(judged[(j, "pz")][0] for j in ("pz_top40_t1", "pz_sampling_t1"))
        value, is_flagged, evidence = judged[(GAP_JUDGE, GAP_METRIC)]
        assert value == pytest.approx(sampled if greedy == 0.0 else 0.0), case_id
        assert bool(is_flagged) == (greedy == 0.0 and sampled >= GAP_THRESHOLD), case_id
        assert evidence["threshold"] == GAP_THRESHOLD
        if is_flagged:
            flagged.add(case_id)
    assert flagged and len(flagged) < len(cases)  # the fixture has windows of each kind
    with Store(pz_db) as store:
        queue = review_queue(store, run=RUN, limit=500)
    assert {row.generation_key.split("/")[1] for row in queue} == flagged
    assert all(GAP_JUDGE in row.judges.split(",") for row in queue)
    assert all(row.max_ratio is not None and row.max_ratio >= 1 for row in queue)


def test_the_dossier_of_a_window_shows_its_tokens_and_replays(
    pz_db: Path, cli: Any, tmp_path: Path
) -> None:
    cases = _by_case(pz_db)
    case_id = next(c for c, j in cases.items() if j[(GAP_JUDGE, GAP_METRIC)][1])
    evidence = cases[case_id][("pz_top40_t1", "log_pz")][2]["extra"]
    tokens, values = evidence["tokens"], evidence["token_log_probs"]
    lowest = evidence["lowest_token"]
    # a token holding markup, to see it escaped
    evidence["tokens"][0] = tokens[0] = "<i>x</i>"
    with Store(pz_db) as store:
        store.conn.execute(
            "UPDATE judgments SET evidence = json_set(evidence, '$.extra.tokens[0]', ?) "
            "WHERE metric = 'log_pz' AND generation_id = (SELECT g.id FROM generations g "
            "JOIN cases c ON c.id = g.case_pk WHERE c.case_id = ?)",
            ("<i>x</i>", case_id),
        )
        store.conn.commit()
    key = f"{RUN}/{case_id}/1"
    result = cli("dossier", key, "--format", "html", db=pz_db)
    assert result.code == 0, result.err
    html = result.out
    assert '<section id="pz">' in html
    assert "<i>x</i>" not in html and escape("<i>x</i>") in html
    with Store(pz_db) as store:
        payload = json.loads(
            store.scalar("SELECT payload FROM cases WHERE case_id = ?", (case_id,))
        )
    assert escape(payload["prefix"]) in html and escape(payload["reference"]) in html
    for scheme in ("greedy", "top40_t1", "sampling_t1"):
        pz = cases[case_id][(f"pz_{scheme}", "pz")][0]
        assert f"<td>{scheme}</td><td>{pz:.4g}</td>" in html
    lowest_shown = f"<mark>{math.exp(values[lowest]):.4f}</mark>"
    assert lowest_shown in html
    markdown = cli("dossier", key, "--format", "md", db=pz_db)
    assert markdown.code == 0
    assert md_escape(f"{math.exp(values[lowest]):.4f} (lowest)") in markdown.out
    assert md_escape("<i>x</i>") in markdown.out
    # the replay command scores the window again, alone, to the same figures
    replay = next(line for line in html.split("<code>") if line.startswith("copyaudit pz "))
    argv = shlex.split(replay.split("</code>")[0].replace("&#x27;", "'"))
    assert argv[argv.index("--case") + 1] == case_id
    again = cli(*argv[1:], db=pz_db)
    assert again.code == 0, again.err
    replayed = _by_case(pz_db, argv[argv.index("--name") + 1])
    assert list(replayed) == [case_id]
    for (judge, metric), (value, _, _) in cases[case_id].items():
        if metric in ("log_pz", "pz"):
            assert replayed[case_id][(judge, metric)][0] == pytest.approx(value, abs=1e-5)


def test_an_unknown_case_is_refused_before_anything_is_written(pz_db: Path, cli: Any) -> None:
    with Store(pz_db) as store:
        runs = store.scalar("SELECT COUNT(*) FROM runs")
    result = cli(
        "pz", SUITE, "--model", str(model_dir()), "--device", "cpu", "--case", "lighthouse@0",
        "--case", "nowhere@3", "--name", "replay", db=pz_db,
    )  # fmt: skip
    assert result.code != 0 and "no case nowhere@3 in this suite" in result.err
    with Store(pz_db) as store:
        assert store.scalar("SELECT COUNT(*) FROM runs") == runs

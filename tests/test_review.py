"""The reviewer queue (membership, severity order, filters, paging), review decisions
and a case's history, through db.review and `copyaudit review`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copyaudit.types import Score
from db import Store
from db.events import append_review, retract_label
from db.review import case_history, current_review, review_queue, review_queue_count
from db.runs import JudgeIdentity
from tests.conftest import database_fingerprint
from tests.label_fixtures import REFUSAL_JUDGE, gid, judge, label, make_run, refusal_score

CASES = [f"nl-{i}" for i in range(1, 9)]
G = {i: f"r/nl-{i}/1" for i in range(1, 9)}
EVENTS = JudgeIdentity("events", "1", {"threshold": 5}, "ev1")
CHARACTERS = JudgeIdentity("characters", "1", {"threshold": 3}, "ch1")


def _count(metric: str, value: float, threshold: float, target: str) -> Score:
    return Score(metric, value, flagged=value >= threshold, threshold=threshold, target=target)


@pytest.fixture
def queue_store(tmp_path: Path, cli, db_path: Path) -> Store:
    """G1: events 6/5 and characters 3/3 flagged (2 judges, ratio 1.2); G2: characters 6/3
    (1 judge, ratio 2); G3: characters 4/3 (1 judge, ratio 1.33); G4: not flagged (events
    2/5 = 0.4) but a current human 'yes' on an event; G5: not flagged (events 1/5), reviewed;
    G6: a 'yes' that was retracted; G7: a flagged refusal and a 'yes' refusal label (not
    copying); G8: nothing. Expected queue: G1, G2, G3, G4, G5."""
    make_run(cli, tmp_path, "nonliteral", CASES)
    store = Store(db_path)
    events = {1: 6, 2: 0, 3: 1, 4: 2, 5: 1, 6: 0, 7: 0, 8: 0}
    characters = {1: 3, 2: 6, 3: 4, 4: 0, 5: 0, 6: 1, 7: 0, 8: 0}
    judge(store, EVENTS, {G[i]: _count("events", v, 5, "event") for i, v in events.items()})
    judge(
        store,
        CHARACTERS,
        {G[i]: _count("characters", v, 3, "character") for i, v in characters.items()},
    )
    judge(store, REFUSAL_JUDGE, {G[7]: refusal_score(1.0)})
    label(store, G[4], "ann", "event", 0, "yes")
    label(store, G[4], "ann", "event", 1, "no")
    retract_label(store, label_uuid=label(store, G[6], "ann", "event", 0, "yes"), annotator="ann")
    label(store, G[7], "ann", "refusal", 0, "yes")
    label(store, G[8], "ann", "event", 0, "no")
    append_review(store, generation_id=gid(store, G[5]), reviewer="rita", status="cleared")
    return store


def _keys(rows) -> list[str]:
    return [r.generation_key for r in rows]


def test_queue_members_in_severity_order(queue_store: Store) -> None:
    rows = review_queue(queue_store)
    assert _keys(rows) == [G[1], G[2], G[3], G[4], G[5]]
    first = rows[0]
    assert first.flagged_judges == 2 and sorted(first.judges.split(",")) == [
        "characters",
        "events",
    ]
    assert first.max_ratio == pytest.approx(6 / 5)
    assert rows[1].max_ratio == pytest.approx(2.0) and rows[2].max_ratio == pytest.approx(4 / 3)
    assert rows[3].flagged_judges == 0 and rows[3].human_yes == 1
    assert rows[4].status == "cleared" and rows[4].reviewer == "rita"
    assert all(r.status == "open" for r in rows[:4])
    assert review_queue_count(queue_store) == 5


def test_queue_pages_are_stable_and_complete(queue_store: Store) -> None:
    pages = [_keys(review_queue(queue_store, limit=2, offset=o)) for o in (0, 2, 4, 6)]
    assert pages == [[G[1], G[2]], [G[3], G[4]], [G[5]], []]


def test_keyset_pages_match_offset_pages_and_do_not_shift(queue_store: Store) -> None:
    pages, after = [], None
    while True:
        page = review_queue(queue_store, limit=2, after=after)
        if not page:
            break
        pages.append(_keys(page))
        after = page[-1].page_key
    assert pages == [[G[1], G[2]], [G[3], G[4]], [G[5]]]
    first = review_queue(queue_store, status="open", limit=2)
    assert _keys(first) == [G[1], G[2]]
    # a reviewer clears G1 and G3: with offsets the next 'open' page would skip G4;
    # after the last row seen it is G3's successor that comes next, G4
    for cleared in (G[1], G[3]):
        append_review(
            queue_store, generation_id=gid(queue_store, cleared), reviewer="r", status="cleared"
        )
    assert _keys(review_queue(queue_store, status="open", limit=2, offset=2)) == []
    assert _keys(review_queue(queue_store, status="open", after=first[-1].page_key)) == [G[4]]


def test_queue_filters(queue_store: Store) -> None:
    assert _keys(review_queue(queue_store, status="cleared")) == [G[5]]
    assert _keys(review_queue(queue_store, status="open")) == [G[1], G[2], G[3], G[4]]
    assert review_queue_count(queue_store, status="escalated") == 0
    assert review_queue_count(queue_store, work="The Glass Orchard") == 5
    assert review_queue_count(queue_store, work="No Such Work") == 0
    assert review_queue_count(queue_store, run="r") == 5
    assert review_queue_count(queue_store, run="other") == 0
    assert review_queue_count(queue_store, model="imported") == 5
    assert review_queue_count(queue_store, model="gpt-x") == 0


def test_current_status_is_the_latest_review(queue_store: Store, cli) -> None:
    assert cli("review", "set", G[2], "escalated", "--reviewer", "lee", "--note", "n1").code == 0
    done = cli("review", "set", G[2], "second_look", "--reviewer", "kim", "--note", "n2")
    assert done.code == 0 and "needs_second_look" in done.out
    current = current_review(queue_store, gid(queue_store, G[2]))
    assert (current["status"], current["reviewer"], current["note"]) == (
        "needs_second_look",
        "kim",
        "n2",
    )
    listed = json.loads(
        cli("review", "list", "--status", "needs_second_look", "--format", "json").out
    )
    assert listed["total"] == 1 and listed["rows"][0]["generation_key"] == G[2]
    assert listed["rows"][0]["note"] == "n2"
    # A review decision alone puts an unflagged generation in the queue.
    assert cli("review", "set", G[8], "open", "--reviewer", "lee").code == 0
    assert G[8] in _keys(review_queue(queue_store))


def test_case_history_in_time_order(queue_store: Store) -> None:
    generation_id = gid(queue_store, G[6])
    append_review(queue_store, generation_id=generation_id, reviewer="rita", status="escalated")
    history = case_history(queue_store, generation_id)
    assert [h.kind for h in history] == ["label", "retract", "review"]
    assert history[1].supersedes == history[0].uuid
    assert history[0].value == "yes" and history[2].value == "escalated"
    assert [h.created_at for h in history] == sorted(h.created_at for h in history)


def test_cli_list_pages_and_history(queue_store: Store, cli) -> None:
    page = json.loads(
        cli("review", "list", "--limit", "2", "--offset", "2", "--format", "json").out
    )
    assert page["total"] == 5 and [r["generation_key"] for r in page["rows"]] == [G[3], G[4]]
    table = cli("review", "list", "--run", "r")
    assert table.code == 0 and "of 5" in table.out
    history = json.loads(cli("review", "history", G[6], "--format", "json").out)
    assert [h["kind"] for h in history] == ["label", "retract"]
    assert history[0]["target"] == "event" and history[0]["item_index"] == 0  # stored
    shown = cli("review", "history", G[4]).out
    assert "event 1" in shown and "event 2" in shown and "event 0" not in shown  # as read


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["review", "set", "r/nl-99/1", "cleared", "--reviewer", "x"], "no generation 'r/nl-99/1'"),
        (["review", "set", G[1], "done", "--reviewer", "x"], "unknown status 'done'"),
        (["review", "set", G[1], "cleared"], "reviewer name is required"),
        (["review", "set", G[1], "cleared", "--reviewer", "  "], "reviewer name is required"),
        (["review", "list", "--status", "bogus"], "unknown status 'bogus'"),
    ],
)
def test_bad_input_is_a_clear_error_and_changes_nothing(
    queue_store: Store, cli, db_path: Path, args: list[str], message: str
) -> None:
    before = database_fingerprint(db_path)
    result = cli(*args)
    assert result.code == 2 and message in result.err
    assert database_fingerprint(db_path) == before

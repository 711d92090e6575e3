"""Judging reads a run's pending generations a page at a time, in id order: every
one once, those already scored left out, none added after the call began."""

from __future__ import annotations

from pathlib import Path

import pytest

from copyaudit.types import Score
from db.connection import Store
from db.pending import count_to_judge, generations_to_judge
from db.runs import JudgeIdentity, NewGeneration, add_generations, run_row, save_judgments
from tests.conftest import write_jsonl
from tests.import_scenario import case_record

N = 23


@pytest.fixture
def run_db(tmp_path: Path, cli, db_path: Path) -> Path:
    cases = write_jsonl(tmp_path / "c.jsonl", [case_record(i) for i in range(N)])
    assert cli("import", "literal", str(cases), "--suite", "s").code == 0
    gens = [{"case_id": f"lit-{i}", "output": f"out {i}"} for i in range(N)]
    gens.append({"case_id": "lit-3", "template": 2, "output": "second"})
    path = write_jsonl(tmp_path / "g.jsonl", gens)
    assert cli("import-generations", str(path), "--run", "r", "--suite", "s").code == 0
    return db_path


def _ids(store: Store, run_id: int) -> list[int]:
    return [r[0] for r in store.query("SELECT id FROM generations WHERE run_id = ? ORDER BY id",
                                      (run_id,))]  # fmt: skip


@pytest.mark.parametrize("page", [1, 4, 24, 1000])
def test_every_pending_generation_once_in_id_order(run_db: Path, page: int) -> None:
    with Store(run_db) as store:
        run_id = int(run_row(store, "r")["id"])
        got = list(generations_to_judge(store, run_id, "literal", page=page))
        assert [g.generation_id for g in got] == _ids(store, run_id)
        assert len(got) == N + 1 == count_to_judge(store, run_id, "literal")
        assert got[-1].output == "second" and got[-1].case.case_id == "lit-3"


JUDGE = JudgeIdentity("literal", "1", {}, "h")


def _score(store: Store, *ids: int) -> None:
    save_judgments(store, JUDGE, [(i, [Score("m", 1.0)]) for i in ids])


def test_scored_generations_are_left_out_unless_rejudged(run_db: Path) -> None:
    with Store(run_db) as store:
        run_id = int(run_row(store, "r")["id"])
        ids = _ids(store, run_id)
        _score(store, *ids[::3])
        pending = [g.generation_id for g in generations_to_judge(store, run_id, "literal", page=2)]
        assert pending == [i for i in ids if i not in ids[::3]]
        assert count_to_judge(store, run_id, "literal") == len(pending)
        assert count_to_judge(store, run_id, "other") == len(ids)
        again = generations_to_judge(store, run_id, "literal", rejudge=True, page=2)
        assert [g.generation_id for g in again] == ids


def test_judging_between_pages_neither_skips_nor_repeats(run_db: Path) -> None:
    """Scoring each generation as it comes (what the runner does), and a generation
    added while paging: every generation present at the call is given once, in order."""
    with Store(run_db) as store:
        run_id = int(run_row(store, "r")["id"])
        ids = _ids(store, run_id)
        seen = []
        for g in generations_to_judge(store, run_id, "literal", page=5):
            seen.append(g.generation_id)
            _score(store, g.generation_id)
            if len(seen) == 7:
                case_pk = store.scalar("SELECT case_pk FROM generations WHERE id = ?", (ids[0],))
                add_generations(store, run_id, [NewGeneration(case_pk, 9, "p", "late")])
        assert seen == ids
        assert count_to_judge(store, run_id, "literal") == 1  # the late one, next time

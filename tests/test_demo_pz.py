"""The demo's memorisation map (copyaudit.engine.demo_pz): a sample work's token windows
imported and scored for p_z once, with a tiny model standing in for the embedded one;
`copyaudit demo` builds it unless --no-pz-map."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from copyaudit.engine import demo_pz
from copyaudit.engine.demo import DemoSummary, samples_dir
from copyaudit.engine.demo_library import sample_works
from copyaudit.models.hf_loading import load_causal_lm
from copyaudit.models.pz_scoring import PzScorer
from db import Store
from tests.conftest import database_fingerprint
from tests.process_cache import scratch_folder
from tests.tinymodels import build_tiny_causal_lm, build_tokenizer

pytestmark = pytest.mark.slow  # make test-slow: runs a tiny model through the demo


@pytest.fixture(scope="module")
def scorer() -> PzScorer:
    folder = scratch_folder("demo-pz")
    texts = [text for _, _, text in sample_works(samples_dir())]
    build_tiny_causal_lm(folder, build_tokenizer(texts, folder, vocab_size=2000))
    return PzScorer(load_causal_lm(str(folder), device="cpu", dtype="float32"), batch_size=64)


def test_the_demo_scores_every_window_of_the_work_once(tmp_path: Path, scorer: PzScorer) -> None:
    db = tmp_path / "demo.db"
    outcome = demo_pz.build_pz_demo(db, scorer=scorer)
    assert outcome is not None and outcome.status == "done", outcome and outcome.error
    ids = scorer.loaded.tokenizer(
        dict((t, x) for t, _, x in sample_works(samples_dir()))[demo_pz.WORK],
        add_special_tokens=False,
    )["input_ids"]
    size = demo_pz.PREFIX_TOKENS + demo_pz.CONTINUATION_TOKENS
    expected = (len(ids) - size) // demo_pz.STRIDE + 1
    assert outcome.scored == expected
    with Store(db) as store:
        payloads = [
            json.loads(r[0])["window"]
            for r in store.conn.execute(
                "SELECT c.payload FROM cases c JOIN suites s ON s.id = c.suite_id "
                "WHERE s.name = ? ORDER BY c.id",
                (demo_pz.SUITE,),
            )
        ]
        judges = {
            r[0]
            for r in store.conn.execute(
                "SELECT DISTINCT j.judge FROM judgments j JOIN generations g "
                "ON g.id = j.generation_id JOIN runs r ON r.id = g.run_id WHERE r.name = ?",
                (demo_pz.REQUEST.run_name(),),
            )
        }
    assert len(payloads) == expected
    assert [p["start_token"] for p in payloads[:3]] == [0, demo_pz.STRIDE, 2 * demo_pz.STRIDE]
    assert {(p["prefix_tokens"], p["continuation_tokens"], p["stride"]) for p in payloads} == {
        (demo_pz.PREFIX_TOKENS, demo_pz.CONTINUATION_TOKENS, demo_pz.STRIDE)
    }  # the cutting is recorded with every window
    assert judges == {"pz_greedy", "pz_top40_t1"}
    before = database_fingerprint(db)
    assert demo_pz.build_pz_demo(db, scorer=scorer) is None  # already done: nothing loaded
    assert database_fingerprint(db) == before


@pytest.mark.parametrize(("args", "built"), [((), True), (("--no-pz-map",), False)])
def test_the_demo_command_builds_the_map_unless_told_not_to(
    cli: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, args: tuple[str, ...], built: bool
) -> None:
    calls: list[Path] = []
    monkeypatch.setattr("copyaudit.cli.demo.build_demo", lambda store, **_: DemoSummary())
    monkeypatch.setattr(demo_pz, "build_pz_demo", lambda db, **_: calls.append(db))
    result = cli("demo", "--no-tui", *args, db=tmp_path / "demo.db")
    assert result.code == 0, result.err
    assert calls == ([tmp_path / "demo.db"] if built else [])
    assert ("memorisation map: already scored" in result.out) == built

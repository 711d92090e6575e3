"""The best-window event judge ("events_window"): its features on a story written here
(not in the dev set), the export of its monotone trees, its shipped weights rebuilt bit
for bit from samples/judge_training, and its place in the registry (by name only)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from copyaudit.judges.context import BuildContext
from copyaudit.judges.options import JudgeOptions
from copyaudit.judges.registry import JUDGES, selected
from copyaudit.judges.window_features import FEATURES, SIGNS, WindowFeatures
from copyaudit.judges.window_support import WEIGHTS_FILE, WindowEventJudge, WindowSupport
from copyaudit.judges.window_training import fit_combiner, train
from copyaudit.models.embedding import HFEmbedder, load_embedder
from tests.test_judges_events_entail import STORY
from tests.test_judges_presets import ConstantEmbedder


@pytest.fixture(scope="module")
def embedder() -> HFEmbedder:
    return load_embedder("default", device="cpu")


def _column(rows: np.ndarray, name: str) -> np.ndarray:
    return rows[:, FEATURES.index(name)]


def test_a_split_event_is_read_over_a_multi_sentence_window(embedder: HFEmbedder) -> None:
    split = (
        "Greta chased Oskar with a rolling pin and her nephew brought the box up from the canal."
    )
    pairs = [(split, STORY), ("Greta did not chase the thief down the alley.", STORY)]
    rows = WindowFeatures(embedder).features(pairs)
    # both clauses are held by one window of the story (no single sentence holds both)
    assert _column(rows, "clause_recall_min")[0] >= 0.6
    assert _column(rows, "negation_parity").tolist() == [0.0, 1.0]


def test_no_feature_grows_with_the_story_length(embedder: HFEmbedder) -> None:
    event = "A pilot flew a seaplane across the mountains."
    padding = " ".join(["The bakery sold bread on Pell Street every morning."] * 3)
    rows = WindowFeatures(embedder).features([(event, STORY), (event, f"{STORY} {padding}")])
    assert np.array_equal(rows[0], rows[1])  # the best window is the same one


def test_the_exported_trees_are_monotone_and_match_scikit_learn() -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, (300, len(FEATURES)))
    y = (x[:, FEATURES.index("recall")] + rng.normal(0, 0.3, 300) > 0.5).astype(float)
    kinds = np.where(y == 1, "verbatim", "absent")
    combiner = fit_combiner(x, y, kinds)  # raises when the export differs from scikit-learn
    lower = x.copy()
    lower[:, FEATURES.index("recall")] -= 0.3
    assert (combiner.probability(lower) <= combiner.probability(x) + 1e-12).all()
    assert {SIGNS[f] for f in ("cosine", "recall", "negation_parity")} == {1, -1}


@pytest.mark.slow
def test_training_rebuilds_the_shipped_weights_bit_for_bit(
    embedder: HFEmbedder, tmp_path: Path
) -> None:
    out = tmp_path / "events_window.safetensors"
    train(embedder, out)
    assert (
        hashlib.sha256(out.read_bytes()).digest()
        == hashlib.sha256(WEIGHTS_FILE.read_bytes()).digest()
    )


def test_registered_by_name_not_in_the_offline_preset() -> None:
    ctx = BuildContext(JudgeOptions(judges="events_window"), embedder_factory=ConstantEmbedder)
    judge = JUDGES["events_window"].build(ctx)
    assert isinstance(judge, WindowEventJudge) and isinstance(judge.model, WindowSupport)
    assert (judge.name, judge.version) == ("events_window", "1")
    assert JUDGES["events_window"] not in selected("offline")[0]
    assert "entail" not in judge.name  # it relates text; it does not entail
    assert (
        judge.config()["entailment"]["weights_sha256"]
        == hashlib.sha256(WEIGHTS_FILE.read_bytes()).hexdigest()
    )

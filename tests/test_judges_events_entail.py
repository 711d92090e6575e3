"""The offline entailing event judge ("events_entail"): hand-made pairs of every contrast
kind on a story written here (not in the dev set), its contrast features, the shipped
weights rebuilt bit for bit from samples/judge_training, and its place in the registry
beside the unchanged embedding + lexical judge."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from copyaudit.errors import InputError
from copyaudit.judges import event_features as ef
from copyaudit.judges.context import BuildContext
from copyaudit.judges.entailment_aligned import (
    FEATURES,
    WEIGHTS_FILE,
    AlignedEntailment,
    AlignedFeatures,
    Combiner,
    load_combiner,
    save_combiner,
)
from copyaudit.judges.event_training import KINDS, RETELLING, load_dev_set, train, written_as
from copyaudit.judges.events import EntailingEventJudge, EventJudge
from copyaudit.judges.options import JudgeOptions
from copyaudit.judges.registry import JUDGES, selected
from copyaudit.models.embedding import HFEmbedder, load_embedder
from copyaudit.types import JudgeInput
from tests.test_judges_presets import ConstantEmbedder

STORY = (
    "Greta Sand ran the night bakery on Pell Street. "
    "One winter evening a thief named Oskar climbed through the back window "
    "and stole the cash box. "
    "Greta chased him down the alley with a rolling pin. "
    "She caught Oskar at the canal bridge, and he dropped the box into the water. "
    "The next morning Greta's nephew dived into the canal and brought the box back up. "
    "The constable did not arrest Oskar, because Greta asked him to let the boy go. "
    "Oskar came back a week later and asked for work."
)
PAIRS: list[tuple[str, str, bool]] = [  # (kind, event, supported)
    ("verbatim", "Greta chased the thief down the alley with a rolling pin.", True),
    ("paraphrase",
     "The baker ran after the burglar through the lane, armed with a rolling pin.", True),
    ("split",
     "Greta caught Oskar at the bridge, and her nephew later brought the box up from the canal.",
     True),
    ("negated", "The constable arrested Oskar.", False),
    ("negated", "Greta did not chase the thief down the alley.", False),
    ("role_swapped", "Oskar chased Greta down the alley with a rolling pin.", False),
    ("outcome_changed", "Greta chased the thief, but he escaped with the cash box.", False),
    ("topical", "Greta baked a cake for the constable's wedding.", False),
    ("absent", "A pilot flew a seaplane across the mountains.", False),
]  # fmt: skip


@pytest.fixture(scope="module")
def embedder() -> HFEmbedder:
    return load_embedder("default", device="cpu")


def test_every_contrast_kind_is_decided_right(embedder: HFEmbedder) -> None:
    judge = EntailingEventJudge(AlignedEntailment(embedder))
    events = [event for _, event, _ in PAIRS]
    item = JudgeInput("nonliteral", {"reference_events": events}, "", STORY)
    score = judge.judge([item])[0][0]
    decided = {PAIRS[v.index][0] + ": " + PAIRS[v.index][1]: v.verdict for v in score.items}
    expected = {f"{kind}: {event}": supported for kind, event, supported in PAIRS}
    assert decided == expected
    assert score.metric == "events" and score.value == 3.0 and score.flagged is False


def test_the_old_judge_relates_where_the_new_one_entails(embedder: HFEmbedder) -> None:
    """The embedding + lexical judge accepts the negated, swapped and altered events."""
    from copyaudit.judges.entailment_lexical import EmbeddingLexicalEntailment

    contrasts = [event for kind, event, _ in PAIRS if kind in ("role_swapped", "outcome_changed")]
    old = EmbeddingLexicalEntailment(embedder).score([(e, STORY) for e in contrasts])
    new = AlignedEntailment(embedder).score([(e, STORY) for e in contrasts])
    assert all(s >= 0.5 for s in old) and all(s < 0.5 for s in new)


def test_negation_cues_count_only_with_a_shared_word_in_scope() -> None:
    event = ef.words("Greta did not open the door.")
    sentence = ef.words("Greta opened the door, but she did not smile.")
    shared = event.content & sentence.content
    assert ef.negation_counts(event, shared) == (1, 1)
    assert ef.negation_counts(sentence, shared) == (1, 0)  # "not smile": nothing shared
    refused = ef.words("She refused the medal.")
    assert ef.negation_counts(refused, refused.content) == (1, 1)  # "refused" flips too


def test_role_features_see_a_swap_and_a_possessor() -> None:
    sentence = ef.words("Pieter's father slapped the boy in front of everyone.")
    assert ef.role_features(ef.words("Pieter's father slapped the boy."), sentence)[0] == 1.0
    assert ef.role_features(ef.words("Pieter slapped his father."), sentence)[0] == -1.0
    taught = ef.words("Tomas taught Nell to graft.")
    swapped = ef.role_features(ef.words("Nell taught Tomas to graft."), taught)
    assert swapped[0] == -1.0 and swapped[2] == -1.0  # agent differs, names change sides
    she = ef.words("Ilse saw the boat. She threw Pieter a rope.")
    assert ef.role_features(ef.words("Ilse threw Pieter a rope."), she)[:2] == (1.0, 1.0)


def test_predicate_words_leave_the_names_out() -> None:
    event = ef.words("Greta chased Oskar down the alley.")
    assert [t for t, _ in ef.predicate_words(event)] == ["chased", "alley"]
    assert ef.name_recall(event, ef.words("Oskar sold bread to Greta.")) == 1.0
    assert ef.name_recall(event, ef.words("Oskar sold bread.")) == 0.5
    assert ef.name_recall(ef.words("the thief ran."), ef.words("Oskar ran.")) == 1.0


def test_a_new_plot_with_the_same_names_lacks_predicate_support(embedder: HFEmbedder) -> None:
    """The names match, what happens does not: predicate support is low, name recall full;
    the retelling supports every predicate word."""
    extractor = AlignedFeatures(embedder)
    event = "Greta chased Oskar down the alley with a rolling pin."
    retold = "Greta ran after Oskar down the alley, waving a rolling pin."
    new_plot = "Greta and Oskar sat by the canal and shared a loaf of rye bread."
    rows = extractor.features([(event, retold), (event, new_plot)])
    column = {name: i for i, name in enumerate(FEATURES)}
    assert rows[0, column["name_recall"]] == rows[1, column["name_recall"]] == 1.0
    assert rows[0, column["predicate_mean"]] > rows[1, column["predicate_mean"]]
    assert rows[1, column["predicate_unsupported"]] >= 2 > rows[0, column["predicate_unsupported"]]


def test_antonyms_and_clauses() -> None:
    assert ef.antonym_clash(ef.words("She accepted the medal."), ef.words("She refused it."))
    assert not ef.antonym_clash(ef.words("She refused the medal."), ef.words("She refused it."))
    assert ef.clauses("Ilse threw a rope, but the boat broke apart.") == [
        "Ilse threw a rope",
        "the boat broke apart.",
    ]


def test_combiner_round_trips_through_safetensors(tmp_path: Path) -> None:
    combiner = Combiner(
        feature=np.array([[0, 0, 0]], dtype=np.int64),
        threshold=np.array([[0.5, 0.0, 0.0]]),
        left=np.array([[1, -1, -1]], dtype=np.int64),
        right=np.array([[2, -1, -1]], dtype=np.int64),
        value=np.array([[0.0, -2.0, 2.0]]),
        init=0.0,
        rate=1.0,
    )
    path = tmp_path / "w.safetensors"
    save_combiner(combiner, path, {"note": "test"})
    loaded = load_combiner(path)
    rows = np.zeros((2, len(FEATURES)))
    rows[1, 0] = 0.9
    assert np.allclose(loaded.probability(rows), [1 / (1 + np.e**2), 1 / (1 + np.e**-2)])
    assert loaded.digest == hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow
def test_training_rebuilds_the_shipped_weights_bit_for_bit(
    embedder: HFEmbedder, tmp_path: Path
) -> None:
    out = tmp_path / "events_entail.safetensors"
    train(embedder, out)
    assert (
        hashlib.sha256(out.read_bytes()).digest()
        == hashlib.sha256(WEIGHTS_FILE.read_bytes()).digest()
    )


def test_dev_set_is_labelled_by_kind_and_bad_lines_are_named(tmp_path: Path) -> None:
    dev = load_dev_set()
    assert len({p.story_id for p in dev.pairs}) >= 12 and len(dev.pairs) >= 300
    assert {p.kind for p in dev.pairs} == set(KINDS)
    (tmp_path / "stories.jsonl").write_text(json.dumps({"story_id": "s", "text": "A b."}) + "\n")
    bad = {"story_id": "s", "event": "A b.", "kind": "negated", "label": 1}
    (tmp_path / "pairs.jsonl").write_text(json.dumps(bad) + "\n")
    with pytest.raises(InputError, match=r"pairs.jsonl: line 1: field 'label'"):
        load_dev_set(tmp_path)


def test_registered_beside_the_unchanged_events_judge() -> None:
    ctx = BuildContext(JudgeOptions(judges="events_entail"), embedder_factory=ConstantEmbedder)
    judge = JUDGES["events_entail"].build(ctx)
    assert isinstance(judge, EntailingEventJudge) and isinstance(judge.model, AlignedEntailment)
    assert (judge.name, judge.version) == ("events_entail", "2")
    assert (EventJudge.name, EventJudge.version) == ("events", "2")
    assert selected("events,events_entail")[0] == (JUDGES["events"], JUDGES["events_entail"])
    assert (
        judge.config()["entailment"]["weights_sha256"]
        == hashlib.sha256(WEIGHTS_FILE.read_bytes()).hexdigest()
    )


def test_demo_check_reads_what_each_story_was_written_as(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(
        "| case | written as | words | characters |\n|---|---|---|---|\n"
        "| ab-nl-01 | retells the book's plot: many events | 300 | 9 |\n"
        "| ab-nl-02 | original story: no reference events | 280 | 0 |\n"
        "| ab-lit-01 | not a nonliteral row | 1 | 2 | 3 |\n",
        encoding="utf-8",
    )
    assert written_as(readme) == {"ab-nl-01": RETELLING, "ab-nl-02": "original story"}
    shipped = written_as()  # samples/README.md's table: the demo's 22 stories
    assert len(shipped) == 22
    assert sum(kind == RETELLING for kind in shipped.values()) == 9

"""Prefix extraction through the real run path: a tiny model that memorised one
passage (tests/tinymodels) is k-extractable on it (k = the 30 prefix tokens: its
continuation's first 25 tokens reproduced) and not on a passage it never saw."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copyaudit.engine.runner import RunRequest, execute_run
from copyaudit.judges.options import JudgeOptions
from db import Store
from tests.conftest import write_jsonl
from tests.tinymodels import (
    PASSAGE_LIGHTHOUSE,
    PASSAGE_ORCHARD,
    build_tiny_causal_lm,
    build_tokenizer,
    train_to_memorize,
)

K = 25  # tokens of the continuation an output must reproduce to count as extracted


@pytest.fixture(scope="module")
def memorizer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("extraction-memorizer")
    tokenizer = build_tokenizer([PASSAGE_LIGHTHOUSE, PASSAGE_ORCHARD], directory)
    build_tiny_causal_lm(directory, tokenizer)
    train_to_memorize(directory, [PASSAGE_LIGHTHOUSE], steps=600)
    return directory


def _judgments(db_path: Path, run: str) -> dict[tuple[str, str], dict]:
    with Store(db_path) as store:
        rows = store.query(
            "SELECT c.case_id, j.metric, j.value, j.flagged, j.evidence FROM judgments j "
            "JOIN generations g ON g.id = j.generation_id JOIN cases c ON c.id = g.case_pk "
            "JOIN runs r ON r.id = g.run_id WHERE r.name = ?",
            (run,),
        )
    return {(r["case_id"], r["metric"]): dict(r) for r in rows}


@pytest.mark.slow
def test_memorised_passage_is_k_extractable_and_the_unseen_one_is_not(
    memorizer: Path, tmp_path: Path, cli, db_path: Path
) -> None:
    texts = [
        {"id": "lighthouse", "title": "Varrow Point", "text": PASSAGE_LIGHTHOUSE},
        {"id": "orchard", "title": "The Orchard", "text": PASSAGE_ORCHARD},
    ]
    source = write_jsonl(tmp_path / "texts.jsonl", texts)
    imported = cli(
        "import", "extraction", str(source), "--suite", "ext",
        "--prefix-tokens", "30", "--continuation-tokens", "40",
    )  # fmt: skip
    assert imported.code == 0, imported.err
    request = RunRequest(
        suite="ext",
        name="greedy",
        model=str(memorizer),
        device="cpu",
        judging=JudgeOptions("extraction,verbatim", extract_tokens=K, verbatim_chars=120),
        chat=False,
        max_new_tokens=160,
    )
    outcome = execute_run(db_path, request)
    assert outcome.status == "done" and outcome.generated == 2 and outcome.failed == 0
    scores = _judgments(db_path, "greedy")

    memorised = scores[("lighthouse", "lcp_tokens")]
    assert memorised["value"] >= K and memorised["flagged"] == 1, memorised
    evidence = json.loads(memorised["evidence"])
    assert evidence["threshold"] == K and evidence["extra"]["prefix_tokens"] == 30
    unseen = scores[("orchard", "lcp_tokens")]
    assert unseen["value"] < K and unseen["flagged"] == 0, unseen
    # the model goes on past its 40-token continuation: HELM's similarity counts every
    # extra token against it, the both-cut one compares the 40 tokens both cover
    assert scores[("lighthouse", "edit_similarity_cut")]["value"] > 0.9
    lighthouse, orchard = (
        scores[(c, "edit_similarity")]["value"] for c in ("lighthouse", "orchard")
    )
    assert lighthouse > orchard and orchard < 0.5

    verbatim = scores[("lighthouse", "longest_verbatim_chars")]
    assert verbatim["value"] >= 120 and verbatim["flagged"] == 1
    assert scores[("orchard", "longest_verbatim_chars")]["flagged"] == 0

    report = json.loads(cli("report", "greedy", "--format", "json").out)
    assert report["extraction"]["lcp_tokens"]["rate"] == pytest.approx(0.5)
    assert report["verbatim"]["thresholds"] == [120.0]

"""Building runs with judgments for the human-verification tests (labels, agreement, queues)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from copyaudit.types import ItemVerdict, Score
from db import Store
from db.events import append_label
from db.labels import JudgeVerdict, generation_ids_by_key
from db.runs import JudgeIdentity, save_judgments
from tests.conftest import write_jsonl
from tests.factories import literal_record, nonliteral_record

EVENTS_JUDGE = JudgeIdentity("events", "1", {"threshold": 5, "entailment_threshold": 0.5}, "ev1")
CHARACTERS_JUDGE = JudgeIdentity("characters", "1", {"threshold": 3}, "ch1")
LITERAL_JUDGE = JudgeIdentity("literal", "1", {"threshold": 0.8}, "li1")
REFUSAL_JUDGE = JudgeIdentity("refusal", "1", {"threshold": 0.6}, "re1")


def make_run(
    cli: Callable,
    tmp_path: Path,
    kind: str,
    case_ids: Sequence[str],
    run: str = "r",
    db: Path | None = None,
) -> None:
    """Import a suite of `kind` with the given cases and one generation per case."""
    if kind == "nonliteral":
        records = [
            nonliteral_record(
                int(case_id.split("-")[1]),
                id=case_id,
                reference_events=[f"Event {e} of {case_id}." for e in range(4)],
            )
            for case_id in case_ids
        ]
    else:
        records = [literal_record(int(c.split("-")[1]), id=c) for c in case_ids]
    cases = write_jsonl(tmp_path / f"{kind}-cases.jsonl", records)
    gens = write_jsonl(
        tmp_path / f"{kind}-{run}-gens.jsonl",
        [{"case_id": c, "output": f"A story for {c}."} for c in case_ids],
    )
    suite = f"{kind}-suite"
    assert cli("import", kind, str(cases), "--suite", suite, db=db).code == 0
    result = cli("import-generations", str(gens), "--run", run, "--suite", suite, db=db)
    assert result.code == 0, result.err


def gid(store: Store, key: str) -> int:
    return generation_ids_by_key(store, [key])[key]


def event_score(verdicts: Sequence[tuple[bool, float]]) -> Score:
    items = tuple(ItemVerdict(i, v, s) for i, (v, s) in enumerate(verdicts))
    count = sum(v for v, _ in verdicts)
    return Score(
        "events", float(count), flagged=count >= 5, threshold=5, items=items, target="event"
    )


def character_score(verdicts: Sequence[bool], excluded: Sequence[int] = ()) -> Score:
    items = tuple(
        ItemVerdict(i, v and i not in excluded, None if i in excluded else float(v))
        for i, v in enumerate(verdicts)
    )
    count = sum(item.verdict for item in items)
    return Score(
        "characters",
        float(count),
        flagged=count >= 3,
        threshold=3,
        items=items,
        target="character",
        extra={"excluded": list(excluded)} if excluded else {},
    )


def literal_score(value: float, threshold: float = 0.8) -> Score:
    return Score("rougeL", value, flagged=value >= threshold, threshold=threshold, target="literal")


def refusal_score(value: float, threshold: float = 0.6) -> Score:
    return Score(
        "refusal", value, flagged=value >= threshold, threshold=threshold, target="refusal"
    )


def label(
    store: Store,
    key: str,
    annotator: str,
    target: str,
    index: int,
    value: str,
    note: str | None = None,
) -> str:
    return append_label(
        store,
        generation_id=gid(store, key),
        annotator=annotator,
        target=target,
        item_index=index,
        label=value,
        note=note,
    )


def label_like_judge(
    store: Store,
    verdicts: Sequence[JudgeVerdict],
    generation_ids: set[int],
    flip_every: int,
    annotator: str = "ann",
) -> None:
    """Label each judged item of `verdicts` on `generation_ids` as the judge says, the
    `flip_every`-th verdict of the list (counted over all of it) the other way."""
    for number, v in enumerate(verdicts):
        if v.generation_id not in generation_ids or v.excluded or v.verdict is None:
            continue
        said = v.verdict if number % flip_every else not v.verdict
        item = {"generation_id": v.generation_id, "target": v.target, "item_index": v.item_index}
        append_label(store, annotator=annotator, label="yes" if said else "no", **item)


def judge(store: Store, identity: JudgeIdentity, scores: dict[str, Score]) -> None:
    save_judgments(store, identity, [(gid(store, key), [score]) for key, score in scores.items()])


REFERENCE_WORDS = ["and", "the", "continuation", "number", "{i}", "follows", "here"]


def literal_copies_run(
    cli: Callable, tmp_path: Path, n: int = 12, db: Path | None = None
) -> list[str]:
    """A literal run whose case i copies the first (i % 7) + 1 words of its reference."""
    cases = write_jsonl(tmp_path / "cases.jsonl", [literal_record(i) for i in range(n)])
    outputs = []
    for i in range(n):
        words = [w.format(i=i) for w in REFERENCE_WORDS][: i % 7 + 1]
        outputs.append({"case_id": f"lit-{i}", "output": " ".join([*words, "then", "rain"])})
    gens = write_jsonl(tmp_path / "gens.jsonl", outputs)
    assert cli("import", "literal", str(cases), "--suite", "lit", db=db).code == 0
    assert cli("import-generations", str(gens), "--run", "r", "--suite", "lit", db=db).code == 0
    return [f"r/lit-{i}/1" for i in range(n)]


def judge_rising_events(store: Store, case_ids: Sequence[str], run: str = "r") -> None:
    """The events judge on run `run`: the n-th case (from 1) with n of its 4 events found."""
    judge(
        store,
        EVENTS_JUDGE,
        {
            f"{run}/{case}/1": event_score([(i < n, 0.9 if i < n else 0.1) for i in range(4)])
            for n, case in enumerate(case_ids, start=1)
        },
    )

"""What a person labels on one generation: every reference event and character of its
case ("in the story?"), then the whole output ("refusal?", "verbatim copy?" and, for a
notice paraphrase or translate task, "content reproduced?"), each with the judges'
verdicts on it (shown only outside blind mode). Characters named in the prompt are
listed but not asked: the characters judge does not score them."""

from __future__ import annotations

from dataclasses import dataclass

from copyaudit.mentions import given_characters
from copyaudit.studies.registry import whole_output_targets
from db.browse import GenerationDetail, JudgmentView

WHOLE_OUTPUT = (
    ("refusal", "Refusal? The output refuses the request."),
    ("literal", "Verbatim copy? The output copies the reference text word for word."),
    ("content", "Content reproduced? The output reproduces the snippet's content."),
)
NOT_SCORED = "not scored: named in the prompt"
QUESTIONS = {"event": "in the story?", "character": "in the story?"}


@dataclass(frozen=True)
class JudgeMark:
    judge: str
    metric: str
    verdict: bool | None  # None: the judge failed here or leaves the item out


@dataclass(frozen=True)
class LabelItem:
    target: str  # copyaudit.items.LABEL_TARGETS
    index: int  # reference item index; 0 for whole-output targets
    text: str
    note: str = ""  # e.g. NOT_SCORED
    judges: tuple[JudgeMark, ...] = ()
    asked: bool = True  # False: shown, not labelled (a character named in the prompt)

    @property
    def key(self) -> str:
        """The option id; for events and characters the generation view's evidence key."""
        return f"{self.target}:{self.index}"


def _aliases(value: object) -> str:
    if isinstance(value, list):
        return " / ".join(str(v) for v in value)
    return str(value)


def _item_marks(judgments: list[JudgmentView], target: str) -> dict[int, list[JudgeMark]]:
    marks: dict[int, list[JudgeMark]] = {}
    for judgment in judgments:
        if judgment.target != target:
            continue
        excluded = set((judgment.evidence.get("extra") or {}).get("excluded") or [])
        for entry in judgment.evidence.get("items") or []:
            index = int(entry["index"])
            verdict = None if index in excluded else entry.get("verdict")
            marks.setdefault(index, []).append(JudgeMark(judgment.judge, judgment.metric, verdict))
    return marks


def label_items(detail: GenerationDetail) -> list[LabelItem]:
    """Events, characters (from the case's reference lists), then the whole output."""
    items: list[LabelItem] = []
    for target, field in (("event", "reference_events"), ("character", "reference_characters")):
        reference = detail.payload.get(field)
        if not isinstance(reference, list):
            continue
        marks = _item_marks(detail.judgments, target)
        given = given_characters(detail.payload, detail.prompt) if target == "character" else ()
        for index, value in enumerate(reference):
            items.append(
                LabelItem(
                    target=target,
                    index=index,
                    text=_aliases(value),
                    note=NOT_SCORED if index in given else "",
                    judges=tuple(marks.get(index, ())),
                    asked=index not in given,
                )
            )
    targets = whole_output_targets(detail.kind, detail.payload)
    for target, question in WHOLE_OUTPUT:
        if target not in targets:
            continue
        judges = tuple(
            JudgeMark(j.judge, j.metric, None if j.value is None else j.flagged)
            for j in detail.judgments
            if j.target == target
        )
        items.append(LabelItem(target=target, index=0, text=question, judges=judges))
    return items

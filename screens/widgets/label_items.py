"""What a person labels on one generation: every reference event and character of its
case ("in the story?"), then the whole output ("refusal?", "verbatim copy?"), each with
the judges' verdicts on it (shown only outside blind mode)."""

from __future__ import annotations

from dataclasses import dataclass

from db.browse import GenerationDetail, JudgmentView

WHOLE_OUTPUT = (
    ("refusal", "Refusal? The output refuses the request."),
    ("literal", "Verbatim copy? The output copies the reference text word for word."),
)
QUESTIONS = {"event": "in the story?", "character": "in the story?"}


@dataclass(frozen=True)
class JudgeMark:
    judge: str
    metric: str
    verdict: bool | None  # None: the judge failed here or leaves the item out


@dataclass(frozen=True)
class LabelItem:
    target: str  # event | character | refusal | literal (db.events.LABEL_TARGETS)
    index: int  # reference item index; 0 for whole-output targets
    text: str
    note: str = ""  # e.g. "named in the prompt"
    judges: tuple[JudgeMark, ...] = ()

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


def _excluded(judgments: list[JudgmentView], target: str) -> set[int]:
    out: set[int] = set()
    for judgment in judgments:
        if judgment.target == target:
            out |= set((judgment.evidence.get("extra") or {}).get("excluded") or [])
    return out


def label_items(detail: GenerationDetail) -> list[LabelItem]:
    """Events, characters (from the case's reference lists), refusal and literal."""
    items: list[LabelItem] = []
    for target, field in (("event", "reference_events"), ("character", "reference_characters")):
        reference = detail.payload.get(field)
        if not isinstance(reference, list):
            continue
        marks = _item_marks(detail.judgments, target)
        excluded = _excluded(detail.judgments, target)
        for index, value in enumerate(reference):
            items.append(
                LabelItem(
                    target=target,
                    index=index,
                    text=_aliases(value),
                    note="named in the prompt" if index in excluded else "",
                    judges=tuple(marks.get(index, ())),
                )
            )
    for target, question in WHOLE_OUTPUT:
        judges = tuple(
            JudgeMark(j.judge, j.metric, None if j.value is None else j.flagged)
            for j in detail.judgments
            if j.target == target
        )
        items.append(LabelItem(target=target, index=0, text=question, judges=judges))
    return items

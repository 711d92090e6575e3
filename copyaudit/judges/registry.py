"""Every judge by name: how it is built, which task kinds it scores, what it needs,
its paper and offline settings, and the presets that run it.

The one table of judges: `build_judges`, the CLI's help and the launcher read it.
A factory is named as "module:function" and imported only when the judge is built,
so reading the table loads no model code (rouge_score pulls in nltk and scipy).
Adding a judge: its module (the Judge and its factory), one entry here, its test.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from copyaudit import vocabulary
from copyaudit.errors import UserError

if TYPE_CHECKING:
    from copyaudit.judges.base import Judge
    from copyaudit.judges.context import BuildContext

# preset -> what it means for where it runs (the launcher shows it)
PRESETS: dict[str, str] = {"offline": "runs here", "paper": "needs hub models"}
ALL_KINDS = "all"  # build_judges' kind for "every kind"
GENERATION_KINDS = frozenset(vocabulary.GENERATION_KINDS)


@dataclass(frozen=True)
class JudgeSpec:
    """One judge: `factory(ctx)` builds it (JudgeUnavailable when it cannot)."""

    name: str
    factory: str  # "module:function", function(BuildContext) -> Judge
    kinds: frozenset[str]
    presets: tuple[str, ...] = ()  # the presets that include it
    needs: tuple[str, ...] = ()  # embedder | generator | event model | notice models
    paper: str = "same"  # its setting in the paper preset
    offline: str = "same"  # its setting in the offline preset
    paper_kinds: frozenset[str] | None = None  # narrower kinds under the paper preset

    def applies(self, kind: str, paper: bool) -> bool:
        if kind == ALL_KINDS:
            return True
        kinds = self.paper_kinds if paper and self.paper_kinds is not None else self.kinds
        return kind in kinds

    def build(self, ctx: BuildContext) -> Judge:
        module, function = self.factory.split(":")
        make: Callable[[BuildContext], Judge] = getattr(importlib.import_module(module), function)
        return make(ctx)


# In the order presets run them (and list what they skip).
JUDGES: dict[str, JudgeSpec] = {
    spec.name: spec
    for spec in (
        JudgeSpec(
            "literal",
            "copyaudit.judges.literal:rouge_literal",
            frozenset({"literal"}),
            presets=("paper", "offline"),
            paper="rouge_score's tokenizer, as CopyBench",
        ),
        JudgeSpec(
            "literal_unicode",
            "copyaudit.judges.literal:unicode_literal",
            frozenset({"literal"}),
            paper="not in the preset",
            offline="not in the preset (ROUGE on Unicode words, for non-Latin scripts)",
        ),
        JudgeSpec(
            "characters",
            "copyaudit.judges.characters:character_judge",
            frozenset({"nonliteral"}),
            presets=("paper", "offline"),
        ),
        JudgeSpec(
            "events",
            "copyaudit.judges.loading:event_judge",
            frozenset({"nonliteral"}),
            presets=("paper",),
            needs=("event model", "embedder"),
            paper="Flan-T5-XL 'attributable' (or the event model)",
            offline="not in the preset (embedding + lexical overlap, or the event model)",
        ),
        JudgeSpec(
            "events_entail",
            "copyaudit.judges.loading:entailing_event_judge",
            frozenset({"nonliteral"}),
            presets=("offline",),
            needs=("event model", "embedder"),
            paper="not in the preset",
            offline="aligned sentences, negation/role/outcome checks (or the event model)",
        ),
        JudgeSpec(
            "qa",
            "copyaudit.judges.qa:qa_judge",
            frozenset({"qa"}),
            presets=("paper", "offline"),
            paper="CopyBench's eval_qa.py",
        ),
        JudgeSpec(
            "notice",
            "copyaudit.studies.notice.judge_models:notice_judge",
            frozenset({"notice"}),
            presets=("paper", "offline"),
            needs=("notice models", "embedder"),
            paper="BERTScore roberta-base (layer 10); multilingual paraphrase-xlm-r",
            offline="the shared embedder; translate only with a multilingual model",
        ),
        JudgeSpec(
            "refusal",
            "copyaudit.judges.refusal:phrase_refusal",
            GENERATION_KINDS,
            presets=("offline",),
            needs=("embedder",),
            offline="refusal phrases + embedding similarity (phrases only without one)",
        ),
        JudgeSpec(
            "fluency",
            "copyaudit.judges.fluency:fluency_judge",
            frozenset({"literal", "nonliteral"}),
            presets=("paper", "offline"),
            needs=("generator",),
            paper="Prometheus 1-5 rubric by the judge model",
        ),
        JudgeSpec(
            "refusal_lm",
            "copyaudit.judges.refusal:lm_refusal",
            GENERATION_KINDS,
            presets=("paper",),
            needs=("generator",),
            paper="the judge model answers yes/no (the notice study used GPT-4)",
            offline="not in the preset",
            paper_kinds=frozenset({"notice"}),  # the notice study judged its own task only
        ),
    )
}
JUDGE_NAMES: tuple[str, ...] = tuple(JUDGES)


def selected(judges: str) -> tuple[tuple[JudgeSpec, ...], bool]:
    """The judges a preset or a comma list of names selects, and whether they were
    named one by one (then a judge that does not apply is reported as skipped)."""
    if judges in PRESETS:
        return tuple(s for s in JUDGES.values() if judges in s.presets), False
    names = tuple(n.strip() for n in judges.split(",") if n.strip())
    unknown = [n for n in names if n not in JUDGES]
    if not names or unknown:
        raise UserError(
            f"unknown judge preset or names {judges!r}; presets: {', '.join(PRESETS)}; "
            f"judges: {', '.join(JUDGE_NAMES)}"
        )
    return tuple(JUDGES[n] for n in names), True

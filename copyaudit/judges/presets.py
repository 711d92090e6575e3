"""Judge presets: which judges run for a task kind, and why the others cannot.

- "paper": the source studies' judges. Literal ROUGE with rouge_score's own
  tokenizer, characters, events with Flan-T5-XL (`google/flan-t5-xl`, or the
  model given as `event_model`), QA (CopyBench's scorer, as in every preset), fluency with
  a Prometheus judge model and the notice study's LM refusal judge (both need
  `generator_factory`).
- "offline": runs on this machine without a hub. Literal, characters, events with
  the embedding+lexical scorer (or `event_model` when given), QA, the
  phrase+embedding refusal judge; fluency only when a generator is given.
- a comma list of judge names (see JUDGE_NAMES), each in its offline setting.

The notice study's similarity judge ("notice") is in both presets. Paraphrase: the
offline preset uses the shared embedder (all-MiniLM-L6-v2 by default), the paper
preset BERTScore's roberta-base (layer 10) from the local cache; translate needs a
multilingual model (`notice_multilingual_model`; the paper preset looks for
paraphrase-xlm-r-multilingual-v1 in the cache). A model that is missing leaves its
metric uncomputed, with the reason stored, rather than skipping the whole judge.

Nothing here downloads anything unless `allow_download` is set: models load from
local paths or the local Hugging Face cache (`local_files_only=True`). A judge
that cannot be built is returned as (name, reason) in the skipped list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from copyaudit.errors import UserError
from copyaudit.judges.base import Judge
from copyaudit.judges.characters import CharacterJudge
from copyaudit.judges.entailment_lexical import EmbeddingLexicalEntailment
from copyaudit.judges.events import EntailmentModel, EventJudge
from copyaudit.judges.fluency import FluencyJudge
from copyaudit.judges.literal import LiteralJudge
from copyaudit.judges.notice import NoticeJudge
from copyaudit.judges.qa import QAJudge
from copyaudit.judges.refusal import GENERATION_KINDS, LMRefusalJudge, RefusalJudge
from copyaudit.models.base import Embedder, Generator

PRESETS = ("paper", "offline")
PAPER_EVENT_MODEL = "google/flan-t5-xl"
PAPER_FLUENCY_MODEL = "prometheus-eval/prometheus-7b-v2.0"
PAPER_NOTICE_BERTSCORE_MODEL = "roberta-base"  # bert_score's model_type in the study's code
PAPER_NOTICE_BERTSCORE_LAYER = 10  # bert_score's default layer for roberta-base
PAPER_NOTICE_MULTILINGUAL_MODEL = "sentence-transformers/paraphrase-xlm-r-multilingual-v1"
ALL_KINDS = "all"

# Which task kinds each judge applies to (known before anything is loaded).
JUDGE_KINDS: dict[str, frozenset[str]] = {
    "literal": LiteralJudge.kinds,
    "literal_unicode": LiteralJudge.kinds,
    "characters": CharacterJudge.kinds,
    "events": EventJudge.kinds,
    "qa": QAJudge.kinds,
    "refusal": GENERATION_KINDS,
    "refusal_lm": GENERATION_KINDS,
    "fluency": FluencyJudge.kinds,
    "notice": NoticeJudge.kinds,
}
JUDGE_NAMES: tuple[str, ...] = tuple(JUDGE_KINDS)
PRESET_JUDGES: dict[str, tuple[str, ...]] = {
    "paper": ("literal", "characters", "events", "qa", "notice", "fluency", "refusal_lm"),
    "offline": ("literal", "characters", "events", "qa", "notice", "refusal", "fluency"),
}
# The notice study judged refusals only for its own task.
PAPER_KIND_OVERRIDES: dict[str, frozenset[str]] = {"refusal_lm": frozenset({"notice"})}


class _Skip(Exception):
    """A judge cannot be built; the message is the reason shown to the user."""


def default_embedder() -> Embedder:
    from copyaudit.models.embedding import load_embedder

    return load_embedder("default")


@dataclass
class _Context:
    paper: bool
    embedder_factory: Callable[[], Embedder]
    generator_factory: Callable[[], Generator] | None
    event_model: str | None
    allow_download: bool
    device: str
    notice_embedding_model: str | None = None
    notice_multilingual_model: str | None = None
    _embedder: Embedder | None = None
    _embedder_error: str | None = None
    _generator: Generator | None = None
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def embedder(self) -> Embedder:
        if self._embedder is None and self._embedder_error is None:
            try:
                self._embedder = self.embedder_factory()
            except Exception as error:
                self._embedder_error = f"{type(error).__name__}: {error}"
        if self._embedder is None:
            raise _Skip(f"no embedding model ({self._embedder_error})")
        return self._embedder

    def generator(self, purpose: str) -> Generator:
        if self.generator_factory is None:
            raise _Skip(f"needs a judge language model ({purpose}); none was given")
        if self._generator is None:
            try:
                self._generator = self.generator_factory()
            except Exception as error:
                reason = f"judge model failed to load: {type(error).__name__}: {error}"
                raise _Skip(reason) from error
        return self._generator


def _entailment(ctx: _Context) -> EntailmentModel:
    spec = ctx.event_model or (PAPER_EVENT_MODEL if ctx.paper else None)
    if spec is None:
        return EmbeddingLexicalEntailment(ctx.embedder())
    from copyaudit.judges.loading import load_entailment_model

    try:
        return load_entailment_model(spec, device=ctx.device, allow_download=ctx.allow_download)
    except Exception as error:
        advice = (
            " The paper's event judge is Flan-T5-XL: pass a local copy as the event model, "
            "allow downloads, or use the 'offline' preset."
            if ctx.paper and ctx.event_model is None
            else ""
        )
        raise _Skip(f"{error}{advice}") from error


def _build(name: str, ctx: _Context) -> Judge:
    if name == "literal":
        return LiteralJudge(tokenizer="rouge")
    if name == "literal_unicode":
        return LiteralJudge(tokenizer="unicode")
    if name == "characters":
        return CharacterJudge()
    if name == "events":
        return EventJudge(_entailment(ctx))
    if name == "qa":
        return QAJudge()
    if name == "refusal":
        try:
            embedder: Embedder | None = ctx.embedder()
        except _Skip as reason:
            ctx.skipped.append(("refusal (embedding part)", f"phrases only: {reason}"))
            embedder = None
        return RefusalJudge(embedder=embedder)
    if name == "refusal_lm":
        generator = ctx.generator("an instruct model answering yes/no; the paper used GPT-4")
        kinds = PAPER_KIND_OVERRIDES["refusal_lm"] if ctx.paper else GENERATION_KINDS
        return LMRefusalJudge(generator, kinds=kinds)
    if name == "fluency":
        purpose = f"a Prometheus-style grader such as {PAPER_FLUENCY_MODEL}"
        return FluencyJudge(ctx.generator(purpose))
    if name == "notice":
        from copyaudit.judges.notice_models import notice_judge

        return notice_judge(ctx)
    raise UserError(f"unknown judge {name!r}; known: {', '.join(JUDGE_NAMES)}")


def _applies(name: str, kind: str, paper: bool) -> bool:
    if kind == ALL_KINDS:
        return True
    kinds = PAPER_KIND_OVERRIDES.get(name, JUDGE_KINDS[name]) if paper else JUDGE_KINDS[name]
    return kind in kinds


def build_judges(
    preset: str,
    kind: str,
    *,
    embedder_factory: Callable[[], Embedder] | None = None,
    generator_factory: Callable[[], Generator] | None = None,
    event_model: str | None = None,
    allow_download: bool = False,
    device: str = "auto",
    notice_embedding_model: str | None = None,
    notice_multilingual_model: str | None = None,
) -> tuple[list[Judge], list[tuple[str, str]]]:
    """The judges of `preset` ("paper", "offline" or "name,name,...") that apply to
    task `kind` ("all" for every kind), and (judge name, reason) for those skipped.

    Factories are called at most once, and only when a judge needs them.
    `generator_factory` provides the judge LM for fluency and LM refusal; the
    notice_* models (path or cached hub id) are the notice judge's paraphrase and
    translate embedders."""
    if preset in PRESETS:
        names, explicit = PRESET_JUDGES[preset], False
    else:
        names = tuple(n.strip() for n in preset.split(",") if n.strip())
        unknown = [n for n in names if n not in JUDGE_KINDS]
        if not names or unknown:
            raise UserError(
                f"unknown judge preset or names {preset!r}; presets: {', '.join(PRESETS)}; "
                f"judges: {', '.join(JUDGE_NAMES)}"
            )
        explicit = True
    ctx = _Context(
        paper=preset == "paper",
        embedder_factory=embedder_factory or default_embedder,
        generator_factory=generator_factory,
        event_model=event_model,
        allow_download=allow_download,
        device=device,
        notice_embedding_model=notice_embedding_model,
        notice_multilingual_model=notice_multilingual_model,
    )
    judges: list[Judge] = []
    for name in names:
        if not _applies(name, kind, ctx.paper):
            if explicit:
                ctx.skipped.append((name, f"does not apply to task kind {kind!r}"))
            continue
        try:
            judges.append(_build(name, ctx))
        except _Skip as reason:
            ctx.skipped.append((name, " ".join(str(reason).split())))
    return judges, ctx.skipped

"""Judge presets: which judges run for a task kind, and why the others cannot.

- "paper": the source studies' judges. Literal ROUGE with rouge_score's own
  tokenizer, characters, events with Flan-T5-XL (`google/flan-t5-xl`, or the
  model given as `event_model`), QA (CopyBench's scorer, as in every preset), fluency with
  a Prometheus judge model and the notice study's LM refusal judge (both need
  `generator_factory`).
- "offline": runs on this machine without a hub. Literal, characters, events with
  the embedding+lexical scorer (or `event_model` when given), QA, the
  refusal reader (multilingual cues + a learned combiner; the old phrase+embedding
  `refusal` judge by name); fluency only when a generator is given.
- a comma list of judge names (see registry.JUDGE_NAMES), each in its offline setting.

The notice study's similarity judge ("notice") is in both presets. Paraphrase: the
offline preset uses the shared embedder (all-MiniLM-L6-v2 by default), the paper
preset BERTScore's roberta-base (layer 10) from the local cache; translate needs a
multilingual model (`notice_multilingual_model`; the paper preset looks for
paraphrase-xlm-r-multilingual-v1 in the cache). A model that is missing leaves its
metric uncomputed, with the reason stored, rather than skipping the whole judge.

Nothing here downloads anything unless `allow_download` is set: models load from
local paths or the local Hugging Face cache (`local_files_only=True`). A judge
that cannot be built is returned as (name, reason) in the skipped list. Which judges
exist, their kinds and presets: `copyaudit.judges.registry`.
"""

from __future__ import annotations

from collections.abc import Callable

from copyaudit.errors import UserError
from copyaudit.judges.base import Judge
from copyaudit.judges.context import (
    BuildContext,
    JudgeUnavailable,
    default_embedder,
    judge_generator_factory,
)
from copyaudit.judges.options import Calibration, JudgeOptions
from copyaudit.judges.registry import selected
from copyaudit.models.base import Embedder, Generator


def check_calibrated(judge: Judge, calibration: Calibration) -> None:
    """UserError unless the calibrated judge is the configuration the calibration was
    exported as (same models and settings as the judge it was fitted on)."""
    if calibration.expected_hash is None or judge.config_hash() == calibration.expected_hash:
        return
    raise UserError(
        f"judge configuration {calibration.expected_hash} ({judge.name}, "
        f"{calibration.record().get('description', 'calibrated')}) cannot be rebuilt: the "
        f"options given build {judge.config_hash()}; pass the judge options it was fitted "
        "with (--event-model, --judge-model, ...)"
    )


def build_judges(
    options: JudgeOptions,
    kind: str,
    *,
    embedder_factory: Callable[[], Embedder] | None = None,
    generator_factory: Callable[[], Generator] | None = None,
) -> tuple[list[Judge], list[tuple[str, str]]]:
    """The judges `options` select ("paper", "offline" or "name,name,...") that apply
    to task `kind` ("all" for every kind), and (judge name, reason) for those skipped.

    Factories are called at most once, and only when a judge needs them.
    `generator_factory` provides the judge LM for fluency and LM refusal (default:
    `options.judge_model`, when named). A judge named in `options.calibrations` gets
    its fitted threshold (and so a configuration hash of its own)."""
    specs, explicit = selected(options.judges)
    ctx = BuildContext(
        options,
        embedder_factory=embedder_factory or default_embedder,
        generator_factory=generator_factory or judge_generator_factory(options),
    )
    judges: list[Judge] = []
    for spec in specs:
        if not spec.applies(kind, ctx.paper):
            if explicit:
                ctx.skipped.append((spec.name, f"does not apply to task kind {kind!r}"))
            continue
        try:
            judge = spec.build(ctx)
        except JudgeUnavailable as reason:
            ctx.skipped.append((spec.name, " ".join(str(reason).split())))
            continue
        for calibration in options.calibrations:
            if calibration.judge == spec.name:
                judge.calibrate(calibration.threshold, calibration.record(), calibration.count)
                check_calibrated(judge, calibration)
        judges.append(judge)
    return judges, ctx.skipped

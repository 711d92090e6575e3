"""The shared vocabulary of the tool: the task kinds, the mitigations, the precisions
and the human label targets.

The metrics and headline figures are not here: each judge (or study) declares the
ones it emits next to its code (copyaudit.metrics_spec's types), and
copyaudit.judges.metric_facts and copyaudit.studies.registry collect them. A
foundation module: it imports nothing from copyaudit.
"""

from __future__ import annotations

TASK_KINDS: tuple[str, ...] = ("literal", "nonliteral", "qa", "decop", "notice", "extraction")
# A run's mitigation (CoTaEval's takedown methods, in its order) -> how people call it
MITIGATIONS: dict[str, str] = {
    "none": "none",
    "system": "system prompt",
    "topk": "top-k noise",
    "memfree": "MemFree",
    "rcad": "R-CAD",
}
# the kinds whose runs generate text (DE-COP scores passages in its own loop); the
# judges below the studies read it, tests/test_studies_registry.py holds it equal to
# the registry's prompted kinds
GENERATION_KINDS: tuple[str, ...] = ("literal", "nonliteral", "qa", "notice", "extraction")
# the precisions a local model loads in (--dtype; auto: bfloat16 on CUDA, else float32)
DTYPE_NAMES: tuple[str, ...] = ("auto", "float32", "bfloat16", "float16")

NUMBERED_TARGETS = ("event", "character")  # one item per reference event / character
# One item per generation: refusal, verbatim copy, and (notice paraphrase / translate)
# whether the output reproduces the snippet's content.
EVERY_OUTPUT_TARGETS = ("refusal", "literal")  # one item on every generation
WHOLE_OUTPUT_TARGETS = (*EVERY_OUTPUT_TARGETS, "content")  # content: notice paraphrase/translate
LABEL_TARGETS = NUMBERED_TARGETS + WHOLE_OUTPUT_TARGETS  # every human label target

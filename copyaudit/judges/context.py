"""What a judge factory may use: the options, the models judges share (each loaded at
most once, and only when a judge asks), and the list of what could not be had.

A leaf of the judges package: it imports no judge, so the factories in the judge
modules (and `notice_models`) depend on it and `presets` only drives them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from copyaudit.judges.options import JudgeOptions
from copyaudit.models.base import Embedder, Generator
from copyaudit.models.embedding import load_embedder
from copyaudit.models.registry import load_generator

JUDGE_LM_BATCH = 8  # the judge LM's batch size (a run's default batch size)


class JudgeUnavailable(Exception):
    """A judge cannot be built; the message is the reason shown to the user."""


def default_embedder() -> Embedder:
    """The shared sentence embedder (all-MiniLM-L6-v2 unless configured otherwise)."""
    return load_embedder("default")


def load_judge_lm(options: JudgeOptions, model: str) -> Generator:
    """`model` as a Generator on the options' judge backend: loaded here ("hf";
    "default" is the embedded SmolLM2), or asked by name at an OpenAI-compatible server
    ("openai": the generation backend's client, with its concurrency, timeouts and
    retries; chat API, no stop string, so a Prometheus feedback is not cut)."""
    if options.judge_backend == "openai":
        return load_generator(
            model,
            backend="openai",
            base_url=options.judge_base_url,
            api_key_env=options.judge_api_key_env,
            max_response_bytes=options.judge_max_response_bytes,
            deadline=options.judge_request_deadline,
            stop=None,
        )
    return load_generator(model, device=options.device, batch_size=JUDGE_LM_BATCH)


def judge_generator_factory(options: JudgeOptions) -> Callable[[], Generator] | None:
    """The instruct model the LM judges (fluency, LM refusal) ask; none unless named —
    a model grading its own outputs, or a 135M model grading anything, is no judge."""
    model = options.judge_model
    if model is None:
        return None
    return lambda: load_judge_lm(options, model)


@dataclass
class BuildContext:
    """The options and the shared models of one `build_judges` call."""

    options: JudgeOptions
    embedder_factory: Callable[[], Embedder] = default_embedder
    generator_factory: Callable[[], Generator] | None = None
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (judge or part, reason)
    _embedder: Embedder | None = None
    _embedder_error: str | None = None
    _generator: Generator | None = None

    @property
    def paper(self) -> bool:
        return self.options.paper

    def model(self, given: str | None, paper_default: str | None) -> str | None:
        """The model a judge uses: the one given, else the paper preset's, else none."""
        return given or (paper_default if self.paper else None)

    def embedder(self) -> Embedder:
        """The shared embedder; JudgeUnavailable (with the load error) when it fails."""
        if self._embedder is None and self._embedder_error is None:
            try:
                self._embedder = self.embedder_factory()
            except Exception as error:
                self._embedder_error = f"{type(error).__name__}: {error}"
        if self._embedder is None:
            raise JudgeUnavailable(f"no embedding model ({self._embedder_error})")
        return self._embedder

    def generator(self, purpose: str) -> Generator:
        """The judge LM; JudgeUnavailable when none was given or it fails to load."""
        if self.generator_factory is None:
            raise JudgeUnavailable(f"needs a judge language model ({purpose}); none was given")
        if self._generator is None:
            try:
                self._generator = self.generator_factory()
            except Exception as error:
                reason = f"judge model failed to load: {type(error).__name__}: {error}"
                raise JudgeUnavailable(reason) from error
        return self._generator

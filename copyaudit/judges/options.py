"""JudgeOptions: what the user chose about judging, made once at the edge (CLI, launcher,
demo) and carried unchanged to `build_judges`.

Its stored part (`config`) is the judge part of a run's configuration exactly as runs
have stored it all along, so config hashes do not move and older runs still resume.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, fields
from typing import Any

from copyaudit.endpoint_budget import DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_REQUEST_DEADLINE_S
from copyaudit.endpoint_url import check_base_url as check_url
from copyaudit.errors import UserError

# Stored in every run's configuration, and stored only when not at their default
# (added later: a run made before them has no key, and must still resume).
ALWAYS_STORED = ("judges", "judge_model", "event_model")
STORED_WHEN_SET = (
    "notice_embedding_model",
    "notice_multilingual_model",
    "verbatim_chars",
    "extract_tokens",
    "judge_backend",
    "judge_base_url",
    "judge_api_key_env",
    "judge_max_response_bytes",
    "judge_request_deadline",
    "trace_library",
    "trace_tokens",
    "trace_engine",
    "corpus_index",
    "corpus_tokenizer",
    "corpus_tokens",
)
JUDGE_BACKENDS = ("hf", "openai")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Calibration:
    """A judge's score threshold fitted to people's labels (copyaudit.verification.
    calibration); `provenance` is JSON text (labels, run, annotators, folds, figures)."""

    judge: str
    threshold: float
    provenance: str = "{}"
    count: int | None = None  # the count threshold, when fitted to the story decision
    # the configuration hash the calibrated judge must reproduce (one carried to another
    # run: built from other options, it would be another judge's threshold); None: unchecked
    expected_hash: str | None = None

    def record(self) -> dict[str, Any]:
        return json.loads(self.provenance)

    @classmethod
    def from_stored(cls, judge: str, entry: dict[str, Any]) -> Calibration:
        """The calibration a judge's stored `calibration` entry describes (the entry
        `Judge.calibrate` wrote: its provenance, "threshold" and, if fitted, "count")."""
        count = entry.get("count")
        rest = {k: v for k, v in entry.items() if k not in ("threshold", "count")}
        return cls(judge, float(entry["threshold"]), json.dumps(rest), count)


@dataclass(frozen=True)
class JudgeOptions:
    """The judges to run and the models they use (None: the preset's choice)."""

    judges: str = "offline"  # a preset (copyaudit.judges.registry.PRESETS) or "name,name"
    judge_model: str | None = None  # instruct model for the fluency / LM refusal judges
    event_model: str | None = None  # entailment model for the events judge (path or hub id)
    notice_embedding_model: str | None = None  # notice judge, paraphrase (default: preset's)
    notice_multilingual_model: str | None = None  # notice judge, translate (none: not computed)
    verbatim_chars: int | None = None  # verbatim judge's threshold (default: 160 characters)
    extract_tokens: int | None = None  # extraction judge's k (default: 50 tokens)
    # Where the LM judges' models (judge_model, event_model) answer: "hf" loads them
    # here; "openai" asks an OpenAI-compatible server at judge_base_url for them by name,
    # with the key read from the environment variable judge_api_key_env (its name is
    # stored, never the key).
    judge_backend: str = "hf"
    judge_base_url: str | None = None
    judge_api_key_env: str = "OPENAI_API_KEY"
    judge_max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES  # per answer (openai)
    judge_request_deadline: float = DEFAULT_REQUEST_DEADLINE_S  # per request (openai)
    # the trace judge: the library folder (copyaudit.tracing.library; default: the one
    # beside the database, when it exists) and the fewest words a traced span holds
    trace_library: str | None = None
    trace_tokens: int | None = None
    trace_engine: str = "suffix-array"  # copyaudit.tracing.library.ENGINES
    # the trace_corpus judge: an infini-gram index built elsewhere (a folder, read only),
    # the tokenizer.json its corpus was tokenised with, the fewest tokens a span holds
    corpus_index: str | None = None
    corpus_tokenizer: str | None = None
    corpus_tokens: int | None = None
    device: str = "auto"  # where judge models load
    allow_download: bool = False  # hub models load from the local cache only unless set
    # thresholds fitted to labels, applied to the judges they name (not stored in the
    # run's configuration: each judge's own stored configuration records its calibration)
    calibrations: tuple[Calibration, ...] = ()

    def __post_init__(self) -> None:
        if self.judge_backend not in JUDGE_BACKENDS:
            raise UserError(
                f"judge backend must be one of {', '.join(JUDGE_BACKENDS)}, "
                f"got {self.judge_backend!r}"
            )
        if self.judge_backend == "openai" and not self.judge_base_url:
            raise UserError("--judge-backend openai needs --judge-base-url")
        if self.judge_backend == "hf" and self.judge_base_url:
            raise UserError("--judge-base-url is only for --judge-backend openai")
        if self.judge_base_url:
            check_base_url(self.judge_base_url)
        if not _ENV_NAME.fullmatch(self.judge_api_key_env):
            raise UserError(
                "--judge-api-key-env takes the NAME of an environment variable holding the "
                "key (e.g. OPENAI_API_KEY), never the key itself"
            )

    @property
    def paper(self) -> bool:
        """The paper preset: the source studies' models and settings."""
        return self.judges == "paper"

    def config(self) -> dict[str, Any]:
        """The judge part of a run's stored configuration."""
        stored = {name: getattr(self, name) for name in ALWAYS_STORED}
        defaults = stored_defaults()
        for name in STORED_WHEN_SET:
            if getattr(self, name) != defaults[name]:
                stored[name] = getattr(self, name)
        return stored


def check_base_url(url: str) -> None:
    """UserError unless `url` is an http(s) URL without credentials (models.http_client)."""
    check_url(url, "--judge-base-url", "--judge-api-key-env")


OFFLINE = JudgeOptions()  # the default: the offline preset, no judge models named


def stored_defaults() -> dict[str, Any]:
    """Each stored option and the value a stored configuration without it means."""
    defaults = {f.name: f.default for f in fields(JudgeOptions)}
    return {name: defaults[name] for name in ALWAYS_STORED + STORED_WHEN_SET}

"""What every run request names: the suite, the run and the model to load."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from copyaudit.endpoint_budget import DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_REQUEST_DEADLINE_S

# decoding methods that change the model's logits, so need a backend that has them (hf)
LOGIT_METHODS = ("memfree", "topk", "rcad")
# the request fields each decoding method reads, stored in the run's configuration only
# for that method (so a run of another method, or one made before these, still resumes)
METHOD_PARAMETERS: dict[str, tuple[str, ...]] = {
    "topk": ("topk_std", "topk_k", "decoding_seed"),
    "rcad": ("rcad_alpha",),
}


@dataclass(frozen=True)
class ModelRequest:
    """Fields shared by generation runs (runner.RunRequest) and DE-COP runs
    (decop_run.DecopRequest); each adds its own and names its runs."""

    suite: str
    name: str | None = None
    model: str = "default"
    backend: str = "hf"  # hf | openai
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    device: str = "auto"
    dtype: str = "auto"  # one of vocabulary.DTYPE_NAMES
    batch_size: int = 8  # prompts per batch
    # an endpoint's answer cap and each request's whole deadline (backend openai)
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    request_deadline: float = DEFAULT_REQUEST_DEADLINE_S

    def load_options(self) -> dict[str, Any]:
        """The options copyaudit.models.registry loads the model with (the registry drops
        those that mean nothing to the backend)."""
        return {
            "base_url": self.base_url,
            "api_key_env": self.api_key_env,
            "device": self.device,
            "dtype": self.dtype,
            "batch_size": self.batch_size,
            "max_response_bytes": self.max_response_bytes,
            "deadline": self.request_deadline,
        }

    def _default_name(self, pattern: str, **fields: str) -> str:
        """`self.name`, else `pattern` with {suite}, {model} (a local path's last part)
        and `fields` filled in, slashes made safe."""
        if self.name:
            return self.name
        model = Path(self.model).name if self.backend == "hf" else self.model
        return pattern.format(suite=self.suite, model=model, **fields).replace("/", "_")

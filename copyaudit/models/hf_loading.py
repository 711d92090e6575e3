"""Loading Hugging Face causal LMs safely (safetensors only, no remote code, offline by
default) and describing what was loaded."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from copyaudit.errors import UserError
from copyaudit.hashing import file_sha256
from copyaudit.vocabulary import DTYPE_NAMES

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase


class ModelLoadError(UserError):
    """A model could not be loaded; the message says what to do."""


@dataclass
class LoadedCausalLM:
    """A causal LM, its tokenizer and where they came from. Shared by the generator and
    the scorers so that one model in memory can serve all of them."""

    model: PreTrainedModel
    tokenizer: PreTrainedTokenizerBase
    source: str  # hub id or local path as given
    device: str
    dtype: str
    pad_token_id: int
    revision: str | None = None  # hub commit hash, when loaded from the hub cache
    local_path: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # added to provenance()
    _weights_sha256: str | None = field(default=None, repr=False)

    def weights_sha256(self) -> str | None:
        """SHA-256 over the safetensors files of a local model directory (computed once;
        reads every weight file, so it takes a while for large models)."""
        if self.local_path is None:
            return None
        if self._weights_sha256 is None:
            self._weights_sha256 = weights_digest(self.local_path)
        return self._weights_sha256

    def provenance(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "model": self.source,
            "model_class": type(self.model).__name__,
            "device": self.device,
            "dtype": self.dtype,
        }
        if self.revision:
            info["revision"] = self.revision
        if self.local_path is not None:
            info["local_path"] = str(self.local_path)
            info["weights_sha256"] = self.weights_sha256()
        info.update(self.extra)
        return info


def weights_digest(directory: Path) -> str:
    """One SHA-256 over (file name, file SHA-256) of every *.safetensors file, sorted."""
    files = sorted(directory.glob("*.safetensors"))
    if not files:
        raise ModelLoadError(f"no .safetensors weight files in {directory}")
    combined = hashlib.sha256()
    for path in files:
        combined.update(f"{path.name}\0{file_sha256(path)}\n".encode())
    return combined.hexdigest()


def resolve_device(device: str) -> str:
    """`auto` -> `cuda` when available, else `cpu`; anything else is passed through."""
    import torch  # deferred: loads torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ModelLoadError(f"device {device!r} requested but CUDA is not available")
    return device


def resolve_dtype(dtype: str, device: str) -> Any:
    """`auto` -> bfloat16 on CUDA when supported, float16 on other CUDA, float32 on CPU."""
    import torch  # deferred: loads torch

    if dtype not in DTYPE_NAMES:
        raise ValueError(f"dtype must be one of {DTYPE_NAMES}, got {dtype!r}")
    if dtype != "auto":
        return getattr(torch, dtype)
    if device.startswith("cuda"):
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.float32


def quiet_transformers() -> None:
    """No progress bars: they would write over the terminal UI."""
    from transformers.utils import logging as hf_logging  # deferred: loads transformers

    hf_logging.disable_progress_bar()


def hub_options(allow_download: bool) -> dict[str, Any]:
    """`from_pretrained` options of every load here: no remote code, and the local
    files (a path, the Hugging Face cache) only unless downloads are allowed."""
    return {"trust_remote_code": False, "local_files_only": not allow_download}


def load_pretrained(
    auto_class: Any, source: str, device: str, dtype: Any, options: dict[str, Any]
) -> tuple[Any, Any]:
    """(model, tokenizer) from `source`: safetensors only, on `device`, in eval mode."""
    from transformers import AutoTokenizer  # deferred: transformers loads torch

    tokenizer = AutoTokenizer.from_pretrained(source, **options)
    model = auto_class.from_pretrained(source, dtype=dtype, use_safetensors=True, **options)
    model.to(device)
    if device.startswith("cuda"):
        skip_cudnn_attention()
    return model.eval(), tokenizer


def skip_cudnn_attention() -> None:
    """Let scaled_dot_product_attention use its flash / memory-efficient kernels, not
    cuDNN's. cuDNN builds a plan for every new shape, and decoding meets a new key
    length at every step while each prompt brings its own length: on an H100 (torch
    2.11) that planning made decoding 3.8x slower at batch 8 and batched DE-COP scoring
    7.9x slower; with shapes seen before, both backends ran at the same speed
    (tests/bench/accelerator.sh, docs/benchmarks.md "On a GPU")."""
    import torch  # deferred: loads torch

    torch.backends.cuda.enable_cudnn_sdp(False)


def load_causal_lm(
    model: str,
    device: str = "auto",
    dtype: str = "auto",
    allow_download: bool = False,
    revision: str | None = None,
    hub_cache_dir: str | None = None,
) -> LoadedCausalLM:
    """Load a causal LM and its tokenizer from a local directory or a hub id.

    Safetensors only, `trust_remote_code=False`; hub ids resolve from the local cache
    (`hub_cache_dir`, else the Hugging Face default) unless `allow_download` is set."""
    from transformers import AutoModelForCausalLM  # deferred: transformers loads torch

    quiet_transformers()
    resolved_device = resolve_device(device)
    torch_dtype = resolve_dtype(dtype, resolved_device)
    local_path = Path(model).expanduser() if Path(model).expanduser().is_dir() else None
    source = str(local_path) if local_path is not None else model
    options = hub_options(allow_download)
    if revision is not None:
        options["revision"] = revision
    if hub_cache_dir is not None:
        options["cache_dir"] = hub_cache_dir
    try:
        causal_lm, tokenizer = load_pretrained(
            AutoModelForCausalLM, source, resolved_device, torch_dtype, options
        )
    except (OSError, ValueError) as error:
        hint = (
            ""
            if allow_download or local_path is not None
            else " (offline: only models already in the Hugging Face cache can be used; "
            "allow downloads to fetch it)"
        )
        raise ModelLoadError(f"cannot load model {model!r}: {error}{hint}") from error
    pad_token_id = _pad_token_id(tokenizer)
    return LoadedCausalLM(
        model=causal_lm,
        tokenizer=tokenizer,
        source=source,
        device=resolved_device,
        dtype=str(torch_dtype).removeprefix("torch."),
        pad_token_id=pad_token_id,
        revision=None if local_path is not None else hub_commit(source, options),
        local_path=local_path,
    )


def hub_commit(model_id: str, options: dict[str, Any]) -> str | None:
    """The commit hash of the hub snapshot that was loaded (read from the cache path of
    its config.json; transformers 5 no longer keeps it on the config)."""
    # deferred: loads transformers
    from transformers.utils.hub import cached_file, extract_commit_hash

    keys = ("revision", "cache_dir", "local_files_only")
    try:
        path = cached_file(model_id, "config.json", **{k: options[k] for k in keys if k in options})
    except OSError:
        return None
    return extract_commit_hash(path, None)


def _pad_token_id(tokenizer: PreTrainedTokenizerBase) -> int:
    """The tokenizer's pad id; falls back to EOS (set on the tokenizer), then 0. We pad
    by hand with an attention mask, so the id only needs to be a valid token."""
    if tokenizer.pad_token_id is None and tokenizer.eos_token is not None:
        tokenizer.pad_token = tokenizer.eos_token
    if tokenizer.pad_token_id is not None:
        return int(tokenizer.pad_token_id)
    return 0


def max_positions(model: PreTrainedModel) -> int | None:
    """The model's context length, when its config says."""
    config = model.config
    for name in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return None

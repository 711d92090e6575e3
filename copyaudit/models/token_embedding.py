"""Contextual token embeddings for BERTScore-style similarity.

`HFTokenEmbedder` reads one hidden layer of an `HFEmbedder`'s encoder for every
token of a text, special tokens dropped, each vector L2-normalised (BERTScore's
recipe; Zhang et al., 2019). A text longer than the model's window is cut into
consecutive windows that are encoded separately (BERTScore itself truncates at
the window), so a long output is compared whole.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from copyaudit.models.embedding import HFEmbedder


@runtime_checkable
class TokenEmbedder(Protocol):
    def embed_tokens(self, texts: Sequence[str]) -> list[np.ndarray]:
        """One (n_tokens, dim) array of L2-normalised vectors per text (n may be 0)."""
        ...

    def provenance(self) -> dict[str, Any]: ...


class HFTokenEmbedder:
    """Token vectors from `layer` (hidden_states index; None = the last layer) of an
    `HFEmbedder`'s model, sharing its loaded weights."""

    def __init__(
        self, embedder: HFEmbedder, layer: int | None = None, window: int | None = None
    ) -> None:
        self.embedder = embedder
        self.layer = layer
        special = len(embedder.tokenizer("", return_special_tokens_mask=True)["input_ids"])
        self.window = max(8, (window or embedder.max_length) - special)
        # text -> vectors: the notice study's references repeat (one snippet under every
        # notice level and query, and again for each run), and each costs a forward
        # pass per window of a 1,000-word text
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()

    CACHE_TEXTS = 256

    def embed_tokens(self, texts: Sequence[str]) -> list[np.ndarray]:
        return [self._cached(text) for text in texts]

    def _cached(self, text: str) -> np.ndarray:
        if text in self._cache:
            self._cache.move_to_end(text)
            return self._cache[text]
        vectors = self._cache[text] = self._one(text)
        vectors.setflags(write=False)  # shared by every caller of the same text
        if len(self._cache) > self.CACHE_TEXTS:
            self._cache.popitem(last=False)
        return vectors

    def _one(self, text: str) -> np.ndarray:
        import torch  # deferred: loads torch

        tokenizer, model = self.embedder.tokenizer, self.embedder.model
        encoded = tokenizer(text, return_special_tokens_mask=True, verbose=False)
        ids, special = encoded["input_ids"], encoded["special_tokens_mask"]
        lead = next((i for i, s in enumerate(special) if not s), len(ids))
        tail = next((i for i in range(len(ids), 0, -1) if not special[i - 1]), lead)
        body = ids[lead:tail]
        if not body:
            return np.zeros((0, model.config.hidden_size), dtype=np.float32)
        rows: list[np.ndarray] = []
        for start in range(0, len(body), self.window):
            chunk = body[start : start + self.window]
            window = ids[:lead] + chunk + ids[tail:]
            tensor = torch.tensor([window], device=self.embedder.device)
            with torch.inference_mode():
                out = model(input_ids=tensor, output_hidden_states=True)
            layer = out.hidden_states[-1 if self.layer is None else self.layer][0].float()
            vectors = layer[lead : lead + len(chunk)]
            rows.append(torch.nn.functional.normalize(vectors, p=2, dim=1).cpu().numpy())
        return np.concatenate(rows, axis=0)

    def provenance(self) -> dict[str, Any]:
        info = dict(self.embedder.provenance())
        info["token_layer"] = "last" if self.layer is None else self.layer
        info["token_window"] = self.window
        info.pop("pooling", None)
        return info

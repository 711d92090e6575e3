"""Extraction probability p_z (Hayes et al., "Measuring memorization through
probabilistic discoverable extraction"): the probability that a decoding scheme emits the
exact suffix z after the prefix, read from one teacher-forced forward pass.

p_z is the product over the suffix tokens of each token's probability under the scheme,
given the prefix and the suffix tokens before it:

- greedy: 1 when every suffix token is the argmax of its logits (the first index on a
  tie, as `torch.argmax` and `generate` pick), else 0;
- top-k at temperature T: the softmax of logits / T over the k highest (ties with the
  k-th kept, as transformers' TopKLogitsWarper and Cooper et al.'s pz.py keep them),
  renormalised; a token outside them has probability 0;
- sampling at temperature T: the softmax of logits / T.

From p_z, the tries needed for the suffix to come out with probability p:
n = ceil(log(1 - p) / log(1 - p_z)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from torch import Tensor

SCHEME_NAMES = ("greedy", "topk", "sampling")
DEFAULT_P = 0.95


@dataclass(frozen=True)
class DecodingScheme:
    """How the decoder picks each token: greedy, top-k with temperature, or sampling."""

    name: str  # one of SCHEME_NAMES
    top_k: int | None = None  # topk only
    temperature: float = 1.0  # topk and sampling

    def __post_init__(self) -> None:
        if self.name not in SCHEME_NAMES:
            raise ValueError(f"unknown scheme {self.name!r} (one of {', '.join(SCHEME_NAMES)})")
        if self.name == "topk" and (self.top_k is None or self.top_k < 1):
            raise ValueError("the topk scheme needs top_k >= 1")
        if not self.temperature > 0:
            raise ValueError(f"temperature must be > 0, got {self.temperature}")

    @property
    def label(self) -> str:
        """A short name, as judge names and reports show it: greedy, top40_t1, sampling_t0.7."""
        if self.name == "greedy":
            return "greedy"
        temperature = f"t{self.temperature:g}"
        if self.name == "topk":
            return f"top{self.top_k}_{temperature}"
        return f"sampling_{temperature}"

    def config(self) -> dict[str, Any]:
        if self.name == "greedy":
            return {"scheme": "greedy"}
        out: dict[str, Any] = {"scheme": self.name, "temperature": self.temperature}
        if self.name == "topk":
            out["top_k"] = self.top_k
        return out


def token_log_probs(logits: Tensor, targets: Tensor, scheme: DecodingScheme) -> Tensor:
    """log P(target_i) under `scheme` for each row i of `logits` ([n, vocab]) and its
    target id ([n]); float32, -inf where the scheme cannot emit the target."""
    import torch  # deferred: reports read this module's figures (n_for_p) without a model

    logits = logits.float()
    picked = targets.unsqueeze(-1)
    if scheme.name == "greedy":
        hit = logits.argmax(dim=-1) == targets
        return torch.where(hit, 0.0, -math.inf).to(torch.float32)
    scaled = logits / scheme.temperature
    if scheme.name == "topk":
        k = min(int(scheme.top_k or 1), scaled.shape[-1])
        kth = torch.topk(scaled, k, dim=-1).values[..., -1:]
        scaled = scaled.masked_fill(scaled < kth, -math.inf)
    log_probs = torch.log_softmax(scaled, dim=-1)
    return torch.gather(log_probs, -1, picked).squeeze(-1)


def total_log_prob(token_values: Any) -> float:
    """log p_z: the sum of the per-token log-probabilities (in float64), -inf when any is."""
    values = [float(v) for v in token_values]
    if any(v == -math.inf for v in values):
        return -math.inf
    return math.fsum(values)


def n_for_p(pz: float, p: float = DEFAULT_P) -> float:
    """The tries after which the suffix comes out with probability at least `p`:
    ceil(log(1 - p) / log(1 - p_z)); inf when p_z is 0, 1 when p_z is 1."""
    if not 0 < p < 1:
        raise ValueError(f"p must be in (0, 1), got {p}")
    if pz <= 0:
        return math.inf
    if pz >= 1:
        return 1.0
    return float(math.ceil(math.log1p(-p) / math.log1p(-pz)))


def discoverable(pz: float, n: int, p: float = DEFAULT_P) -> bool:
    """(n, p)-discoverable: n tries bring the suffix out with probability at least p,
    1 - (1 - p_z)^n >= p."""
    return n_for_p(pz, p) <= n

"""Models with random weights in the shapes of real ones, for timing on an accelerator
the real weights cannot reach (the device tool carries 64 MiB; SmolLM2-135M's GGUF alone
is 98 MB, and the machine has no network).

A forward pass's arithmetic and memory traffic depend on the shapes alone, so tokens/s
and batched vs one-at-a-time ratios measured on these models hold for the real weights.
What they say (text, probabilities, verdicts) means nothing and is never reported as a
result; the equality checks between modes still hold, since both modes compute the
same function.

Run: .venv/bin/python tests/bench/random_models.py causal SHAPE OUT_DIR --from DIR
  DIR holds a Llama-architecture config.json and the tokenizer files (e.g. the embedded
  default's converted cache, ~/.cache/copyaudit/models/smollm2-135m-instruct); OUT_DIR
  gets config.json with SHAPE's sizes, random safetensors (bfloat16) and the tokenizer.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

# Sizes of the published models' configs; everything else comes from the source config.
LLAMA_SIZES = ("hidden_size", "intermediate_size", "num_hidden_layers",
               "num_attention_heads", "num_key_value_heads", "head_dim")  # fmt: skip
CAUSAL_SHAPES: dict[str, dict[str, int]] = {
    name: dict(zip(LLAMA_SIZES, sizes, strict=True))
    for name, sizes in {
        "smollm2-135m": (576, 1536, 30, 9, 3, 64),
        "smollm2-1.7b": (2048, 8192, 24, 32, 32, 64),
        "llama-3.2-1b": (2048, 8192, 16, 32, 8, 64),
        "llama-3.1-8b": (4096, 14336, 32, 32, 8, 128),
    }.items()
}
T5_SHAPES: dict[str, dict[str, Any]] = {
    "flan-t5-large": {
        "d_model": 1024, "d_ff": 2816, "d_kv": 64, "num_heads": 16, "num_layers": 24,
        "num_decoder_layers": 24, "feed_forward_proj": "gated-gelu",
    },
    "flan-t5-xl": {
        "d_model": 2048, "d_ff": 5120, "d_kv": 64, "num_heads": 32, "num_layers": 24,
        "num_decoder_layers": 24, "feed_forward_proj": "gated-gelu",
    },
}  # fmt: skip
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja",
                   "generation_config.json", "special_tokens_map.json")  # fmt: skip


def _init_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def random_causal_lm(
    shape: str, source_dir: Path, dtype: Any = None, device: str | None = None, seed: int = 0
) -> Any:
    """A Llama-architecture model of `shape`'s sizes with random weights, in eval mode;
    the rest of its config (vocabulary, RoPE, norms) is `source_dir`'s config.json.
    Built directly in `dtype` (default bfloat16) on `device` (default: CUDA when there
    is one: initialising billions of weights on a CPU takes minutes)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    settings = json.loads((source_dir / "config.json").read_text(encoding="utf-8"))
    settings.update(CAUSAL_SHAPES[shape])
    config = LlamaConfig(**settings)
    torch.manual_seed(seed)
    default_dtype = torch.get_default_dtype()
    torch.set_default_dtype(dtype or torch.bfloat16)
    try:
        with torch.device(device or _init_device()):
            model = LlamaForCausalLM(config)
    finally:
        torch.set_default_dtype(default_dtype)
    return model.eval()


def write_causal_lm(shape: str, out_dir: Path, source_dir: Path, seed: int = 0) -> Path:
    """random_causal_lm(shape) in bfloat16, saved with the tokenizer of `source_dir`,
    loadable by path like any local model."""
    model = random_causal_lm(shape, source_dir, seed=seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    for name in TOKENIZER_FILES:
        if (source_dir / name).exists():
            shutil.copy(source_dir / name, out_dir / name)
    return out_dir


def random_t5(shape: str, vocab_size: int, pad_id: int, eos_id: int, seed: int = 0) -> Any:
    """A T5 model of `shape`'s sizes with random weights over a `vocab_size` vocabulary
    (the benchmark's own tokenizer; only the output layer's size depends on it)."""
    import torch
    from transformers import GenerationConfig, T5Config, T5ForConditionalGeneration

    config = T5Config(
        vocab_size=vocab_size, pad_token_id=pad_id, eos_token_id=eos_id,
        decoder_start_token_id=pad_id, **T5_SHAPES[shape],
    )  # fmt: skip
    torch.manual_seed(seed)
    with torch.device(_init_device()):
        model = T5ForConditionalGeneration(config)
    model.generation_config = GenerationConfig(
        decoder_start_token_id=pad_id, eos_token_id=eos_id, pad_token_id=pad_id
    )
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=("causal",))
    parser.add_argument("shape", choices=sorted(CAUSAL_SHAPES))
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--from", dest="source", type=Path, required=True)
    args = parser.parse_args()
    path = write_causal_lm(args.shape, args.out_dir, args.source)
    print(f"{args.shape} with random weights written to {path}")


if __name__ == "__main__":
    main()

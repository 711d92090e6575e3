"""Tiny causal language models for tests: built from a config, trained in seconds.

Nothing here touches the network or a model hub. The tokenizer is a byte-level BPE
trained on the given texts, so decoding round-trips the text exactly (spaces,
punctuation and newlines included). `train_to_memorize` overfits a tiny Llama on a
few passages so that greedy decoding from a prefix reproduces the continuation
verbatim, even when an instruction or few-shot demonstrations come before the prefix.

Typical use::

    tok = build_tokenizer([memorized, other], tmp_path / "m")
    build_tiny_causal_lm(tmp_path / "m", tok)
    train_to_memorize(tmp_path / "m", [memorized])
    generator = HFGenerator(str(tmp_path / "m"), device="cpu")
"""

from __future__ import annotations

import random
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.process_cache import scratch_folder

PAD, BOS, EOS = "<pad>", "<s>", "</s>"

# A role-tagged template, so that chat requests work with the tiny models too.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "<|{{ message['role'] }}|>\n{{ message['content'] }}\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)

# Text that is mixed in before the memorized passages during training, so the tiny
# model learns to continue a passage whatever prompt template precedes it.
FILLER_TEXT = (
    "Continue the following text. Complete the passage from the book. "
    "Here is the beginning of a story: Title: Author: Answer the question. "
    "Please repeat the text below exactly. Output: Input: Question: "
    "You are a helpful assistant. Do not reproduce copyrighted text.\n\n\n"
)

# Repeated in the tokenizer's training data so that the DE-COP answer letters
# " A".." D" each become one token.
ANSWER_LETTERS_TEXT = "Answer: A B C D\n" * 40

# Two passages written for these tests (no third-party text).
PASSAGE_LIGHTHOUSE = (
    "The lighthouse keeper on Varrow Point kept a ledger of every ship that passed, "
    "though no one had asked him to and no one ever read it. He wrote the names in "
    "green ink, the weather in black, and in the margin a short remark about the "
    "sound the sea made that evening. Some nights it hissed like a kettle left on "
    "the stove; some nights it knocked against the rocks like a neighbour who had "
    "forgotten his key. When the supply boat came each month, the pilot brought him "
    "flour, lamp oil, two newspapers already a week old, and a tin of the peppermints "
    "his sister had liked. He never ate them. He stacked the tins in the pantry in a "
    "tower that leaned a little more to the east every winter. In the spring of his "
    "eleventh year on the point, a girl rowed out from the village with a letter that "
    "had been sent to the wrong island. She stayed for tea because the wind had turned "
    "against her, and she asked about the ledger, and he found that he could not stop "
    "talking. He told her about the grain ship that had sailed past with its lights "
    "out, the schooner with a piano lashed to its deck, and the calm grey morning when "
    "a whale had followed the tide into the harbour and sung until noon."
)
PASSAGE_ORCHARD = (
    "Mira inherited the orchard on a Tuesday and the debts on the Wednesday after, "
    "which she later said was the only orderly thing about the whole affair. The "
    "trees were older than the house and the house was older than the road, and none "
    "of them had been pruned since her grandmother broke her wrist falling from a "
    "ladder in the year of the long frost. The apples were small, sour and spotted, "
    "and the buyers from the cider mill shook their heads at them before they had "
    "even climbed down from the cart. So Mira borrowed a saw, read three pamphlets "
    "from the agricultural society, and spent the first winter cutting away dead wood "
    "while the crows watched from the fence and made remarks. By March her hands were "
    "cracked and her woodpile reached the kitchen window. By May the trees had put out "
    "more blossom than anyone in the valley could remember, and the bees came from "
    "three farms away to see what the fuss was about. The cider men came back in "
    "October. They did not shake their heads this time; they argued with one another "
    "about the price, and Mira sat on the porch step with her arms folded and let them."
)


def split_passage(text: str, prefix_words: int) -> tuple[str, str]:
    """(prefix, continuation) at a word boundary; prefix + continuation == text and the
    continuation starts with the space that separates it from the prefix."""
    words = text.split(" ")
    prefix = " ".join(words[:prefix_words])
    return prefix, text[len(prefix) :]


def build_tokenizer(
    texts: Sequence[str],
    directory: str | Path,
    vocab_size: int = 600,
    chat_template: str | None = CHAT_TEMPLATE,
) -> Any:
    """Train a byte-level BPE tokenizer on `texts` (plus FILLER_TEXT and the answer
    letters), save it to
    `directory` and return it as a PreTrainedTokenizerFast with pad/bos/eos tokens.

    The tokenizer does not add BOS/EOS by itself (like most modern causal LMs)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[PAD, BOS, EOS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator([*texts, FILLER_TEXT, ANSWER_LETTERS_TEXT], trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, pad_token=PAD, bos_token=BOS, eos_token=EOS
    )
    if chat_template is not None:
        tokenizer.chat_template = chat_template
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(directory)
    return tokenizer


def build_tiny_causal_lm(
    directory: str | Path, tokenizer: Any, seed: int = 0, **config: Any
) -> Path:
    """Save a randomly initialised tiny Llama (hidden 64, 2 layers by default) and the
    tokenizer to `directory` as safetensors; `config` overrides LlamaConfig fields."""
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    settings: dict[str, Any] = {
        "vocab_size": len(tokenizer),
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "max_position_embeddings": 1024,
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.pad_token_id,
        "tie_word_embeddings": False,
    }
    settings.update(config)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(LlamaConfig(**settings))
    model.generation_config = GenerationConfig(
        bos_token_id=settings["bos_token_id"],
        eos_token_id=settings["eos_token_id"],
        pad_token_id=settings["pad_token_id"],
    )
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory, safe_serialization=True)
    tokenizer.save_pretrained(directory)
    return directory


def train_to_memorize(
    model_dir: str | Path,
    texts: Sequence[str],
    steps: int = 300,
    lr: float = 1e-2,
    target_loss: float = 0.02,
    max_seconds: float | None = None,
    seed: int = 0,
    filler_texts: Sequence[str] = (FILLER_TEXT,),
) -> Path:
    """Overfit the model in `model_dir` on `texts` and save it back in place.

    Each step trains on every passage, each preceded by a random stretch of filler
    tokens (loss only on the passage), so the memorized continuation survives the
    instructions and demonstrations that prompt templates put before a prefix.
    Stops when the loss falls below `target_loss` (typically after 60-100 steps, a
    few seconds on an idle 2-core CPU) or after `steps` steps. Deterministic for a
    given seed; `max_seconds` adds a wall-clock cut-off, which makes the result depend
    on machine speed, so it is off by default."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(seed)
    rng = random.Random(seed)
    model_dir = Path(model_dir)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, use_safetensors=True)
    model.train()

    passages = [tokenizer.encode(text, add_special_tokens=False) for text in texts]
    filler: list[int] = []
    for text in filler_texts:
        filler.extend(tokenizer.encode(text, add_special_tokens=False))
    pad_id = tokenizer.pad_token_id

    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    started = time.monotonic()
    for _step in range(steps):
        input_ids, attention_mask, labels = _training_batch(passages, filler, pad_id, rng)
        loss = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if loss.item() < target_loss:
            break
        if max_seconds is not None and time.monotonic() - started > max_seconds:
            break

    model.eval()
    model.save_pretrained(model_dir, safe_serialization=True)
    return model_dir


def _training_batch(
    passages: list[list[int]], filler: list[int], pad_id: int, rng: random.Random
) -> tuple[Any, Any, Any]:
    """Right-padded batch: [random filler run] + passage, labels only on the passage.

    Half the rows get no filler at all so the passage is also learned from its start."""
    import torch

    rows: list[tuple[list[int], list[int]]] = []
    for passage in passages:
        length = 0 if rng.random() < 0.5 or not filler else rng.randint(1, min(48, len(filler)))
        start = rng.randint(0, len(filler) - length) if length else 0
        prefix = filler[start : start + length]
        rows.append((prefix + passage, [-100] * len(prefix) + passage))
    width = max(len(ids) for ids, _ in rows)
    input_ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(rows), width), dtype=torch.long)
    labels = torch.full((len(rows), width), -100, dtype=torch.long)
    for row, (ids, targets) in enumerate(rows):
        input_ids[row, : len(ids)] = torch.tensor(ids)
        attention_mask[row, : len(ids)] = 1
        labels[row, : len(targets)] = torch.tensor(targets)
    return input_ids, attention_mask, labels


# Trained models of this test process, by (memorized, others, seed): training is
# deterministic, so a second fixture asking for the same model gets a copy.
_MEMORIZING: dict[tuple[tuple[str, ...], tuple[str, ...], int], Path] = {}


def build_memorizing_model(
    directory: str | Path,
    memorized: Sequence[str],
    others: Sequence[str] = (),
    seed: int = 0,
) -> Path:
    """Tokenizer on all texts + tiny Llama trained to memorize `memorized` only.

    Trained once per test process for the same texts and seed (training is
    deterministic without a time limit), then copied into `directory`."""
    key = (tuple(memorized), tuple(others), seed)
    if key not in _MEMORIZING:
        trained = scratch_folder("tinymodel")
        tokenizer = build_tokenizer([*memorized, *others], trained)
        build_tiny_causal_lm(trained, tokenizer, seed=seed)
        _MEMORIZING[key] = train_to_memorize(trained, memorized, seed=seed)
    shutil.copytree(_MEMORIZING[key], directory, dirs_exist_ok=True)
    return Path(directory)


def train_seq2seq_answers(model: Any, tokenizer: Any, examples: list[tuple[str, str]]) -> None:
    """Overfit a seq2seq model on (prompt, answer) pairs until greedy decoding
    reproduces them (at most 300 steps)."""
    import torch

    prompts = tokenizer([p for p, _ in examples], return_tensors="pt", padding=True)
    targets = [tokenizer(a, add_special_tokens=False)["input_ids"] for _, a in examples]
    width = max(len(t) for t in targets) + 1
    labels = torch.full((len(examples), width), -100)
    for row, ids in enumerate(targets):
        labels[row, : len(ids) + 1] = torch.tensor([*ids, tokenizer.eos_token_id])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    # One thread: on a small shared machine, multi-threaded backward passes of a
    # model this tiny can be 30x slower when other processes compete for the cores.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for _ in range(300):
            loss = model(**prompts, labels=labels).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if loss.item() < 0.01:
                break
    finally:
        torch.set_num_threads(threads)
    model.eval()

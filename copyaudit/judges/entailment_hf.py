"""Model-backed event-support scorers (Hugging Face transformers models).

All three take an already loaded model and tokenizer (see `judges.loading` for
loading by hub id or path) and score every (claim, passage) pair of one call in
batches of `batch_size`, sorted by length to limit padding; the batch halves on
out-of-memory (`AdaptiveBatcher`).

- `Seq2SeqAttributable`: the CopyBench judge (Flan-T5-XL, Figure 8 prompt).
- `NLICrossEncoder`: an NLI sequence classifier, entailment probability.
- `CausalYesNo`: a causal LM asked yes/no, P(" Yes") against P(" No").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from copyaudit.models.batching import AdaptiveBatcher
from copyaudit.models.seq2seq_greedy import greedy_until_settled, plain_greedy

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

# CopyBench's attribution prompt (Figure 8), with the exact layout of its
# reference code (scripts/eval_event_copying.py).
ATTRIBUTION_PROMPT = (
    "### Instruction:\n"
    "Please solely verify whether the reference can support the claim. "
    "Options: 'attributable' or 'not attributable'.\n"
    "### Input:\n"
    "Claim: {claim}\n\n"
    "Reference: {passage}\n\n"
    "### Output:"
)

YES_NO_PROMPT = (
    "Passage: {passage}\n\n"
    "Claim: {claim}\n\n"
    "Does the passage support the claim? Answer Yes or No.\n"
    "Answer:"
)

SEQ2SEQ_SCORING = ("generate", "first_token")
ATTRIBUTABLE = "attributable"  # the reference code's exact-match answer
NOT_ATTRIBUTABLE = "not attributable"
# The score of an answer: the two exact answers, anything else unreadable (NaN: the
# events judge records the event as a judge error, never as "not attributable").
_ANSWER_SCORES = {ATTRIBUTABLE: 1.0, NOT_ATTRIBUTABLE: 0.0}


def exact_answer_score(text: str) -> float:
    """1.0 for exactly "attributable", 0.0 for exactly "not attributable", else NaN."""
    return _ANSWER_SCORES.get(text, math.nan)


def could_become_answer(text: str) -> bool:
    """True while greedy decoding can still reach one of the two answers."""
    return any(answer.startswith(text) for answer in _ANSWER_SCORES)


def _model_device(model: PreTrainedModel) -> Any:
    return next(model.parameters()).device


def choice_ids(tokenizer: PreTrainedTokenizerBase, yes: str, no: str) -> list[int]:
    """The first token ids of the two answers, whose logits a backend compares."""
    first = [tokenizer(word, add_special_tokens=False)["input_ids"] for word in (yes, no)]
    if not all(first) or first[0][0] == first[1][0]:
        raise ValueError(f"tokenizer cannot tell {yes!r} from {no!r} by first token")
    return [first[0][0], first[1][0]]


def answer_ids(tokenizer: PreTrainedTokenizerBase, answer: str) -> list[int]:
    """The ids of `answer` alone, when they decode back to it (else none): the
    greedy loop reads them in one teacher-forced decoder pass."""
    ids = tokenizer(answer, add_special_tokens=False)["input_ids"]
    return ids if tokenizer.decode(ids, skip_special_tokens=True) == answer else []


def _model_name(model: PreTrainedModel) -> str:
    return str(getattr(model.config, "_name_or_path", "") or type(model).__name__)


def _sorted_batches(
    texts: Sequence[Any],
    length: Callable[[Any], int],
    batcher: AdaptiveBatcher,
    run_batch: Callable[[Sequence[Any]], list[float]],
) -> list[float]:
    """Run `run_batch` over the items sorted by length; results in input order."""
    order = sorted(range(len(texts)), key=lambda i: length(texts[i]))
    sorted_scores = batcher.run([texts[i] for i in order], run_batch)
    scores = [0.0] * len(texts)
    for position, index in enumerate(order):
        scores[index] = sorted_scores[position]
    return scores


class Seq2SeqAttributable:
    """Flan-T5 style attribution judge, as in CopyBench.

    scoring="generate" (the paper): greedy decoding of at most `max_new_tokens`
    tokens; the pair scores 1.0 when the decoded text is exactly "attributable"
    (the reference code's test), 0.0 when it is exactly "not attributable", and NaN
    (unreadable, a judge error for the event) for anything else, which the reference
    code counted as 0. Decoding stops for a row at EOS or as soon as its text so far
    is a prefix of neither answer (`seq2seq_greedy`: the same
    greedy choices as generate(), which is kept for models whose generation config
    changes logits); the answer's tokens are read in one teacher-forced decoder
    pass, and only a row that leaves them on a possible prefix decodes step by step.
    scoring="first_token": one decoder step; the score is the probability of the
    first token of "attributable" renormalised against the first token of "not",
    a graded variant that needs no generation (not what the paper did).
    Prompts longer than `max_input_tokens` tokens keep their first tokens (the
    tail, "### Output:" included, is lost), exactly like the reference code's
    `truncation=True, max_length=512`; 128-token windows stay well below that.
    """

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        batch_size: int = 8,
        scoring: str = "generate",
        max_input_tokens: int = 512,
        max_new_tokens: int = 10,
        threshold: float = 0.5,
        source: str | None = None,
    ) -> None:
        if scoring not in SEQ2SEQ_SCORING:
            raise ValueError(f"scoring must be one of {SEQ2SEQ_SCORING}, got {scoring!r}")
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.batcher = AdaptiveBatcher(batch_size)
        self.scoring = scoring
        self.max_input_tokens = max_input_tokens
        self.max_new_tokens = max_new_tokens
        self.threshold = threshold
        self.source = source or _model_name(model)
        self.batches_run = 0  # forward/generate calls made (for tests and benchmarks)
        if scoring == "first_token":
            self._choice_ids = choice_ids(tokenizer, "attributable", "not")
        # read in one teacher-forced decoder pass each; empty: decoded one token per call
        self.answer_ids = answer_ids(tokenizer, ATTRIBUTABLE)
        self.other_answer_ids = answer_ids(tokenizer, NOT_ATTRIBUTABLE)

    def config(self) -> dict[str, Any]:
        return {
            "backend": "seq2seq-attributable",
            "model": self.source,
            "prompt": ATTRIBUTION_PROMPT,
            "scoring": self.scoring,
            "max_input_tokens": self.max_input_tokens,
            "max_new_tokens": self.max_new_tokens,
            "decoding": "greedy",
        }

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        prompts = [ATTRIBUTION_PROMPT.format(claim=c, passage=p) for c, p in pairs]
        return _sorted_batches(prompts, len, self.batcher, self._score_batch)

    def _decode(self, ids: list[int]) -> str:
        return cast(str, self.tokenizer.decode(ids, skip_special_tokens=True))  # one sequence

    def _score_batch(self, prompts: Sequence[str]) -> list[float]:
        import torch  # deferred: loads torch

        self.batches_run += 1
        inputs = self.tokenizer(
            list(prompts),
            return_tensors="pt",
            padding=True,
            truncation=True,
            max_length=self.max_input_tokens,
        ).to(_model_device(self.model))
        if self.scoring == "generate" and plain_greedy(self.model):
            generated_ids = greedy_until_settled(
                self.model,
                inputs["input_ids"],
                inputs["attention_mask"],
                self.max_new_tokens,
                lambda ids: not could_become_answer(self._decode(ids)),
                self.answer_ids,
                (self.other_answer_ids,),
            )
            return [exact_answer_score(self._decode(ids)) for ids in generated_ids]
        with torch.inference_mode():
            if self.scoring == "generate":
                generated = self.model.generate(
                    input_ids=inputs["input_ids"],
                    attention_mask=inputs["attention_mask"],
                    max_new_tokens=self.max_new_tokens,
                    do_sample=False,
                    num_beams=1,
                )
                texts = self.tokenizer.batch_decode(generated, skip_special_tokens=True)
                return [exact_answer_score(text) for text in texts]
            start = self.model.config.decoder_start_token_id
            decoder_input_ids = torch.full(
                (inputs["input_ids"].shape[0], 1), start, device=inputs["input_ids"].device
            )
            logits = self.model(
                input_ids=inputs["input_ids"],
                attention_mask=inputs["attention_mask"],
                decoder_input_ids=decoder_input_ids,
            ).logits[:, -1, :]
            pair = torch.softmax(logits[:, self._choice_ids].float(), dim=-1)
            return [float(p) for p in pair[:, 0]]


def entailment_label_index(id2label: Mapping[int, str] | Mapping[str, str]) -> int:
    """Index of the label whose name contains "entail" (case-insensitive), not
    "not_entailment"/"non-entailment"."""
    matches = [
        int(index)
        for index, label in id2label.items()
        if "entail" in label.lower() and not label.lower().startswith(("not", "non"))
    ]
    if len(matches) != 1:
        raise ValueError(f"cannot find one entailment label in id2label={id2label!r}")
    return matches[0]


class NLICrossEncoder:
    """NLI sequence classifier: premise = passage, hypothesis = claim; the score
    is the softmax probability of the entailment label (found in id2label)."""

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        batch_size: int = 16,
        max_length: int = 512,
        threshold: float = 0.5,
        source: str | None = None,
    ) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.batcher = AdaptiveBatcher(batch_size)
        self.max_length = max_length
        self.threshold = threshold
        self.source = source or _model_name(model)
        self.entailment_index = entailment_label_index(model.config.id2label or {})
        self.batches_run = 0

    def config(self) -> dict[str, Any]:
        return {
            "backend": "nli-cross-encoder",
            "model": self.source,
            "entailment_label": self.model.config.id2label[self.entailment_index],
            "max_length": self.max_length,
        }

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        return _sorted_batches(
            list(pairs), lambda pair: len(pair[0]) + len(pair[1]), self.batcher, self._score_batch
        )

    def _score_batch(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        import torch  # deferred: loads torch

        self.batches_run += 1
        inputs = self.tokenizer(
            [passage for _, passage in pairs],
            [claim for claim, _ in pairs],
            return_tensors="pt",
            padding=True,
            truncation=True,
            max_length=self.max_length,
        ).to(_model_device(self.model))
        with torch.inference_mode():
            logits = self.model(**inputs).logits
        probabilities = torch.softmax(logits.float(), dim=-1)[:, self.entailment_index]
        return [float(p) for p in probabilities]


class CausalYesNo:
    """A causal LM asked whether the passage supports the claim; the score is
    P(" Yes") / (P(" Yes") + P(" No")) at the next token. Prompts are padded on
    the right and read at each row's last real token; over-long prompts lose
    tokens from the left so the question at the end survives."""

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        batch_size: int = 8,
        max_length: int = 1024,
        threshold: float = 0.5,
        prompt: str = YES_NO_PROMPT,
        source: str | None = None,
    ) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        if tokenizer.pad_token_id is None:
            if tokenizer.eos_token is None:
                raise ValueError("tokenizer has neither a pad nor an eos token")
            tokenizer.pad_token = tokenizer.eos_token
        self.batcher = AdaptiveBatcher(batch_size)
        self.max_length = max_length
        self.threshold = threshold
        self.prompt = prompt
        self.source = source or _model_name(model)
        self.batches_run = 0
        self._choice_ids = choice_ids(tokenizer, " Yes", " No")

    def config(self) -> dict[str, Any]:
        return {
            "backend": "causal-yes-no",
            "model": self.source,
            "prompt": self.prompt,
            "max_length": self.max_length,
        }

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        prompts = [self.prompt.format(claim=c, passage=p) for c, p in pairs]
        return _sorted_batches(prompts, len, self.batcher, self._score_batch)

    def _score_batch(self, prompts: Sequence[str]) -> list[float]:
        import torch  # deferred: loads torch

        self.batches_run += 1
        encoded = [
            self.tokenizer(text, add_special_tokens=True)["input_ids"][-self.max_length :]
            for text in prompts
        ]
        width = max(len(ids) for ids in encoded)
        pad = self.tokenizer.pad_token_id
        device = _model_device(self.model)
        input_ids = torch.tensor(
            [ids + [pad] * (width - len(ids)) for ids in encoded], device=device
        )
        attention = torch.tensor(
            [[1] * len(ids) + [0] * (width - len(ids)) for ids in encoded], device=device
        )
        last = torch.tensor([len(ids) - 1 for ids in encoded], device=device)
        with torch.inference_mode():
            logits = self.model(input_ids=input_ids, attention_mask=attention).logits
        rows = logits[torch.arange(len(encoded), device=device), last]
        pair = torch.softmax(rows[:, self._choice_ids].float(), dim=-1)
        return [float(p) for p in pair[:, 0]]

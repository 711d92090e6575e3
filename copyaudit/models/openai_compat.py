"""Generation and DE-COP choice scoring over an OpenAI-compatible HTTP API (vLLM, TGI,
hosted services). Standard library only.

`base_url` is the API root including the version, e.g. "http://localhost:8000/v1";
requests go to base_url + "/chat/completions" or "/completions".
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import numpy as np

from copyaudit.endpoint_budget import DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_REQUEST_DEADLINE_S
from copyaudit.models.base import DecodingControl, GenerationRequest, GenerationResult
from copyaudit.models.http_client import JsonClient, RequestFailed
from copyaudit.models.stopping import DEFAULT_STOP, truncate_at_stop

Mode = Literal["chat", "completions"]
MODES: tuple[str, ...] = ("chat", "completions")


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")


def _map_bounded(function: Callable[[Any], Any], items: Sequence[Any], workers: int) -> list[Any]:
    """function over items with at most `workers` calls in flight, results in order."""
    if not items:
        return []
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(function, items))


class OpenAIGenerator:
    """Implements `Generator` over /chat/completions (mode "chat": every request is sent
    as messages, the server applies the chat template) or /completions (mode
    "completions": the prompt is sent as text, a system prompt prepended as a paragraph).

    Temperature 0 (as close to greedy as such APIs go), stop at three newlines. The
    OpenAI API has no repetition penalty; servers that accept one (vLLM:
    {"repetition_penalty": 1.1}) can be given it through `extra_body`. A request that
    fails for good (out of retries, an answer over `max_response_bytes`, past its
    `deadline`) comes back as GenerationResult(error=...). `tokens` is the server's
    usage.completion_tokens (0 when it reports none); `seconds` is the wall time of that
    request, retries included."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str | None = "OPENAI_API_KEY",
        mode: Mode = "chat",
        timeout: float = 60.0,
        max_retries: int = 4,
        backoff: float = 0.5,
        concurrency: int = 4,
        stop: str | None = DEFAULT_STOP,
        extra_body: dict[str, Any] | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        deadline: float = DEFAULT_REQUEST_DEADLINE_S,
    ) -> None:
        _check_mode(mode)
        self.model = model
        self.mode = mode
        self.concurrency = concurrency
        self.stop = stop or None
        self.extra_body = dict(extra_body or {})
        self.client = JsonClient(
            base_url, api_key_env, timeout, max_retries, backoff, max_response_bytes, deadline
        )

    def generate(
        self,
        requests: Sequence[GenerationRequest],
        logits_processor_factory: Callable[[], Any] | None = None,
        control: DecodingControl | None = None,
    ) -> list[GenerationResult]:
        """Requests go out `concurrency` at a time; with a `control`, a cancel stops
        sending and discards the batch (GenerationCancelled), and each answer reports
        its completion tokens."""
        if logits_processor_factory is not None:
            raise NotImplementedError(
                "logits processors (e.g. MemFree) need the model's logits; the OpenAI-"
                "compatible backend cannot apply them — use the hf backend"
            )
        if control is None:
            return _map_bounded(self._generate_one, requests, self.concurrency)

        def one(request: GenerationRequest) -> GenerationResult:
            control.check()
            result = self._generate_one(request)
            control.step(result.tokens)
            return result

        results = _map_bounded(one, requests, self.concurrency)
        control.check()
        return results

    def _generate_one(self, request: GenerationRequest) -> GenerationResult:
        started = time.perf_counter()
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_new_tokens,
            "temperature": 0,
        }
        if self.stop:
            body["stop"] = [self.stop]
        if self.mode == "chat":
            messages = [{"role": "user", "content": request.prompt}]
            if request.system:
                messages.insert(0, {"role": "system", "content": request.system})
            body["messages"] = messages
        else:
            body["prompt"] = (
                f"{request.system}\n\n{request.prompt}" if request.system else request.prompt
            )
        body.update(self.extra_body)
        try:
            answer = self.client.post(
                "chat/completions" if self.mode == "chat" else "completions", body
            )
            text = _answer_text(answer, self.mode)
        except RequestFailed as error:
            return GenerationResult("", 0, time.perf_counter() - started, error=str(error))
        usage = answer.get("usage") or {}
        tokens = usage.get("completion_tokens") if isinstance(usage, dict) else None
        return GenerationResult(
            text=truncate_at_stop(text, self.stop),
            tokens=int(tokens) if isinstance(tokens, int) else 0,
            seconds=time.perf_counter() - started,
        )

    def provenance(self) -> dict[str, Any]:
        return {
            "backend": "openai",
            "model": self.model,
            "base_url": self.client.base_url,
            "api_key_env": self.client.api_key_env,  # the variable's name, never the key
            "mode": self.mode,
            "decoding": {
                "temperature": 0,
                "stop": self.stop,
                "repetition_penalty": self.extra_body.get("repetition_penalty"),
                "extra_body": self.extra_body,
            },
            "retries": {
                "timeout_s": self.client.timeout,
                "max_retries": self.client.max_retries,
                "backoff_s": self.client.backoff,
                **self.client.limits(),
            },
            "concurrency": self.concurrency,
            "seconds": "wall time of each request, retries included",
            "tokens": "usage.completion_tokens reported by the server (0 when absent)",
        }


def _answer_text(answer: dict[str, Any], mode: str) -> str:
    try:
        choice = answer["choices"][0]
        text = choice["message"]["content"] if mode == "chat" else choice["text"]
    except (KeyError, IndexError, TypeError) as error:
        raise RequestFailed(f"unexpected answer shape: {str(answer)[:200]}") from error
    return text if isinstance(text, str) else ""


class OpenAIChoiceScorer:
    """Implements `ChoiceScorer` (DE-COP) over an OpenAI-compatible API.

    Default: one request per prompt with max_tokens=1 and the top log-probabilities
    (`top_logprobs`, default 20); the probability of each choice is read from the
    tokens whose stripped text equals the choice (" A" and "A" both count, summed),
    floored at `floor` when absent, and renormalised over the choices. With
    `letter_token_ids` (choice -> the model's token id) a logit bias of +100 on those
    tokens keeps them in the top list. In mode "chat" the chat API's logprobs format
    is read instead.

    `letter_only=True` is for endpoints without log-probabilities: the model answers in
    a few tokens, the first standalone choice letter is taken and the row is one-hot.

    A row of NaN marks a prompt whose probabilities could not be read (request failed
    for good, no choice among the top log-probabilities, or no letter in the answer);
    `last_errors` then holds the reason per prompt index."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str | None = "OPENAI_API_KEY",
        mode: Mode = "completions",
        timeout: float = 60.0,
        max_retries: int = 4,
        backoff: float = 0.5,
        concurrency: int = 4,
        top_logprobs: int = 20,
        letter_token_ids: dict[str, int] | None = None,
        letter_only: bool = False,
        floor: float = 1e-6,
        letter_only_max_tokens: int = 4,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        deadline: float = DEFAULT_REQUEST_DEADLINE_S,
    ) -> None:
        _check_mode(mode)
        self.model = model
        self.mode = mode
        self.concurrency = concurrency
        self.top_logprobs = top_logprobs
        self.letter_token_ids = dict(letter_token_ids or {})
        self.letter_only = letter_only
        self.floor = floor
        self.letter_only_max_tokens = letter_only_max_tokens
        self.client = JsonClient(
            base_url, api_key_env, timeout, max_retries, backoff, max_response_bytes, deadline
        )
        self.last_errors: dict[int, str] = {}
        self.system: str | None = None  # mode "chat": the system message before each prompt

    def use_chat(self, system: str | None) -> None:
        """Mode "chat" only (the server applies the template): send `system` first."""
        if self.mode != "chat":
            raise ValueError("chat prompts need --mode chat for an OpenAI-compatible endpoint")
        self.system = system

    def choice_probabilities(self, prompts: Sequence[str], choices: Sequence[str]) -> np.ndarray:
        labels = [choice.strip() for choice in choices]
        if len(set(labels)) != len(labels) or not all(labels):
            raise ValueError(f"choices must be distinct and non-blank: {list(choices)!r}")
        self.last_errors = {}
        outcomes = _map_bounded(
            lambda prompt: self._score_one(prompt, labels), list(prompts), self.concurrency
        )
        rows = np.full((len(prompts), len(labels)), np.nan, dtype=np.float64)
        for index, outcome in enumerate(outcomes):
            if isinstance(outcome, str):
                self.last_errors[index] = outcome
            else:
                rows[index] = outcome
        return rows

    def _score_one(self, prompt: str, labels: list[str]) -> np.ndarray | str:
        body = self._request_body(prompt, labels)
        path = "chat/completions" if self.mode == "chat" else "completions"
        try:
            answer = self.client.post(path, body)
            if self.letter_only:
                return one_hot_letter(_answer_text(answer, self.mode), labels)
            return probabilities_from_top_logprobs(
                _top_logprobs(answer, self.mode), labels, self.floor
            )
        except (RequestFailed, ValueError) as error:
            return str(error)

    def _request_body(self, prompt: str, labels: list[str]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "temperature": 0}
        if self.mode == "chat":
            body["messages"] = [{"role": "user", "content": prompt}]
            if self.system:
                body["messages"].insert(0, {"role": "system", "content": self.system})
        else:
            body["prompt"] = prompt
        if self.letter_only:
            body["max_tokens"] = self.letter_only_max_tokens
            return body
        body["max_tokens"] = 1
        if self.mode == "chat":
            body["logprobs"] = True
            body["top_logprobs"] = self.top_logprobs
        else:
            body["logprobs"] = self.top_logprobs
        bias = {
            str(self.letter_token_ids[label]): 100
            for label in labels
            if label in self.letter_token_ids
        }
        if bias:
            body["logit_bias"] = bias
        return body

    def provenance(self) -> dict[str, Any]:
        return {
            "backend": "openai",
            "model": self.model,
            "base_url": self.client.base_url,
            "mode": self.mode,
            "method": "letter_only (one-hot)" if self.letter_only else "top_logprobs",
            "top_logprobs": self.top_logprobs,
            "letter_token_ids": self.letter_token_ids,
            "floor": self.floor,
            **self.client.limits(),
        }


def _top_logprobs(answer: dict[str, Any], mode: str) -> dict[str, float]:
    """The first generated position's {token text: log-prob}, from either API format."""
    try:
        logprobs = answer["choices"][0]["logprobs"]
        if mode == "chat":
            entries = logprobs["content"][0]["top_logprobs"]
            return {str(entry["token"]): float(entry["logprob"]) for entry in entries}
        first = logprobs["top_logprobs"][0]
        return {str(token): float(value) for token, value in first.items()}
    except (KeyError, IndexError, TypeError, ValueError) as error:
        raise ValueError(f"no top log-probabilities in the answer: {str(answer)[:200]}") from error


def probabilities_from_top_logprobs(
    top: dict[str, float], labels: Sequence[str], floor: float = 1e-6
) -> np.ndarray:
    """Probabilities of the choice labels renormalised over the labels. A label missing
    from the top list gets `floor`; when no label is present at all, ValueError."""
    mass = dict.fromkeys(labels, 0.0)
    for token, logprob in top.items():
        label = token.strip()
        if label in mass and math.isfinite(logprob):
            mass[label] += math.exp(logprob)
    if not any(mass.values()):
        raise ValueError(f"none of the choices {list(labels)} among the top log-probabilities")
    values = np.array([max(mass[label], floor) for label in labels], dtype=np.float64)
    return values / values.sum()


def one_hot_letter(text: str, labels: Sequence[str]) -> np.ndarray:
    """One-hot row for the first standalone choice label in the answer ("B", " B.",
    "(B)", "Answer: B"); ValueError when there is none."""
    pattern = "|".join(re.escape(label) for label in sorted(labels, key=len, reverse=True))
    match = re.search(rf"(?<![A-Za-z0-9])({pattern})(?![A-Za-z0-9])", text)
    if match is None:
        raise ValueError(f"no choice letter in the answer {text[:80]!r}")
    row = np.zeros(len(labels), dtype=np.float64)
    row[list(labels).index(match.group(1))] = 1.0
    return row

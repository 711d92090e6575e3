"""Event copying: which reference events a story contains (CopyBench protocol).

The output has its newlines replaced by spaces and is cut into non-overlapping
windows of `window_tokens` spaCy tokens, as CopyBench cuts it (see `windows`; a
regex tokenizer stands in when spaCy is absent, and the config says which). An
event is copied when any window supports it according to an entailment backend
(`EntailmentModel`); the count is flagged at >= threshold.

Backends are asked window by window in rounds: round k asks window k of every
(generation, event) pair still unsupported, in one `score` call batched across
all generations of the `judge` call. Once a window supports an event, later
windows are not asked about it, so a supported event's score is the best score
among the windows asked up to and including the first supporting one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from copyaudit.judges.base import Judge
from copyaudit.judges.windows import (
    WINDOW_TOKENIZERS,
    Window,
    default_window_tokenizer,
    describe_window_tokenizer,
    split_windows,
)
from copyaudit.types import ItemVerdict, JudgeInput, Score, Span


@runtime_checkable
class EntailmentModel(Protocol):
    """Scores (claim, passage) pairs; a score >= `threshold` means "supported"."""

    threshold: float

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """One probability-like score per (claim, passage) pair, same order."""
        ...

    def config(self) -> dict[str, Any]:
        """What changes the scores (model id, prompt, batch-independent settings)."""
        ...


@dataclass
class _EventState:
    best: float | None = None
    supporting_window: int | None = None


class EventJudge(Judge):
    """Counts reference events supported by some window of the output."""

    name = "events"
    version = "2"  # 2: windows of spaCy tokens, as CopyBench (regex only without spaCy)

    def __init__(
        self,
        model: EntailmentModel,
        threshold: int = 5,
        window_tokens: int = 128,
        window_tokenizer: str | None = None,
    ) -> None:
        """`window_tokenizer`: "spacy" or "regex"; None picks spaCy when installed."""
        tokenizer = window_tokenizer or default_window_tokenizer()
        if tokenizer not in WINDOW_TOKENIZERS:
            raise ValueError(f"window_tokenizer must be one of {WINDOW_TOKENIZERS}")
        self.model = model
        self.threshold = threshold
        self.window_tokens = window_tokens
        self.window_tokenizer = tokenizer

    def config(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "window_tokens": self.window_tokens,
            "window_tokenizer": describe_window_tokenizer(self.window_tokenizer),
            "entailment_threshold": self.model.threshold,
            "entailment": self.model.config(),
        }

    def judge(self, items: Sequence[JudgeInput]) -> list[list[Score]]:
        events_per_item: list[list[str] | None] = []
        windows_per_item: list[list[Window]] = []
        for item in items:
            events = item.payload.get("reference_events")
            valid = isinstance(events, list) and all(isinstance(e, str) for e in events)
            events_per_item.append(list(events) if valid else None)
            windows_per_item.append(self.windows(item.output or ""))
        states = {
            (g, e): _EventState()
            for g, events in enumerate(events_per_item)
            for e in range(len(events or []))
        }
        self._ask_in_rounds(events_per_item, windows_per_item, states)
        return [
            [self._score(g, events_per_item[g], windows_per_item[g], states)]
            for g in range(len(items))
        ]

    def windows(self, output: str) -> list[Window]:
        """The passages each event is checked against: CopyBench's token windows."""
        return split_windows(output, self.window_tokens, self.window_tokenizer)

    def _ask_in_rounds(
        self,
        events_per_item: list[list[str] | None],
        windows_per_item: list[list[Window]],
        states: dict[tuple[int, int], _EventState],
    ) -> None:
        pending = list(states)
        round_index = 0
        while pending:
            asked = [key for key in pending if round_index < len(windows_per_item[key[0]])]
            if not asked:
                break
            pairs = [
                (events_per_item[g][e], windows_per_item[g][round_index].text)  # type: ignore[index]
                for g, e in asked
            ]
            scores = self._score_unique(pairs)
            pending = []
            for key, score in zip(asked, scores, strict=True):
                state = states[key]
                state.best = score if state.best is None else max(state.best, score)
                if score >= self.model.threshold:
                    state.supporting_window = round_index
                else:
                    pending.append(key)
            round_index += 1

    def _score_unique(self, pairs: list[tuple[str, str]]) -> list[float]:
        """Ask the backend once per distinct pair (identical outputs repeat pairs)."""
        unique = list(dict.fromkeys(pairs))
        scores = self.model.score(unique)
        if len(scores) != len(unique):
            raise RuntimeError(
                f"entailment backend returned {len(scores)} scores for {len(unique)} pairs"
            )
        by_pair = {pair: float(score) for pair, score in zip(unique, scores, strict=True)}
        return [by_pair[pair] for pair in pairs]

    def _score(
        self,
        g: int,
        events: list[str] | None,
        windows: list[Window],
        states: dict[tuple[int, int], _EventState],
    ) -> Score:
        if events is None:
            return Score(
                "events",
                None,
                threshold=self.threshold,
                target="event",
                error="case payload has no 'reference_events' list of strings",
            )
        verdicts: list[ItemVerdict] = []
        spans: list[Span] = []
        for e in range(len(events)):
            state = states[(g, e)]
            supported = state.supporting_window is not None
            verdicts.append(ItemVerdict(e, supported, state.best))
            if state.supporting_window is not None:
                window = windows[state.supporting_window]
                spans.append(
                    Span(window.start, window.end, item=e, note=f"window {state.supporting_window}")
                )
        count = sum(v.verdict for v in verdicts)
        return Score(
            "events",
            float(count),
            flagged=count >= self.threshold,
            threshold=self.threshold,
            spans=tuple(spans),
            items=tuple(verdicts),
            target="event",
            extra={"windows": [[w.start, w.end] for w in windows]},
        )


class EntailingEventJudge(EventJudge):
    """The events judge over the offline entailing scorer (`entailment_aligned`): the
    same verdicts and "events" metric, its own name so that runs judged by the embedding
    + lexical judge ("events", version 2) stay comparable. Its scorer aligns each event
    to the output's sentences itself, so the whole output is one passage (a 128-token
    window cuts sentences in two and doubles the chances of a false match)."""

    name = "events_entail"
    version = "1"

    def config(self) -> dict[str, Any]:
        config = super().config()
        config["window_tokens"] = "whole output"
        return config

    def windows(self, output: str) -> list[Window]:
        text = output.replace("\n", " ")
        start = len(text) - len(text.lstrip())
        end = len(text.rstrip())
        return [Window(start, end, text[start:end])] if end > start else []

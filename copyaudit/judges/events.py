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

A backend may score a pair NaN: its answer could not be had or read (a judge LM behind
an endpoint). The window does not support the event and later windows are still asked;
an event left unsupported with such a window is unresolved: its item verdict is None (a
judge error for that event, which `agreement` counts as such), and a generation with an
unresolved event gets no count (value None, "unparseable ..."), never a silent "not
copied". A backend with an `exchange(pair)` method (the raw answer it got) has every
(event, window) exchange stored in the score's evidence.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast, runtime_checkable

from copyaudit.judges.base import Judge
from copyaudit.judges.lm_judge import REQUEST_FAILED, UNPARSEABLE
from copyaudit.judges.windows import (
    WINDOW_TOKENIZERS,
    Window,
    default_window_tokenizer,
    describe_window_tokenizer,
    split_windows,
)
from copyaudit.metrics_spec import Headline, Metric
from copyaudit.types import ItemVerdict, JudgeInput, Score, Span

# reference events the story supports, flagged at the judge's count (every event judge)
EVENTS = Metric("events", "events", "count", "flagged", target="event")
METRICS = (EVENTS,)
HEADLINES = (
    Headline(
        "event_rate", EVENTS, "events %", "Events", kinds=("nonliteral",), place=2, dashboard=2
    ),
)


@runtime_checkable
class EntailmentModel(Protocol):
    """Scores (claim, passage) pairs; a score >= `threshold` means "supported", NaN
    means the backend could not tell (see the module docstring)."""

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
    asked: list[int] = field(default_factory=list)  # the windows asked, in order
    unreadable: int = 0  # windows whose answer could not be had or read


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

    def set_score_threshold(self, value: float) -> None:
        """The entailment threshold an event's score must reach (the count threshold
        that flags a story stays)."""
        self.model.threshold = value

    def set_count_threshold(self, value: int) -> None:
        """How many supported events flag a story."""
        self.threshold = value

    def judge(self, items: Sequence[JudgeInput]) -> list[list[Score]]:
        events_per_item: list[list[str] | None] = []
        windows_per_item: list[list[Window]] = []
        for item in items:
            events = item.payload.get("reference_events")
            valid = isinstance(events, list) and all(isinstance(e, str) for e in events)
            events_per_item.append(list(cast("list[str]", events)) if valid else None)
            windows_per_item.append(self.windows(item.output or ""))
        states = {
            (g, e): _EventState()
            for g, events in enumerate(events_per_item)
            for e in range(len(events or []))
        }
        self._ask_in_rounds(events_per_item, windows_per_item, states)
        scores = [
            [self._score(g, events_per_item[g], windows_per_item[g], states)]
            for g in range(len(items))
        ]
        forget = getattr(self.model, "forget", None)
        if callable(forget):
            forget()
        return scores

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
                state.asked.append(round_index)
                if math.isnan(score):
                    state.unreadable += 1
                    pending.append(key)
                    continue
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
            decided = supported or not state.unreadable
            verdicts.append(ItemVerdict(e, supported if decided else None, state.best))
            if state.supporting_window is not None:
                window = windows[state.supporting_window]
                spans.append(
                    Span(window.start, window.end, item=e, note=f"window {state.supporting_window}")
                )
        count = sum(v.verdict is True for v in verdicts)
        extra: dict[str, Any] = {"windows": [[w.start, w.end] for w in windows]}
        exchanges = self._exchanges(g, events, windows, states)
        if exchanges:
            extra["exchanges"] = exchanges
        unresolved = [
            e
            for e in range(len(events))
            if states[(g, e)].supporting_window is None and states[(g, e)].unreadable
        ]
        if unresolved:
            extra.update(supported=count, unresolved_items=unresolved)
            answers = sum(states[(g, e)].unreadable for e in unresolved)
            failed = [x["request_error"] for x in exchanges if "request_error" in x]
            reason = f"{REQUEST_FAILED} ({failed[-1]})" if failed else UNPARSEABLE
            return Score(
                "events",
                None,
                threshold=self.threshold,
                spans=tuple(spans),
                items=tuple(verdicts),
                target="event",
                error=f"{reason}: {answers} judge answer(s) unreadable for "
                f"{len(unresolved)} event(s) not otherwise supported",
                extra=extra,
            )
        return Score(
            "events",
            float(count),
            flagged=count >= self.threshold,
            threshold=self.threshold,
            spans=tuple(spans),
            items=tuple(verdicts),
            target="event",
            extra=extra,
        )

    def _exchanges(
        self,
        g: int,
        events: list[str],
        windows: list[Window],
        states: dict[tuple[int, int], _EventState],
    ) -> list[dict[str, Any]]:
        """Each (event, window) question the backend answered, with its raw answer
        (only for a backend that keeps them)."""
        exchange = getattr(self.model, "exchange", None)
        if not callable(exchange):
            return []
        found = []
        for e, event in enumerate(events):
            for w in states[(g, e)].asked:
                answer = exchange((event, windows[w].text))
                if answer is not None:
                    found.append({"item": e, "window": w, **answer})
        return found


class EntailingEventJudge(EventJudge):
    """The events judge over the offline entailing scorer (`entailment_aligned`): the
    same verdicts and "events" metric, its own name so that runs judged by the embedding
    + lexical judge ("events", version 2) stay comparable. Its scorer aligns each event
    to the output's sentences itself, so the whole output is one passage (a 128-token
    window cuts sentences in two and doubles the chances of a false match)."""

    name = "events_entail"
    version = "2"  # 2: predicate-support features (1: 14 features, over-flagged new plots)

    def config(self) -> dict[str, Any]:
        config = super().config()
        config["window_tokens"] = "whole output"
        return config

    def windows(self, output: str) -> list[Window]:
        text = output.replace("\n", " ")
        start = len(text) - len(text.lstrip())
        end = len(text.rstrip())
        return [Window(start, end, text[start:end])] if end > start else []

"""Longest common substring and every long shared span, in linear time.

A suffix automaton of the target is built once (O(len(target))); the output is
then walked through it (O(len(output))), which gives, for every position i of
the output, the length of the longest substring ending at i that also occurs in
the target. The longest of those is the longest common substring; the right-
maximal ones of at least `min_chars` characters are the shared spans a reviewer
wants highlighted. Comparison is on raw characters (case- and
whitespace-sensitive), as in the notice study's reference code.

`difflib.SequenceMatcher(None, a, b, autojunk=False).find_longest_match()` finds
the same length, but its cost grows with len(output) x (occurrences of each
character in the target): tests/bench/bench_notice_lcs.py measured 186 ms vs 11 ms
on a 2,900 x 4,000-character repeat and 712 ms vs 16 ms on a 6,000-character
looping output (2-core CPU, idle).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SharedSpan:
    """output[start:end] == target[target_start:target_start + (end - start)]."""

    start: int
    end: int
    target_start: int

    @property
    def length(self) -> int:
        return self.end - self.start


class SuffixAutomaton:
    """The suffix automaton of one text; `first_end[s]` is the end index (inclusive) of
    the first occurrence in the text of the strings of state s."""

    def __init__(self, text: str) -> None:
        self.next: list[dict[str, int]] = [{}]
        self.link: list[int] = [-1]
        self.length: list[int] = [0]
        self.first_end: list[int] = [-1]
        last = 0
        for index, char in enumerate(text):
            last = self._extend(last, char, index)

    def _new_state(self, length: int, link: int, first_end: int, edges: dict[str, int]) -> int:
        self.next.append(edges)
        self.link.append(link)
        self.length.append(length)
        self.first_end.append(first_end)
        return len(self.next) - 1

    def _extend(self, last: int, char: str, index: int) -> int:
        current = self._new_state(self.length[last] + 1, 0, index, {})
        state = last
        while state != -1 and char not in self.next[state]:
            self.next[state][char] = current
            state = self.link[state]
        if state == -1:
            return current
        target = self.next[state][char]
        if self.length[state] + 1 == self.length[target]:
            self.link[current] = target
            return current
        clone = self._new_state(
            self.length[state] + 1,
            self.link[target],
            self.first_end[target],
            dict(self.next[target]),
        )
        while state != -1 and self.next[state].get(char) == target:
            self.next[state][char] = clone
            state = self.link[state]
        self.link[target] = clone
        self.link[current] = clone
        return current

    def match_ends(self, text: str) -> list[tuple[int, int]]:
        """For each i: (length of the longest substring of `text` ending at i that
        occurs in the automaton's text, end index of one such occurrence there)."""
        state, matched = 0, 0
        result: list[tuple[int, int]] = []
        for char in text:
            while state and char not in self.next[state]:
                state = self.link[state]
                matched = self.length[state]
            if char in self.next[state]:
                state = self.next[state][char]
                matched += 1
            else:
                state, matched = 0, 0
            result.append((matched, self.first_end[state] if matched else -1))
        return result


def shared_spans(
    output: str, target: str, min_chars: int
) -> tuple[SharedSpan | None, list[SharedSpan]]:
    """(the longest common substring, every right-maximal shared span of at least
    `min_chars` characters in output order). The first is None when nothing is
    shared; on ties it is the leftmost in the output. Spans can overlap."""
    if not output or not target:
        return None, []
    ends = SuffixAutomaton(target).match_ends(output)
    best: SharedSpan | None = None
    spans: list[SharedSpan] = []
    for i, (length, target_end) in enumerate(ends):
        if length == 0:
            continue
        span = SharedSpan(i - length + 1, i + 1, target_end - length + 1)
        if best is None or length > best.length:
            best = span
        right_maximal = i + 1 == len(ends) or ends[i + 1][0] != length + 1
        if right_maximal and length >= min_chars:
            spans.append(span)
    return best, spans


def merge_ranges(spans: list[SharedSpan]) -> list[tuple[int, int]]:
    """The union of the spans' output ranges, as sorted disjoint [start, end) pairs."""
    merged: list[tuple[int, int]] = []
    for span in sorted(spans, key=lambda s: (s.start, s.end)):
        if merged and span.start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], span.end))
        else:
            merged.append((span.start, span.end))
    return merged

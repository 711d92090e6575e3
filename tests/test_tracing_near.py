"""Near-verbatim matches equal a transcription of Mueller et al.'s matching rule
(felixbmuller/llms-memorization-copyright, src/text.py: SequenceMap.add / prune /
get_sequences, Sequence.fuzzy_okay, the character count of Sequence.diff with padding 0),
on word lists of our own outputs against the public-domain passages: copies with a word
replaced, dropped or added, exact copies, and filler."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path

import pytest

from copyaudit.tracing.near import near_matches
from copyaudit.tracing.tokens import word_spans

SAMPLES = Path(__file__).parent.parent / "samples" / "literal.jsonl"


# --- the transcription (their semantics, condensed) ---------------------------------


class _Seq:
    def __init__(self, base, short_idx, long_idx):
        self.elements = (
            [(short_idx, long_idx)] if base is None else [*base.elements, (short_idx, long_idx)]
        )

    def fuzzy_okay(self):
        if len(self.elements) < 2:
            return False
        (ps, pl), (qs, ql) = self.elements[-2], self.elements[-1]
        return qs == ps + 1 and ql == pl + 1


def _reference(short, long, min_length):
    index = defaultdict(list)
    for idx, word in enumerate(short):
        index[word].append(idx)
    matching = [[] for _ in short]
    for long_idx, word in enumerate(long):
        for short_idx in index[word]:
            matching[short_idx].append(long_idx)
    elements = []
    for match_idxs in matching:
        prev = elements[-1] if elements else {}
        pprev = elements[-2] if len(elements) > 1 else {}
        current = {}
        short_idx = len(elements)
        for m in match_idxs:
            if m - 1 in prev:
                current[m] = _Seq(prev[m - 1], short_idx, m)
                del prev[m - 1]
            elif m - 2 in pprev and pprev[m - 2].fuzzy_okay():
                current[m] = _Seq(pprev[m - 2], short_idx, m)
            elif m - 2 in prev and prev[m - 2].fuzzy_okay():
                current[m] = _Seq(prev[m - 2], short_idx, m)
            elif m - 1 in pprev and pprev[m - 1].fuzzy_okay():
                current[m] = _Seq(pprev[m - 1], short_idx, m)
            else:
                current[m] = _Seq(None, short_idx, m)
        elements.append(current)
    for current in elements:
        for m in list(current):
            if len(current[m].elements) < min_length:
                del current[m]
        for seq in current.values():
            ps, pl = seq.elements[-2]
            elements[ps].pop(pl, None)
    seqs = [s for current in elements for s in current.values()]

    def inside(s, o):
        return len(s.elements) < len(o.elements) and set(s.elements) <= set(o.elements)

    seqs = [s for s in seqs if not any(inside(s, o) for o in seqs)]
    out = []
    for s in seqs:
        letters = sum(1 for i, _ in s.elements for c in short[i].upper() if c.isupper())
        out.append((tuple(s.elements), letters + len(s.elements) - 1))
    return sorted(out)


# --- the data --------------------------------------------------------------------------


def _works() -> list[list[str]]:
    by_title: dict[str, str] = {}
    for line in SAMPLES.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        by_title[case["title"]] = (
            by_title.get(case["title"], "") + " " + case["input"] + " " + case["reference"]
        )
    return [[w for w, _, _ in word_spans(text)] for text in by_title.values()]


def _output(rng: random.Random, works: list[list[str]]) -> list[str]:
    filler = ["perhaps", "indeed", "we", "recall", "that", "it", "said", "then"]
    out = rng.sample(filler, 3)
    for _ in range(rng.randint(1, 3)):
        work = rng.choice(works)
        start = rng.randrange(0, len(work) - 40)
        copy = list(work[start : start + rng.randint(6, 40)])
        for _ in range(rng.randint(0, 3)):
            at = rng.randrange(2, max(3, len(copy) - 2))
            slip = rng.choice(["replace", "drop", "add"])
            if slip == "replace":
                copy[at] = "zebra"
            elif slip == "drop":
                del copy[at]
            else:
                copy.insert(at, "zebra")
        out += copy + rng.sample(filler, 2)
    return out


@pytest.mark.parametrize("min_words", [5, 8])
def test_near_matches_equal_the_transcribed_rule(min_words: int) -> None:
    rng = random.Random(38)
    works = _works()
    checked = slips = 0
    for _ in range(200):
        output = _output(rng, works)
        for work in works:
            ours = sorted((m.pairs, m.chars) for m in near_matches(output, work, min_words))
            assert ours == _reference(output, work, min_words)
            checked += len(ours)
            slips += sum(not m.exact for m in near_matches(output, work, min_words))
    assert checked > 200 and slips > 50  # the data exercises both kinds of match


def test_the_trace_step_finds_a_copy_with_a_slip_that_exact_tracing_splits() -> None:
    from copyaudit.tracing.index import IndexedWork, LibraryIndex
    from copyaudit.tracing.trace import trace, trace_near

    text = SAMPLES.read_text(encoding="utf-8").splitlines()
    work = json.loads(text[0])["input"]
    index = LibraryIndex.build([IndexedWork("alice", work), IndexedWork("other", "x y z")])
    words = work.split()
    copied = words[10:60]
    copied[25] = "zebra"  # one word replaced
    output = "As it goes: " + " ".join(copied) + " and that is all."
    exact = trace(index, output, min_tokens=20)
    near = trace_near(index, output, min_words=20)
    assert len(exact) == 1 or all(s.words < 45 for s in exact)  # the slip splits it
    (match,) = near
    assert match.work == "alice" and match.slips == 1 and match.words >= 45
    assert output[match.start : match.end].startswith(copied[0])

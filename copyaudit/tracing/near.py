"""Near-verbatim matches: Mueller et al.'s rule (felixbmuller/llms-memorization-copyright,
src/text.py, read there and written anew here) for copies with one-word slips.

Both texts are word lists. A match grows word by word along the output; each output word
may continue a match that ended at the output's previous word:
- exactly (the work's next word): always, and a match so continued is not continued any
  other way;
- with one slip, only when the match's last two words were exact neighbours in both
  texts: one word replaced (both texts skip a word), one word missing from the output
  (the work skips a word), or one word added by the output (the output skips a word).
A word that continues nothing starts a match. Matches shorter than `min_words` are
dropped, as is every match another one extends or contains. A match's characters are
its matched words' letters (not digits) plus one space between each two.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

Pair = tuple[int, int]  # (output word, work word)


@dataclass(frozen=True)
class NearMatch:
    pairs: tuple[Pair, ...]
    chars: int

    @property
    def words(self) -> int:
        return len(self.pairs)

    @property
    def exact(self) -> bool:
        return all(b == (a[0] + 1, a[1] + 1) for a, b in itertools.pairwise(self.pairs))


def _slip_allowed(pairs: tuple[Pair, ...]) -> bool:
    if len(pairs) < 2:
        return False
    (a_out, a_work), (b_out, b_work) = pairs[-2], pairs[-1]
    return b_out == a_out + 1 and b_work == a_work + 1


def near_matches(output: Sequence[str], work: Sequence[str], min_words: int = 8) -> list[NearMatch]:
    """Every near-verbatim match of at least `min_words` words (see the module)."""
    where: dict[str, list[int]] = defaultdict(list)
    wanted = set(output)
    for position, word in enumerate(work):
        if word in wanted:
            where[word].append(position)
    steps: list[dict[int, tuple[Pair, ...]]] = []  # per output word: work position -> match
    for i, word in enumerate(output):
        last = steps[-1] if steps else {}
        before = steps[-2] if len(steps) > 1 else {}
        here: dict[int, tuple[Pair, ...]] = {}
        for j in where.get(word, ()):
            if j - 1 in last:  # exact
                here[j] = (*last.pop(j - 1), (i, j))
            elif j - 2 in before and _slip_allowed(before[j - 2]):  # a word replaced
                here[j] = (*before[j - 2], (i, j))
            elif j - 2 in last and _slip_allowed(last[j - 2]):  # the output dropped a word
                here[j] = (*last[j - 2], (i, j))
            elif j - 1 in before and _slip_allowed(before[j - 1]):  # the output added a word
                here[j] = (*before[j - 1], (i, j))
            else:
                here[j] = ((i, j),)
        steps.append(here)
    for here in steps:  # drop the short ones, and every match a longer one extends
        for j in [j for j, pairs in here.items() if len(pairs) < min_words]:
            del here[j]
        for pairs in here.values():
            out_before, work_before = pairs[-2]
            steps[out_before].pop(work_before, None)
    found = [pairs for here in steps for pairs in here.values()]
    kept = [p for p in found if not any(len(p) < len(q) and set(p) <= set(q) for q in found)]
    return [NearMatch(p, _chars(p, output)) for p in kept]


def _chars(pairs: tuple[Pair, ...], output: Sequence[str]) -> int:
    """The matched words' letters (the reference counts cased letters: digits add
    nothing) and the spaces between them."""
    return sum(ch.isalpha() for i, _ in pairs for ch in output[i]) + len(pairs) - 1

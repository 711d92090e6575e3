"""Text features that tell entailment from relatedness, for one (event, sentence) pair.

The aligned event scorer (`entailment_aligned`) finds the story sentences (or adjacent
sentence pairs) closest to an event and asks these questions of the best one:

- polarity: do the event and the sentence differ in the parity of their negation cues
  ("not", "never", "no", "refused", "failed", ...), over the whole text and over the cues
  whose scope (the next few words, up to a clause break) holds a word the two share;
- roles: around the first shared action word, is the nearest participant before it (the
  agent; a subject pronoun stands for the nearest preceding name) the same in both, and
  the nearest after it (the patient)? Does the event's agent come after the action in
  the sentence (swapped roles)?
- outcome: does the sentence hold the antonym of one of the event's words, and how many
  of the event's content words (and of its least supported clause) does it lack?

Every function here is plain Python on words; the cosines come from the embedder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from copyaudit.judges.entailment_lexical import STOPWORDS
from copyaudit.judges.tokens import porter_stemmer

_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)?|[.,;:!?]")
CLAUSE_BREAKS = frozenset(".,;:!?")
NEGATORS = frozenset(
    [
        "not",
        "no",
        "never",
        "nobody",
        "nothing",
        "none",
        "neither",
        "nor",
        "without",
        "cannot",
        "n't",
        "nowhere",
    ]
)
# Verbs whose meaning is "did not": they flip the polarity of what follows.
NEGATIVE_VERBS = frozenset(["refus", "fail", "declin", "deni", "forgot", "lost", "miss", "unabl"])
SUBJECT_PRONOUNS = frozenset(["he", "she", "they", "i", "we"])
OBJECT_PRONOUNS = frozenset(["him", "her", "them", "me", "us", "it", "his", "their", "its"])
SCOPE_WORDS = 6  # how far a negation cue reaches (stops at a clause break)
CLAUSE_SPLIT = re.compile(r"[,;:]|\b(?:but|and then|so|until|because|while|when|after)\b")

# Opposite outcomes, as word stems (Porter); each pair is read both ways.
_ANTONYM_TEXT = """
accept:refus win:lose won:lost succeed:fail work:fail live:die surviv:die surviv:drown
open:close open:shut arriv:left arriv:depart find:lose found:lost hide:find
save:drown rescu:drown keep:sell kept:sold buy:sell bought:sold stay:left stay:flee
loyal:desert prais:complain agre:refus agre:object slap:hug slap:embrac struck:embrac
punish:forgav love:hate sank:float dri:flood fill:empti broke:fix broke:mend
guilti:innoc arrest:escap arrest:free caught:escap ignor:heed ignor:answer
stole:return steal:return give:take gave:took allow:forbid allow:ban
right:wrong true:fals first:last married:divorc won:defeat win:defeat
"""
ANTONYMS: frozenset[tuple[str, str]] = frozenset(
    pair
    for a, b in (item.split(":") for item in _ANTONYM_TEXT.split())
    for pair in ((a, b), (b, a))
)


@dataclass(frozen=True)
class Words:
    """One text as tokens: lower-cased words, their stems, and which are names."""

    tokens: tuple[str, ...]
    stems: tuple[str, ...]
    names: tuple[bool, ...]  # capitalised and not a stopword
    possessive: tuple[bool, ...]  # written with 's (a possessor, not a participant)

    @property
    def content(self) -> frozenset[str]:
        return frozenset(s for t, s in zip(self.tokens, self.stems, strict=True) if _is_content(t))


def _is_content(token: str) -> bool:
    return token not in STOPWORDS and token not in CLAUSE_BREAKS and token not in NEGATORS


@lru_cache(maxsize=65536)
def words(text: str) -> Words:
    stemmer = porter_stemmer()
    raw = _TOKEN.findall(text.replace("’", "'"))
    tokens: list[str] = []
    names: list[bool] = []
    possessive: list[bool] = []
    for token in raw:
        lower = token.lower()
        if lower.endswith("n't"):
            tokens += [lower[:-3], "n't"]
            names += [False, False]
            possessive += [False, False]
            continue
        owner = lower.endswith("'s")
        if owner:
            lower = lower[:-2]
        tokens.append(lower)
        names.append(token[:1].isupper() and lower not in STOPWORDS)
        possessive.append(owner)
    stems = tuple(stemmer.stem(t) if t.isalpha() else t for t in tokens)
    return Words(tuple(tokens), stems, tuple(names), tuple(possessive))


def _is_negation(token: str, stem: str) -> bool:
    return token in NEGATORS or any(stem.startswith(v) for v in NEGATIVE_VERBS)


def negation_counts(text: Words, shared: frozenset[str]) -> tuple[int, int]:
    """(all negation cues, cues whose scope holds a word in `shared`)."""
    total = scoped = 0
    for i, (token, stem) in enumerate(zip(text.tokens, text.stems, strict=True)):
        if not _is_negation(token, stem):
            continue
        total += 1
        for later in range(i + 1, min(i + 1 + SCOPE_WORDS, len(text.tokens))):
            if text.tokens[later] in CLAUSE_BREAKS or text.tokens[later] in ("and", "but"):
                break
            if text.stems[later] in shared:
                scoped += 1
                break
    return total, scoped


def _clause_bounds(text: Words, index: int) -> tuple[int, int]:
    """[start, end) of the clause holding token `index` (between clause breaks or "but")."""
    start = index
    while start > 0 and text.tokens[start - 1] not in CLAUSE_BREAKS | {"but"}:
        start -= 1
    end = index
    while end < len(text.tokens) and text.tokens[end] not in CLAUSE_BREAKS | {"but"}:
        end += 1
    return start, end


def _resolve(text: Words, i: int) -> str | None:
    """The participant token `i` names: its stem, or for a subject pronoun the nearest
    name before it; None for an object pronoun or an unresolved pronoun."""
    token = text.tokens[i]
    if token in SUBJECT_PRONOUNS:
        return next((text.stems[j] for j in range(i - 1, -1, -1) if text.names[j]), None)
    if token in OBJECT_PRONOUNS:
        return None
    return text.stems[i]


def _is_participant(text: Words, i: int) -> bool:
    token = text.tokens[i]
    if text.possessive[i]:
        return False
    return token in SUBJECT_PRONOUNS or token in OBJECT_PRONOUNS or _is_content(token)


def agent_of(text: Words, index: int) -> tuple[str | None, bool]:
    """Who does the action at `index`, and whether it is a name: the nearest name (or
    subject pronoun, resolved to the nearest name before it) before it in its clause,
    else the nearest content word before it (the head of "the naval base"); a possessor
    is skipped ("Pieter's father" -> father)."""
    start, _ = _clause_bounds(text, index)
    before = [i for i in range(start, index) if _is_participant(text, i)]
    for i in reversed(before):
        if text.names[i] or text.tokens[i] in SUBJECT_PRONOUNS:
            return _resolve(text, i), True
    return (_resolve(text, before[-1]), False) if before else (None, False)


def patient_of(text: Words, index: int) -> str | None:
    """The first name after `index` in its clause, else its first content word (None: a
    pronoun comes first, or nothing does)."""
    _, end = _clause_bounds(text, index)
    after = [i for i in range(index + 1, end) if _is_participant(text, i)]
    for i in after:
        if text.names[i]:
            return _resolve(text, i)
    return _resolve(text, after[0]) if after else None


def _first_index(text: Words, stem: str) -> int | None:
    for i, s in enumerate(text.stems):
        if s == stem:
            return i
    return None


def _agree(a: str | None, b: str | None) -> float:
    return 0.0 if a is None or b is None else (1.0 if a == b else -1.0)


def _names_in(text: Words, start: int, end: int) -> list[tuple[int, str]]:
    """(position, name stem) of the names in [start, end), subject pronouns resolved."""
    found = []
    for i in range(start, end):
        if text.names[i]:
            found.append((i, text.stems[i]))
        elif text.tokens[i] in SUBJECT_PRONOUNS:
            resolved = _resolve(text, i)
            if resolved is not None:
                found.append((i, resolved))
    return found


def _pivot(event: Words, shared: frozenset[str]) -> int | None:
    """The event's action word: its first shared non-name content word with a
    participant before it in the same clause."""
    for i, (token, stem, name) in enumerate(
        zip(event.tokens, event.stems, event.names, strict=True)
    ):
        if name or stem not in shared or not _is_content(token):
            continue
        start, _ = _clause_bounds(event, i)
        if any(_is_participant(event, k) for k in range(start, i)):
            return i
    return None


def role_features(event: Words, sentence: Words) -> tuple[float, float, float]:
    """(agent agreement, patient agreement, name sides) around the event's action word
    (`_pivot`) and its first occurrence in the sentence. Agreement: 1 = the same
    participant in both, -1 = a different one, 0 = unknown. Name sides: over the names in
    both clauses, (same side of the action - other side) / names, 0 when none."""
    i = _pivot(event, event.content & sentence.content)
    if i is None:
        return 0.0, 0.0, 0.0
    j = _first_index(sentence, event.stems[i])
    if j is None:
        return 0.0, 0.0, 0.0
    event_start, event_end = _clause_bounds(event, i)
    sentence_start, sentence_end = _clause_bounds(sentence, j)
    sides = {n: p < i for p, n in _names_in(event, event_start, event_end)}
    sentence_sides = {n: p < j for p, n in _names_in(sentence, sentence_start, sentence_end)}
    common = [n for n in sides if n in sentence_sides]
    same = sum(1 for n in common if sides[n] == sentence_sides[n])
    agent, _ = agent_of(event, i)
    found, _ = agent_of(sentence, j)
    return (
        _agree(agent, found),
        _agree(patient_of(event, i), patient_of(sentence, j)),
        (2 * same - len(common)) / len(common) if common else 0.0,
    )


def antonym_clash(event: Words, sentence: Words) -> float:
    """1 when the sentence holds the opposite of an event word the sentence itself lacks."""
    event_stems = set(event.stems)
    sentence_stems = set(sentence.stems)
    for a in event_stems - sentence_stems:
        for b in sentence_stems - event_stems:
            if (a, b) in ANTONYMS:
                return 1.0
    return 0.0


def clause_recalls(event_clauses: list[str], sentence: Words) -> list[float]:
    """Recall of each event clause in the sentence."""
    return [recall(words(c), sentence) for c in event_clauses]


def clauses(text: str) -> list[str]:
    """The event's clauses (split at commas, "but", "so", ...); the whole when one."""
    parts = [p.strip() for p in CLAUSE_SPLIT.split(text) if p and words(p).content]
    return parts or [text]


def predicate_words(event: Words) -> list[tuple[str, str]]:
    """(token, stem) of the event's content words that are not names: what it says
    happens, as against who is in it (a story that reuses the names shares those)."""
    return [
        (token, stem)
        for token, stem, name in zip(event.tokens, event.stems, event.names, strict=True)
        if _is_content(token) and not name and token.isalpha()
    ]


def content_words(text: Words) -> list[tuple[str, str]]:
    """(token, stem) of every alphabetic content word, names included."""
    return [
        (t, s)
        for t, s in zip(text.tokens, text.stems, strict=True)
        if _is_content(t) and t.isalpha()
    ]


def name_recall(event: Words, sentence: Words) -> float:
    """Share of the event's names (as stems) that the sentence names too; 1 when it names none."""
    names = {s for s, n in zip(event.stems, event.names, strict=True) if n}
    found = {s for s, n in zip(sentence.stems, sentence.names, strict=True) if n}
    return len(names & found) / len(names) if names else 1.0


def recall(event: Words, sentence: Words) -> float:
    """Share of the event's content stems found in the sentence."""
    content = event.content
    return len(content & sentence.content) / len(content) if content else 0.0

"""LiteralJudge: numbers identical to rouge_score, evidence spans on the LCS tokens."""

from __future__ import annotations

import itertools
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from rouge_score import rouge_scorer, tokenizers

from copyaudit.judges.literal import (
    LiteralJudge,
    lcs_alignment,
    lcs_blocks,
    merge_token_spans,
    run_bounds,
)
from copyaudit.judges.tokens import (
    TOKENIZERS,
    Token,
    UnicodeRougeTokenizer,
    rouge_tokens,
    tokenize_with_offsets,
    unicode_tokens,
    words_and_offsets,
)
from copyaudit.types import JudgeInput

_WORD_TEXT = (
    "the a of and to in was were running runs ran quickly house houses Harry Hermione "
    "Úrsula naïve café Zoë Mercédès Straße 1997 42 3rd co-operate don't isn't O'Brien "
    "wizard wizards castle castles école Ærø K İstanbul ﬁnal generously generous "
    "connection connected connecting fox foxes jumped lazy dog"
)
WORDS = _WORD_TEXT.split()
PUNCT = [",", ".", "!", "?", ";", " -", "—", "...", '"', "'", "(", ")", "\n", "\t", " "]


def _random_text(rng: random.Random, length: int) -> str:
    parts: list[str] = []
    for _ in range(length):
        word = rng.choice(WORDS)
        if rng.random() < 0.15:
            word = word.upper()
        elif rng.random() < 0.2:
            word = word.capitalize()
        parts.append(word)
        parts.append(rng.choice(PUNCT) + " " if rng.random() < 0.25 else " ")
    return "".join(parts)


def _edit(rng: random.Random, text: str) -> str:
    """A partial copy: drop, replace and insert words of `text`."""
    words = text.split(" ")
    out: list[str] = []
    for word in words:
        roll = rng.random()
        if roll < 0.1:
            continue
        if roll < 0.2:
            out.append(rng.choice(WORDS))
        else:
            out.append(word)
        if rng.random() < 0.1:
            out.append(rng.choice(WORDS))
    return " ".join(out)


def _pairs(count: int, seed: int = 7) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    pairs: list[tuple[str, str]] = [("", ""), ("", "some text"), ("a text", ""), ("!!", "??")]
    while len(pairs) < count:
        reference = _random_text(rng, rng.randint(1, 120))
        style = rng.random()
        if style < 0.45:
            output = _edit(rng, reference)
        elif style < 0.6:
            output = reference
        elif style < 0.75:
            # copy with a shifted start, so the 50-token cut matters
            output = _random_text(rng, rng.randint(0, 15)) + reference
        else:
            output = _random_text(rng, rng.randint(0, 120))
        pairs.append((reference, output))
    return pairs


def _repetitive_pairs(count: int, seed: int = 11) -> list[tuple[str, str]]:
    """Few distinct words, many repeats: many LCS alignments tie, so tie-breaking shows."""
    rng = random.Random(seed)
    few = ["the", "THE", "cat", "cats", "sat", "Ære", "İ", "k", "on", "mat", "—", "..."]
    return [
        (
            " ".join(rng.choices(few, k=rng.randint(0, 70))),
            " ".join(rng.choices(few, k=rng.randint(0, 70))),
        )
        for _ in range(count)
    ]


PAIRS = _pairs(260) + _repetitive_pairs(140)
SCORER = rouge_scorer.RougeScorer(["rouge1", "rougeL"], use_stemmer=True)


def _judge(judge: LiteralJudge, reference: str, output: str) -> dict:
    item = JudgeInput(kind="literal", payload={"reference": reference}, prompt="p", output=output)
    return {score.metric: score for score in judge.judge([item])[0]}


def test_rouge_tokens_match_rouge_score_tokenizer() -> None:
    reference_tokenizer = tokenizers.DefaultTokenizer(use_stemmer=True)
    for reference, output in PAIRS:
        for text in (reference, output):
            assert [t.text for t in rouge_tokens(text)] == reference_tokenizer.tokenize(text)


def test_rouge_tokens_offsets_point_at_the_original_characters() -> None:
    text = "Úrsula met the İstanbul KELVIN-man, running."
    tokens = rouge_tokens(text)
    assert [t.text for t in tokens] == [
        "rsula",
        "met",
        "the",
        "i",
        "stanbul",
        "kelvin",
        "man",
        "run",
    ]
    assert [text[t.start : t.end] for t in tokens] == [
        "rsula",
        "met",
        "the",
        "İ",
        "stanbul",
        "KELVIN",
        "man",
        "running",
    ]


def test_values_identical_to_rouge_score() -> None:
    judge = LiteralJudge()
    public_api_checked = 0
    for reference, output in PAIRS:
        scores = _judge(judge, reference, output)
        ref_tokens = SCORER._tokenizer.tokenize(reference)[:50]
        out_tokens = SCORER._tokenizer.tokenize(output)[:50]
        expected_l = rouge_scorer._score_lcs(ref_tokens, out_tokens).fmeasure
        expected_lcs = rouge_scorer._lcs_table(ref_tokens, out_tokens)[-1][-1]
        expected_1 = SCORER.score(output, reference)["rouge1"].fmeasure
        assert scores["rougeL"].value == expected_l
        assert scores["rouge1"].value == expected_1
        assert scores["lcs_tokens"].value == expected_lcs
        assert scores["rougeL"].flagged == (expected_l >= 0.8)
        # Short texts are not cut: the public API gives the same ROUGE-L.
        if len(SCORER._tokenizer.tokenize(reference)) <= 50 and (
            len(SCORER._tokenizer.tokenize(output)) <= 50
        ):
            assert scores["rougeL"].value == SCORER.score(reference, output)["rougeL"].fmeasure
            public_api_checked += 1
    assert public_api_checked >= 30
    flagged = sum(_judge(judge, r, o)["rougeL"].flagged for r, o in PAIRS)
    assert 0 < flagged < len(PAIRS)  # the sample exercises both verdicts


def test_evidence_spans_consist_of_the_lcs_tokens() -> None:
    judge = LiteralJudge()
    for reference, output in PAIRS:
        scores = _judge(judge, reference, output)
        spans = scores["rougeL"].spans
        assert spans == scores["lcs_tokens"].spans
        span_tokens = [t.text for s in spans for t in rouge_tokens(output[s.start : s.end])]
        assert len(span_tokens) == scores["lcs_tokens"].value
        # the reference side highlights the same token sequence
        reference_side = [
            t.text
            for start, end in scores["rougeL"].extra["reference_spans"]
            for t in rouge_tokens(reference[start:end])
        ]
        assert reference_side == span_tokens
        # The highlighted tokens are a common subsequence of both cut token lists.
        ref_cut = [t.text for t in rouge_tokens(reference)][:50]
        out_cut = [t.text for t in rouge_tokens(output)][:50]
        for sequence in (ref_cut, out_cut):
            position = 0
            for token in span_tokens:
                position = sequence.index(token, position) + 1
        assert all(s.note == "lcs" for s in spans)
        assert all(a.end < b.start for a, b in itertools.pairwise(spans))


def test_verbatim_copy_is_one_span_and_flagged() -> None:
    reference = "It was a bright cold day in April, and the clocks were striking thirteen."
    output = "Sure. It was a bright cold day in April, and the clocks were striking thirteen!"
    scores = _judge(LiteralJudge(), reference, output)
    assert scores["rougeL"].value == pytest.approx(14 / 15 * 2 / (1 + 14 / 15))
    assert scores["rougeL"].flagged is True
    assert scores["rougeL"].target == "literal"
    [span] = scores["rougeL"].spans
    assert output[span.start : span.end] == (
        "It was a bright cold day in April, and the clocks were striking thirteen"
    )


def test_only_the_first_50_tokens_count() -> None:
    reference = " ".join(f"w{i}" for i in range(60))
    output = " ".join(f"w{i}" for i in range(50, 60)) + " " + reference
    scores = _judge(LiteralJudge(), reference, output)
    # output's first 50 tokens: w50..w59 then w0..w39 -> LCS with w0..w49 is 40
    assert scores["lcs_tokens"].value == 40
    spans = scores["rougeL"].spans
    assert len(spans) == 1
    assert output[spans[0].start : spans[0].end] == " ".join(f"w{i}" for i in range(40))


def test_unicode_tokenizer_keeps_non_ascii_letters_and_is_recorded() -> None:
    reference = "Úrsula Iguarán ordered the café closed"
    output = "Ursula Iguaran ordered the café closed"
    rouge = _judge(LiteralJudge("rouge"), reference, output)
    uni = _judge(LiteralJudge("unicode"), reference, output)
    # rouge_score: "rsula iguar n order the caf close" vs "ursula iguaran order the caf close"
    assert rouge["rougeL"].value == pytest.approx(2 * (4 / 6) * (4 / 7) / (4 / 6 + 4 / 7))
    # unicode: six tokens each, four shared
    assert uni["rougeL"].value == pytest.approx(4 / 6)
    # The ROUGE tokenizer even equates "Zoë" with "Zo"; the Unicode one does not.
    assert _judge(LiteralJudge("rouge"), "Zoë smiled", "Zo smiled")["rougeL"].value == 1.0
    assert _judge(LiteralJudge("unicode"), "Zoë smiled", "Zo smiled")["rougeL"].value == 0.5
    assert [t.text for t in unicode_tokens(reference)] == [
        "úrsula",
        "iguarán",
        "order",
        "the",
        "café",
        "close",
    ]
    assert LiteralJudge("unicode").config()["tokenizer"] == "unicode"
    assert LiteralJudge().config()["tokenizer"] == "rouge"
    assert LiteralJudge("unicode").config_hash() != LiteralJudge().config_hash()
    uni_spans = uni["rougeL"].spans
    assert [output[s.start : s.end] for s in uni_spans] == ["ordered the café closed"]


def test_unknown_tokenizer_is_rejected() -> None:
    with pytest.raises(ValueError, match="tokenizer"):
        LiteralJudge("whitespace")


def test_missing_reference_gives_error_not_zero() -> None:
    item = JudgeInput(kind="literal", payload={}, prompt="p", output="text")
    scores = LiteralJudge().judge([item])[0]
    assert all(s.value is None and s.error for s in scores)


def test_lcs_alignment_and_span_merging() -> None:
    ref = ["a", "b", "c", "d"]
    out = ["x", "a", "b", "y", "d"]
    pairs = lcs_alignment(ref, out)
    assert len(pairs) == 3
    assert [out[j] for _, j in pairs] == ["a", "b", "d"]
    tokens = [Token(w, i * 2, i * 2 + 1) for i, w in enumerate(out)]
    spans = merge_token_spans(tokens, [j for _, j in pairs], note="lcs")
    assert [(s.start, s.end) for s in spans] == [(2, 5), (8, 9)]


def test_lcs_alignment_is_a_longest_common_subsequence() -> None:
    """rapidfuzz's LCS: as long as rouge_score's table says, and a common subsequence."""
    for reference, output in PAIRS:
        ref = [t.text for t in rouge_tokens(reference)][:50]
        out = [t.text for t in rouge_tokens(output)][:50]
        pairs = lcs_alignment(ref, out)
        assert len(pairs) == rouge_scorer._lcs_table(ref, out)[-1][-1]
        assert all(ref[i] == out[j] for i, j in pairs)
        assert all(a < c and b < d for (a, b), (c, d) in itertools.pairwise(pairs))
        blocks = lcs_blocks(ref, out)
        assert sum(length for _, _, length in blocks) == len(pairs)


def test_run_bounds_join_adjacent_runs() -> None:
    tokens = [Token(str(i), i * 3, i * 3 + 2) for i in range(8)]
    bounds = run_bounds([(t.start, t.end) for t in tokens], [(0, 2), (2, 1), (5, 2)])
    assert bounds == [(0, 8), (15, 20)]
    spans = merge_token_spans(tokens, [6, 0, 1, 2, 5], note="lcs")
    assert [(s.start, s.end, s.note) for s in spans] == [(0, 8, "lcs"), (15, 20, "lcs")]
    assert run_bounds([], []) == []


def test_words_and_offsets_equal_the_full_tokenization() -> None:
    """The one-pass path gives what tokenize_with_offsets gives, cut texts included."""
    long_text = " ".join(f"Word{i}, running" for i in range(40))
    odd = ["İstanbul KELVIN running", "", "...", "a b c", long_text]
    for text in [*odd, *(text for pair in PAIRS for text in pair)]:
        for tokenizer in TOKENIZERS:
            full = tokenize_with_offsets(text, tokenizer)
            offsets = [(t.start, t.end) for t in full[:50]]
            assert words_and_offsets(text, tokenizer, 50) == ([t.text for t in full], offsets)


def test_unicode_values_identical_to_rouge_score_with_that_tokenizer() -> None:
    judge = LiteralJudge("unicode")
    tokenizer = UnicodeRougeTokenizer()
    scorer = rouge_scorer.RougeScorer(["rouge1"], tokenizer=tokenizer)
    for reference, output in PAIRS:
        scores = _judge(judge, reference, output)
        ref_cut = tokenizer.tokenize(reference)[:50]
        out_cut = tokenizer.tokenize(output)[:50]
        assert scores["rougeL"].value == rouge_scorer._score_lcs(ref_cut, out_cut).fmeasure
        assert scores["rouge1"].value == scorer.score(output, reference)["rouge1"].fmeasure


def test_porter_stemmer_loads_without_the_nltk_package() -> None:
    """The stemmer comes without nltk/__init__ (scipy, scikit-learn), and leaves no trace:
    a later `import nltk` gets the real package, whose stemmer stems the same."""
    code = (
        "import sys\n"
        "from copyaudit.judges.tokens import porter_stemmer\n"
        "mine = porter_stemmer()\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in ('nltk', 'scipy')], sys.modules\n"
        "from nltk.stem import porter\n"
        "import nltk\n"
        "assert hasattr(nltk, 'word_tokenize')\n"
        "words = sys.argv[1].split()\n"
        "assert [mine.stem(w) for w in words] == [porter.PorterStemmer().stem(w) for w in words]\n"
    )
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-c", code, _WORD_TEXT.lower()], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr

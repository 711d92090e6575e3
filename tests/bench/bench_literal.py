"""Benchmark: the literal judge versus CopyBench's `eval_literal_copying.py` loop.

Run: .venv/bin/python tests/bench/bench_literal.py [--pairs N] [--seed S]

Both sides score the same N (default 10,000) reference/output pairs built from this
repository's own README and docs/ pages (words drawn with Zipfian frequencies, as in natural text),
sized like CopyBench's: references of 43-64 words (its data.literal.json), outputs
of up to ~150 words (its 200 new tokens): verbatim copies that run on, edited
copies, and unrelated outputs. The reference side
is CopyBench's loop body, calling rouge_score exactly as it does (tokenize both
texts, cut to 50 words, `_score_lcs`, `_lcs_table`, `scorer.score(output, label)`).
Ours is `LiteralJudge().judge` on the same pairs, with its stem memo emptied first.
Prints CPU seconds of each (time.process_time), the ratio (target >= 4x) and checks
that ROUGE-L, ROUGE-1 and the LCS length are identical on every pair. Not collected
by pytest (bench_*.py).
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from rouge_score import rouge_scorer

from copyaudit.judges.literal import LiteralJudge
from copyaudit.judges.tokens import _rouge_word, stem_word
from copyaudit.types import JudgeInput

ROOT = Path(__file__).resolve().parents[2]
TARGET_RATIO = 4.0
WORDS_CUT = 50  # CopyBench's --words default


def _vocabulary() -> list[str]:
    """Distinct words of our README and docs pages, in order of first appearance (rank =
    Zipf rank)."""
    seen: dict[str, None] = {}
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for word in re.findall(r"[A-Za-z][A-Za-z'-]*", page.read_text("utf-8")):
            seen.setdefault(word, None)
    return list(seen)


def _text(rng: random.Random, vocab: list[str], weights: list[float], length: int) -> str:
    words = rng.choices(vocab, weights=weights, k=length)
    return " ".join(w + (rng.choice(",.;") if rng.random() < 0.1 else "") for w in words)


def _pairs(count: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    vocab = _vocabulary()
    weights = [1 / rank for rank in range(1, len(vocab) + 1)]
    pairs: list[tuple[str, str]] = []
    for _ in range(count):
        reference = _text(rng, vocab, weights, rng.randint(43, 64))
        run_on = _text(rng, vocab, weights, rng.randint(0, 90))
        style = rng.random()
        if style < 0.15:
            output = _text(rng, vocab, weights, rng.randint(0, 10)) + " " + reference + run_on
        elif style < 0.55:
            words = reference.split(" ")
            kept = [w if rng.random() > 0.15 else rng.choice(vocab) for w in words]
            output = " ".join(kept[: rng.randint(20, len(kept))]) + " " + run_on
        else:
            output = _text(rng, vocab, weights, rng.randint(20, 150))
        pairs.append((reference, output))
    return pairs


def _reference_loop(pairs: list[tuple[str, str]]) -> list[tuple[float, float, float]]:
    """CopyBench's eval_literal_copying.py loop body, verbatim in its calls."""
    rouge_model = rouge_scorer.RougeScorer(["rouge1", "rougeL"], use_stemmer=True)
    results = []
    for label_text, output_text in pairs:
        try:
            label_tokens = rouge_model._tokenizer.tokenize(label_text)[:WORDS_CUT]
            output_tokens = rouge_model._tokenizer.tokenize(output_text)[:WORDS_CUT]
            rouge_l_dict = rouge_scorer._score_lcs(label_tokens, output_tokens)
            lcs_table = rouge_scorer._lcs_table(label_tokens, output_tokens)
            rouge_l = rouge_l_dict.fmeasure
            lcs = lcs_table[-1][-1]
            rouge_dict = rouge_model.score(output_text, label_text)
            rouge_1 = rouge_dict["rouge1"].fmeasure
        except Exception:
            rouge_1 = rouge_l = lcs = 0.0
        results.append((rouge_l, rouge_1, lcs))
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    pairs = _pairs(args.pairs, args.seed)
    items = [
        JudgeInput(kind="literal", payload={"reference": r}, prompt="", output=o) for r, o in pairs
    ]
    judge = LiteralJudge()

    start = time.process_time()
    expected = _reference_loop(pairs)
    reference_s = time.process_time() - start

    stem_word.cache_clear()
    _rouge_word.cache_clear()
    start = time.process_time()
    judged = judge.judge(items)
    ours_s = time.process_time() - start

    for (rouge_l, rouge_1, lcs), scores in zip(expected, judged, strict=True):
        got = {score.metric: score.value for score in scores}
        assert (got["rougeL"], got["rouge1"], got["lcs_tokens"]) == (rouge_l, rouge_1, lcs)
    ratio = reference_s / ours_s
    print(f"{len(pairs)} pairs, values identical on every pair")
    print(f"CopyBench loop (rouge_score): {reference_s:7.2f} CPU s")
    print(f"copyaudit literal judge:      {ours_s:7.2f} CPU s")
    verdict = "meets" if ratio >= TARGET_RATIO else "below"
    print(f"ratio: {ratio:.2f}x ({verdict} the {TARGET_RATIO:.0f}x target)")


if __name__ == "__main__":
    main()

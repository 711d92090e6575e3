"""Benchmark: the literal judge versus CopyBench's `eval_literal_copying.py` loop.

Run: .venv/bin/python tests/bench/bench_literal.py [--pairs N] [--seed S] [--command N]

Two sets of N (default 10,000) reference/output pairs, sized like CopyBench's:
references of 43-64 words (its data.literal.json), outputs of up to ~150 words (its
200 new tokens): verbatim copies that run on, edited copies, and unrelated outputs.
- prose: windows of real prose, the public-domain passages of samples/literal.jsonl
  (Alice, Pride and Prejudice, A Study in Scarlet, Moby-Dick), in their own word order,
  case and punctuation; a copy runs on into the text that follows it.
- synthetic: words of this repository's README and docs/ pages drawn with Zipfian frequencies.
The reference side is CopyBench's loop body, calling rouge_score exactly as it does
(tokenize both texts, cut to 50 words, `_score_lcs`, `_lcs_table`,
`scorer.score(output, label)`). Ours is `LiteralJudge().judge` on the same pairs, with
its stem memo emptied first. Prints CPU seconds of each (time.process_time), the
ratio, and checks that ROUGE-L, ROUGE-1 and the LCS length are identical on every pair.

The whole command (--command N prose pairs, default 6,000; 0 skips it): the pairs are
written as a literal suite and its generations and imported; then, each as a child
process timed by the kernel (user + system CPU): `copyaudit judge RUN --judges literal`
(start-up, reads, judging and writes) against CopyBench's loop as a script that reads
the same pairs from the same JSONL files and writes its scores to a JSON file.
Not collected by pytest (bench_*.py).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_import import measure
from rouge_score import rouge_scorer

from copyaudit.judges.literal import LiteralJudge
from copyaudit.judges.tokens import _rouge_word, rouge_words, stem_word
from copyaudit.types import JudgeInput

ROOT = Path(__file__).resolve().parents[2]
PROSE = ROOT / "samples" / "literal.jsonl"
TARGET_RATIO = 25.0  # the judge on real prose (issue 34)
COMMAND_TARGET = 8.0  # the whole command on real prose (issue 34)
WORDS_CUT = 50  # CopyBench's --words default

Pairs = list[tuple[str, str]]


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


def synthetic_pairs(count: int, seed: int) -> Pairs:
    rng = random.Random(seed)
    vocab = _vocabulary()
    weights = [1 / rank for rank in range(1, len(vocab) + 1)]
    pairs: Pairs = []
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


def _prose_words() -> list[str]:
    """The samples' public-domain passages (input then reference), as one word stream."""
    words: list[str] = []
    for line in PROSE.read_text("utf-8").splitlines():
        case = json.loads(line)
        words.extend(f"{case['input']} {case['reference']}".split())
    return words


def prose_pairs(count: int, seed: int) -> Pairs:
    """Windows of real prose: copies that run on, edited copies, unrelated passages."""
    rng = random.Random(seed)
    words = _prose_words()

    def window(start: int, length: int) -> list[str]:
        return [words[(start + k) % len(words)] for k in range(length)]

    pairs: Pairs = []
    for _ in range(count):
        start, length = rng.randrange(len(words)), rng.randint(43, 64)
        reference = window(start, length)
        run_on = window(start + length, rng.randint(0, 90))  # the text that follows
        style = rng.random()
        if style < 0.15:
            output = window(rng.randrange(len(words)), rng.randint(0, 10)) + reference + run_on
        elif style < 0.55:
            kept = [w if rng.random() > 0.15 else rng.choice(words) for w in reference]
            output = kept[: rng.randint(20, len(kept))] + run_on
        else:
            output = window(rng.randrange(len(words)), rng.randint(20, 150))
        pairs.append((" ".join(reference), " ".join(output)))
    return pairs


def reference_loop(pairs: Pairs) -> list[tuple[float, float, float]]:
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


def _distinct_tokens(pairs: Pairs) -> int:
    return len({word for pair in pairs for text in pair for word in rouge_words(text)})


def judge_ratio(label: str, pairs: Pairs) -> float:
    """CopyBench's loop / the judge, CPU time, after checking every value is identical."""
    items = [
        JudgeInput(kind="literal", payload={"reference": r}, prompt="", output=o) for r, o in pairs
    ]
    judge = LiteralJudge()
    start = time.process_time()
    expected = reference_loop(pairs)
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
    print(f"{label}: {len(pairs):,} pairs, {_distinct_tokens(pairs):,} distinct tokens, "
          f"values identical on every pair")  # fmt: skip
    print(f"  CopyBench loop (rouge_score): {reference_s:7.2f} CPU s")
    print(f"  copyaudit literal judge:      {ours_s:7.2f} CPU s")
    print(f"  ratio: {ratio:.2f}x")
    return ratio


# CopyBench's script as a program: read the pairs, score them, write the scores.
COPYBENCH_SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[4])
from bench_literal import reference_loop
cases = {}
with open(sys.argv[1], encoding="utf-8") as f:
    for line in f:
        case = json.loads(line)
        cases[case["id"]] = case["reference"]
with open(sys.argv[2], encoding="utf-8") as f:
    pairs = [(cases[g["case_id"]], g["output"]) for g in map(json.loads, f)]
with open(sys.argv[3], "w", encoding="utf-8") as f:
    json.dump(reference_loop(pairs), f)
"""


def command_ratio(pairs: Pairs) -> float:
    """CopyBench's loop as a script / `copyaudit judge RUN --judges literal`, child CPU."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cases, gens, db = root / "cases.jsonl", root / "generations.jsonl", root / "b.db"
        with open(cases, "w", encoding="utf-8") as c, open(gens, "w", encoding="utf-8") as g:
            for i, (reference, output) in enumerate(pairs):
                case = {"id": f"p{i}", "title": "Prose", "input": "Go on.", "reference": reference}
                c.write(json.dumps(case) + "\n")
                g.write(json.dumps({"case_id": f"p{i}", "output": output}) + "\n")
        cli = [sys.executable, "-m", "copyaudit", "--db", str(db)]
        measure(ROOT, [*cli, "import", "literal", str(cases), "--suite", "s"])
        measure(ROOT, [*cli, "import-generations", str(gens), "--run", "r", "--suite", "s"])
        ours, _, _ = measure(ROOT, [*cli, "judge", "r", "--judges", "literal"])
        script = [sys.executable, "-c", COPYBENCH_SCRIPT, str(cases), str(gens),
                  str(root / "scores.json"), str(Path(__file__).resolve().parent)]  # fmt: skip
        reference, _, _ = measure(ROOT, script)
    ratio = reference / ours
    print(f"whole command, {len(pairs):,} prose pairs (child processes, user + system CPU):")
    print(f"  CopyBench's loop as a script (read JSONL, score, write JSON): {reference:6.2f} CPU s")
    print(f"  copyaudit judge RUN --judges literal (start-up, reads, writes): {ours:6.2f} CPU s")
    print(f"  ratio: {ratio:.2f}x")
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--command", type=int, default=6_000, help="prose pairs (0: skip)")
    args = parser.parse_args()
    prose = judge_ratio("prose", prose_pairs(args.pairs, args.seed))
    synthetic = judge_ratio("synthetic", synthetic_pairs(args.pairs, args.seed))
    verdict = "meets" if prose >= TARGET_RATIO else "below"
    print(f"judge on prose {prose:.2f}x ({verdict} the {TARGET_RATIO:.0f}x target), "
          f"synthetic {synthetic:.2f}x")  # fmt: skip
    if args.command:
        whole = command_ratio(prose_pairs(args.command, args.seed + 1))
        verdict = "meets" if whole >= COMMAND_TARGET else "below"
        print(f"whole command {whole:.2f}x ({verdict} the {COMMAND_TARGET:.0f}x target)")


if __name__ == "__main__":
    main()

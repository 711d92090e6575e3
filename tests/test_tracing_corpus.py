"""Tracing against an infini-gram index built elsewhere (copyaudit.tracing.corpus): a
corpus of the samples' public-domain texts indexed in two shards by the package's own
indexer with a tiny byte-level BPE tokenizer, read in place (its folder read-only); the
spans, counts and places equal a brute-force scan of the corpus's token streams."""

from __future__ import annotations

import hashlib
import json
import random
import stat
from pathlib import Path
from typing import Any

import pytest

from copyaudit.errors import UserError
from copyaudit.judges.context import BuildContext, JudgeUnavailable
from copyaudit.judges.options import JudgeOptions
from copyaudit.judges.trace_corpus import trace_corpus_judge
from copyaudit.tracing.corpus import CorpusIndex
from copyaudit.tracing.corpus_trace import maximal_runs, trace_corpus
from copyaudit.types import JudgeInput
from tests.conftest import write_jsonl
from tests.factories import literal_record
from tests.test_tracing import FILLER, _works

pytest.importorskip("infini_gram")

from tests.corpus_index import build_corpus_index
from tests.tinymodels import build_tokenizer


def _files(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Any:
    """(texts, token streams, index folder, tokenizer folder, CorpusIndex, files' hashes)."""
    folder = tmp_path_factory.mktemp("corpus")
    texts = [w.text for w in _works()]
    tokenizer = build_tokenizer(texts, folder / "tokenizer", vocab_size=600)
    documents = [(text, {"title": f"work {n}"}) for n, text in enumerate(texts)]
    index = build_corpus_index(documents, folder, tokenizer, shards=2)
    for file in index.iterdir():  # the index is another's: read-only to us
        file.chmod(stat.S_IRUSR)
    index.chmod(stat.S_IRUSR | stat.S_IXUSR)
    streams = [tokenizer.encode(text) for text in texts]
    yield texts, streams, index, folder / "tokenizer", CorpusIndex(index, folder / "tokenizer")
    index.chmod(stat.S_IRWXU)


def _outputs(texts: list[str], n: int) -> list[str]:
    """Filler with verbatim copies (40 to 700 characters) of the corpus's texts, some
    with a character changed in the middle."""
    rng = random.Random(38)
    out = []
    for i in range(n):
        pieces = [" ".join(rng.sample(FILLER, 4))]
        for _ in range(rng.randint(1, 3)):
            text = rng.choice(texts)
            start = rng.randrange(0, len(text) - 700)
            copy = text[start : start + rng.randint(40, 700)]
            if i % 4 == 0:
                middle = len(copy) // 2
                copy = copy[:middle] + "#" + copy[middle + 1 :]
            pieces += [copy, " ".join(rng.sample(FILLER, 3))]
        out.append(" ".join(pieces))
    return out


def _brute_force(streams: list[list[int]], ids: list[int], k: int) -> list[tuple]:
    """(first token, tokens, count, {(document, token offset)}) of every maximal span,
    by comparing the output's tokens from each token with every document's from every
    place that starts with the same token."""
    starting: dict[int, list[tuple[int, int]]] = {}
    for d, stream in enumerate(streams):
        for j, token in enumerate(stream):
            starting.setdefault(token, []).append((d, j))

    def matched(i: int, d: int, j: int) -> int:
        n = 0
        while i + n < len(ids) and j + n < len(streams[d]) and ids[i + n] == streams[d][j + n]:
            n += 1
        return n

    runs = [{(d, j): matched(i, d, j) for d, j in starting.get(t, [])} for i, t in enumerate(ids)]
    longest = [max(run.values(), default=0) for run in runs]
    return [
        (i, length, len(places), places)
        for i, length in maximal_runs(longest, k)
        for places in [{place for place, n in runs[i].items() if n >= length}]
    ]


def test_maximal_runs_keep_each_run_no_earlier_one_contains() -> None:
    assert maximal_runs([5, 4, 3, 6, 1, 0, 2], 2) == [(0, 5), (3, 6)]
    assert maximal_runs([1, 1, 1], 2) == []


@pytest.mark.parametrize("k", [6, 20])
def test_spans_counts_and_places_equal_a_brute_force_scan(corpus, k: int) -> None:
    texts, streams, _, _, index = corpus
    flagged = 0
    for text in _outputs(texts, 12):
        spans = trace_corpus(index, text, k, max_spans=1000, max_places=1000)
        ids, _ = index.encode(text)
        expected = _brute_force(streams, ids, k)
        assert [(s.first_token, s.tokens, s.count) for s in spans] == [e[:3] for e in expected]
        for span, (_, _, _, places) in zip(spans, expected, strict=True):
            # the engine numbers documents shard by shard; the metadata's line is the text's
            found = {(p.metadata["linenum"], p.token) for p in span.places}
            assert found == places, text
            for place in span.places:  # the indexer's metadata: file, line and the rest
                assert place.metadata["metadata"]["title"] == f"work {place.metadata['linenum']}"
            assert span.text == text[span.start : span.end]  # byte-level BPE: exact
            assert all(span.text in texts[p.metadata["linenum"]] for p in span.places)
        flagged += any(s.chars >= 160 for s in spans)
    assert flagged >= 6  # the planted copies of 160 characters and more are found


def test_the_places_engine_numbers_are_the_documents_of_its_shards(corpus) -> None:
    _, _, _, _, index = corpus
    assert len(index.shards) == 2 and index.describe()["documents"] == 7
    numbers = {p.document: p.metadata["linenum"] for p in _all_places(index)}
    assert sorted(numbers) == list(range(7))  # shard 0's documents first: lines 0, 2, 4, 6
    assert [numbers[d] for d in range(7)] == [0, 2, 4, 6, 1, 3, 5]


def _all_places(index: CorpusIndex) -> list:
    ids, _ = index.encode(" the")
    count, segments = index.find(ids)
    return index.places(segments, len(ids), count)


def test_work_is_capped_per_generation(corpus) -> None:
    texts, _, _, _, index = corpus
    text = " ".join(t[1000:1400] for t in texts[:4])
    every = trace_corpus(index, text, 6, max_spans=1000, max_places=1000)
    capped = trace_corpus(index, text, 6, max_spans=2, max_places=1)
    assert [s.tokens for s in capped] == [s.tokens for s in every] and len(every) > 2
    looked_up = [s for s in capped if s.count is not None]
    longest = sorted(every, key=lambda s: (-s.tokens, s.first_token))[:2]
    assert [(s.first_token, s.count) for s in looked_up] == sorted(
        (s.first_token, s.count) for s in longest
    )
    assert all(len(s.places) <= 1 for s in capped)
    assert all(s.places == () for s in capped if s.count is None)


def test_the_judge_stores_spans_metrics_and_what_differs(corpus) -> None:
    texts, _, index_dir, tokenizer, _ = corpus
    options = JudgeOptions(
        corpus_index=str(index_dir), corpus_tokenizer=str(tokenizer), corpus_tokens=10
    )
    judge = trace_corpus_judge(BuildContext(options))
    copy = texts[3][500:900]
    output = "Here it is: " + copy + " and nothing else of note."
    [[longest, documents, share]] = judge.judge([JudgeInput("literal", {}, "", output)])
    assert longest.metric == "longest_corpus_chars" and longest.flagged
    assert longest.value is not None and longest.value >= 390
    assert documents.value >= 1 and 0.85 < share.value < 1
    [span] = [s for s in longest.extra["spans"] if s["chars"] == longest.value]
    assert span["text"] in copy and span["places"][0]["metadata"]["linenum"] == 3
    assert "not casefolded words" in longest.extra["differs_from_library_tracing"]
    assert judge.config()["corpus"]["tokens"] == sum(len(s) + 1 for s in corpus[1])
    [[nothing, *_]] = judge.judge([JudgeInput("literal", {}, "", "zq xv")])
    assert nothing.value == 0 and not nothing.flagged


def test_the_index_folder_is_left_as_it_was(corpus) -> None:
    _, _, index_dir, tokenizer, index = corpus
    before = _files(index_dir)
    trace_corpus(index, "anything at all " * 20, 3)
    CorpusIndex(index_dir, tokenizer)
    assert _files(index_dir) == before


def test_a_folder_that_is_no_index_or_a_missing_tokenizer_is_refused(
    corpus, tmp_path: Path
) -> None:
    _, _, index_dir, tokenizer, _ = corpus
    with pytest.raises(UserError, match="not an infini-gram index"):
        CorpusIndex(tmp_path, tokenizer)
    with pytest.raises(UserError, match="no tokenizer here"):
        CorpusIndex(index_dir, tmp_path)
    with pytest.raises(JudgeUnavailable, match="--corpus-index DIR"):
        trace_corpus_judge(BuildContext(JudgeOptions(corpus_index=str(index_dir))))


def test_judge_command_traces_a_run_against_the_corpus(cli, corpus, tmp_path: Path) -> None:
    texts, _, index_dir, tokenizer, _ = corpus
    assert cli("import", "literal", str(write_jsonl(tmp_path / "c.jsonl", [literal_record(1)])))
    gens = [{"case_id": "lit-1", "output": "So: " + texts[5][200:800]}]
    g = write_jsonl(tmp_path / "g.jsonl", gens)
    assert cli("import-generations", str(g), "--run", "r", "--suite", "c").code == 0
    args = ("--corpus-index", str(index_dir), "--corpus-tokenizer", str(tokenizer))
    judged = cli("judge", "r", "--judges", "trace_corpus", *args)
    assert judged.code == 0 and "skipped" not in judged.err, judged.err
    rows = [json.loads(x) for x in cli("export", "judgments", "--run", "r").out.splitlines()]
    [longest] = [r for r in rows if r["metric"] == "longest_corpus_chars"]
    assert longest["flagged"] and longest["value"] >= 590
    assert longest["evidence"]["extra"]["spans"][0]["places"][0]["metadata"]["linenum"] == 5

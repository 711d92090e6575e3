"""Tracing outputs to a library (issue 38): the suffix-array index finds every maximal
span of an output that the library holds, with every place, equal to a brute-force scan
(plain substring search over the works' word lists). The library: the public-domain
passages of samples/literal.jsonl grouped by work, plus shuffled-sentence works made
from them; the outputs: planted copies from works other than the case's own, copies that
run across two passages of a work, copies with one word changed, and filler."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest

from copyaudit.errors import UserError
from copyaudit.tracing import index as index_module
from copyaudit.tracing.index import IndexedWork, LibraryIndex
from copyaudit.tracing.stream import word_arrays
from copyaudit.tracing.tokens import word_spans
from copyaudit.tracing.trace import trace
from tests.conftest import write_jsonl
from tests.factories import literal_record

SAMPLES = Path(__file__).parent.parent / "samples" / "literal.jsonl"
FILLER = [
    "we",
    "should",
    "perhaps",
    "consider",
    "a",
    "quite",
    "different",
    "answer",
    "to",
    "the",
    "question",
    "today",
]


def _works() -> list[IndexedWork]:
    by_title: dict[str, list[str]] = {}
    for line in SAMPLES.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        by_title.setdefault(case["title"], []).append(case["input"] + " " + case["reference"])
    rng = random.Random(38)
    works = [IndexedWork(title, "\n\n".join(passages)) for title, passages in by_title.items()]
    for n in range(3):  # other "works": the sentences of all passages, shuffled
        sentences = [s for w in works[:4] for s in w.text.split(". ")]
        rng.shuffle(sentences)
        works.append(IndexedWork(f"shuffled-{n}", ". ".join(sentences[:40])))
    return works


def _outputs(works: list[IndexedWork], n: int) -> list[str]:
    rng = random.Random(7)
    out = []
    for i in range(n):
        pieces = [" ".join(rng.sample(FILLER, 5))]
        for _ in range(rng.randint(1, 3)):
            words = [w for w, _, _ in word_spans(rng.choice(works).text)]
            start = rng.randrange(0, len(words) - 60)
            copy = words[start : start + rng.randint(8, 60)]
            if i % 3 == 0 and len(copy) > 10:  # a one-word slip inside the copy
                copy[len(copy) // 2] = "zebra"
            pieces.append(" ".join(copy))
            pieces.append(" ".join(rng.sample(FILLER, 3)))
        out.append(", ".join(pieces))
    return out


def _brute_force(works: list[IndexedWork], text: str, k: int) -> list[tuple[int, int, int, list]]:
    """(start, end, count, places) of every maximal span by substring search."""
    spans = word_spans(text)
    words = [w for w, _, _ in spans]
    streams = []
    for work in works:
        ws = word_spans(work.text)
        streams.append((work.key, ws, " " + " ".join(w for w, _, _ in ws) + " "))
    found, reach = [], 0
    for i in range(len(words)):
        length = 0
        while i + length < len(words):
            needle = " " + " ".join(words[i : i + length + 1]) + " "
            if not any(needle in s for _, _, s in streams):
                break
            length += 1
        if length < k or i + length <= reach:
            continue
        reach = i + length
        needle = " " + " ".join(words[i : i + length]) + " "
        places = []
        for key, ws, stream in streams:
            at = stream.find(needle)
            while at >= 0:
                first = stream[: at + 1].count(" ") - 1  # the word index where it starts
                places.append((key, ws[first][1], ws[first + length - 1][2]))
                at = stream.find(needle, at + 1)
        found.append((spans[i][1], spans[i + length - 1][2], len(places), sorted(places)))
    return found


@pytest.fixture(scope="module")
def library() -> tuple[list[IndexedWork], LibraryIndex]:
    works = _works()
    return works, LibraryIndex.build(works)


@pytest.mark.parametrize(("k", "outputs"), [(12, 200), (5, 50)])
def test_traced_spans_equal_a_brute_force_scan(library, k: int, outputs: int) -> None:
    works, index = library
    for text in _outputs(works, outputs):
        ours = [
            (s.start, s.end, s.count, sorted((p.work, p.start, p.end) for p in s.places))
            for s in trace(index, text, min_tokens=k, max_places=1000)
        ]
        assert ours == _brute_force(works, text, k), text


def test_a_copy_from_another_work_is_placed_in_that_work(library) -> None:
    works, index = library
    moby = next(w for w in works if w.key.startswith("Moby"))
    output = "As the story goes, " + moby.text[200:700] + " and so on."
    (span,) = trace(index, output, min_tokens=10)
    place = next(p for p in span.places if p.work == moby.key)
    words = [w for w, _, _ in word_spans(output[span.start : span.end])]
    assert [w for w, _, _ in word_spans(moby.text[place.start : place.end])] == words
    assert span.words == len(words) >= 70


def test_the_index_reads_back_from_its_files(library, tmp_path: Path) -> None:
    works, index = library
    index.save(tmp_path / "index")
    opened = LibraryIndex.open(tmp_path / "index")
    text = _outputs(works, 1)[0]
    assert trace(opened, text, min_tokens=5) == trace(index, text, min_tokens=5)


def test_no_span_crosses_from_one_work_into_the_next() -> None:
    index = LibraryIndex.build(
        [IndexedWork("a", "one two three four five"), IndexedWork("b", "six seven eight nine")]
    )
    assert trace(index, "three four five six seven eight", min_tokens=4) == []
    first, second = trace(index, "three four five six seven eight", min_tokens=3)
    assert (first.words, first.places[0].work) == (3, "a")
    assert (second.words, second.places[0].work) == (3, "b")


def test_library_add_then_judge_trace_on_a_run(cli, tmp_path: Path, db_path: Path) -> None:
    """`library add` keeps the texts beside the database and indexes them; `judge --judges
    trace` finds a copy of another work than the case's own, with its place, and flags
    it at 160 characters; a text changed behind the library is refused."""
    works = _works()
    moby = next(w for w in works if w.key.startswith("Moby"))
    (tmp_path / "lib").mkdir()
    for n, work in enumerate(works[:4]):
        (tmp_path / "lib" / f"w{n}.txt").write_text(work.text, encoding="utf-8")
    added = cli("library", "add", str(tmp_path / "lib"), "--status", "public-domain")
    assert added.code == 0, added.err
    assert "4 works added" in added.out and "indexed 4 works" in added.out
    cases = [literal_record(1, id="c1", title="Pride and Prejudice")]
    assert cli("import", "literal", str(write_jsonl(tmp_path / "c.jsonl", cases))).code == 0
    copy = moby.text[300:900]
    output = "Here it is: " + copy
    gens = [{"case_id": "c1", "output": output}]
    g = write_jsonl(tmp_path / "g.jsonl", gens)
    assert cli("import-generations", str(g), "--run", "r", "--suite", "c").code == 0
    judged = cli("judge", "r", "--judges", "trace")
    assert judged.code == 0, judged.err
    rows = [json.loads(x) for x in cli("export", "judgments", "--run", "r").out.splitlines()]
    by = {r["metric"]: r for r in rows}
    assert by["longest_traced_chars"]["flagged"] is True
    assert by["longest_traced_chars"]["value"] >= 500
    assert by["traced_works"]["value"] == 1
    (span,) = by["longest_traced_chars"]["evidence"]["extra"]["spans"]
    assert span["places"][0]["work"] == "w3" and span["places"][0]["status"] == "public-domain"
    place = span["places"][0]
    traced = [w for w, _, _ in word_spans(moby.text[place["start"] : place["end"]])]
    assert traced == [w for w, _, _ in word_spans(output[span["start"] : span["end"]])]
    report = json.loads(cli("report", "r", "--format", "json").out)
    assert report["trace"]["flagged"] == 1 and report["trace"]["srr"] == {"public-domain": 1.0}
    assert report["trace"]["cdr"] is None  # no protected work holds a span
    shown = cli("report", "r").out
    assert "## Traced to the library" in shown and "public-domain 100.0% (1 of 1)" in shown
    stored = next((db_path.parent / f"{db_path.name}.library" / "texts").iterdir())
    stored.write_text("changed", encoding="utf-8")
    refused = cli("judge", "r", "--judges", "trace")
    assert "changed since it was added" in refused.out + refused.err


def test_the_reproduction_rate_by_kind_of_work_and_their_ratio() -> None:
    from copyaudit.reports.copying import with_statuses

    block = {"n": 10, "flagged": 5, "rate": 0.5, "thresholds": [160.0]}
    got = with_statuses(block, {"protected": 4, "public-domain": 2})
    assert got["srr"] == {"protected": 0.4, "public-domain": 0.2}
    assert got["cdr"] == pytest.approx(2.0)
    assert with_statuses(block, {"protected": 3})["cdr"] is None  # no public-domain base


def test_library_add_from_suite_registers_each_cases_reference_once(
    cli, tmp_path: Path, db_path: Path
) -> None:
    """`library add --from-suite`: each case's reference text under its work's title,
    source "case SUITE/ID", deduplicated by SHA-256 (a second case with the same text and
    a second call add nothing); a suite without reference texts is refused."""
    works = _works()
    emma, moby = works[0].text[:700], works[1].text[:900]
    cases = [
        literal_record(1, id="e1", title="Emma", author="Jane Austen", reference=emma),
        literal_record(2, id="e2", title="Emma", author="Jane Austen", reference=emma),
        literal_record(3, id="m1", title="Moby Dick", author=None, reference=moby),
    ]
    assert cli("import", "literal", str(write_jsonl(tmp_path / "s.jsonl", cases))).code == 0
    added = cli("library", "add", "--from-suite", "s", "--status", "public-domain")
    assert added.code == 0, added.err
    assert "2 works added from suite s, 1 already in the library" in added.out
    listed = cli("library", "list").out.splitlines()
    sha = hashlib.sha256(emma.encode("utf-8")).hexdigest()
    assert (
        listed[0] == f"Emma | Jane Austen | public-domain | {len(emma)} chars | {sha} | case s/e1"
    )
    assert listed[1].startswith("Moby Dick | - | public-domain |") and listed[1].endswith(
        "case s/m1"
    )
    again = cli("library", "add", "--from-suite", "s")
    assert "0 works added from suite s, 3 already in the library" in again.out
    assert len(cli("library", "list").out.splitlines()) == 2
    gens = [{"case_id": "m1", "output": "Well: " + moby[100:600]}]
    g = write_jsonl(tmp_path / "g.jsonl", gens)
    assert cli("import-generations", str(g), "--run", "r", "--suite", "s").code == 0
    assert cli("judge", "r", "--judges", "trace").code == 0
    rows = [json.loads(x) for x in cli("export", "judgments", "--run", "r").out.splitlines()]
    (span,) = next(r for r in rows if r["metric"] == "longest_traced_chars")["evidence"]["extra"][
        "spans"
    ]
    assert span["places"][0]["work"] == "Moby Dick"  # the case's own work, by its title
    qa = [{"id": "q1", "title": "Emma", "input": "Who?", "reference": "Emma"}]
    assert cli("import", "qa", str(write_jsonl(tmp_path / "q.jsonl", qa))).code == 0
    refused = cli("library", "add", "--from-suite", "q")
    assert refused.code != 0 and "only literal, extraction cases" in refused.err
    assert cli("library", "add", "--from-suite", "nope").code != 0


def test_the_stream_tokeniser_gives_word_spans_answer(library) -> None:
    """copyaudit.tracing.stream's numpy tokeniser (the index's) equals word_spans (the
    outputs'), on the library and on text whose case folding changes lengths."""
    works, _ = library
    odd = "Straße ﬁne İstanbul ΣΊΣΥΦΟΣ naïve cafe\u0301 x_y __ 12ab ½ ² ٣ 漢字かな 🙂 DON'T\nstop"
    for text in [odd, "", "...", *(w.text for w in works)]:
        words, starts, ends = word_arrays(text)
        assert list(zip(words, starts.tolist(), ends.tolist(), strict=True)) == word_spans(text)


@pytest.fixture(scope="module")
def scanned(library) -> list[tuple[str, list]]:
    """20 outputs and their brute-force spans (k = 5), scanned once."""
    works, _ = library
    return [(text, _brute_force(works, text, 5)) for text in _outputs(works, 20)]


@pytest.mark.parametrize(("small", "window"), [(0, 64), (3, 2), (10**9, 5)])
def test_the_search_shortcuts_change_no_span(
    library, scanned, monkeypatch, small: int, window: int
) -> None:
    """Binary search only (0), side-by-side comparison of few suffixes in short windows,
    and side by side from the first word: the same spans as the brute-force scan."""
    _, index = library
    monkeypatch.setattr(index_module, "SMALL_RANGE", small)
    monkeypatch.setattr(index_module, "WINDOW", window)
    for text, expected in scanned:
        ours = [
            (s.start, s.end, s.count, sorted((p.work, p.start, p.end) for p in s.places))
            for s in trace(index, text, min_tokens=5, max_places=1000)
        ]
        assert ours == expected, text


def test_an_index_without_its_files_is_refused(library, tmp_path: Path) -> None:
    """An index written before `firsts.npy` existed (or damaged) says to rebuild it."""
    _, index = library
    index.save(tmp_path / "index")
    (tmp_path / "index" / "firsts.npy").unlink()
    with pytest.raises(UserError, match=r"lacks firsts\.npy .* run copyaudit library index"):
        LibraryIndex.open(tmp_path / "index")

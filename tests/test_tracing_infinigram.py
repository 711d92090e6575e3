"""The infini-gram engine as the trace judge's search (copyaudit.tracing.infinigram): the
library's words written in its format, the suffix array built by the package's own
indexer, offline; its spans equal the suffix-array backend's (every maximal span, every
place) on the exactness tests' library and outputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copyaudit.errors import UserError
from copyaudit.tracing.index import IndexedWork, LibraryIndex
from copyaudit.tracing.trace import trace, trace_near
from tests.conftest import write_jsonl
from tests.factories import literal_record
from tests.test_tracing import _outputs, _works

pytest.importorskip("infini_gram")

from copyaudit.tracing.infinigram import InfiniGramIndex, write_infinigram


@pytest.fixture(scope="module")
def both(tmp_path_factory) -> tuple[list[IndexedWork], LibraryIndex, InfiniGramIndex]:
    works = _works()
    folder = tmp_path_factory.mktemp("library") / "index"
    index = LibraryIndex.build(works)
    index.save(folder)
    write_infinigram(index, folder)
    return works, index, InfiniGramIndex.open(folder)


@pytest.mark.parametrize(("k", "outputs"), [(12, 60), (5, 30)])
def test_the_engine_finds_the_suffix_array_spans(both, k: int, outputs: int) -> None:
    works, index, engine = both
    for text in _outputs(works, outputs):
        assert trace(engine, text, min_tokens=k, max_places=1000) == trace(
            index, text, min_tokens=k, max_places=1000
        ), text


def test_near_verbatim_spans_through_the_engine(both) -> None:
    works, index, engine = both
    texts = _outputs(works, 30)[::3]  # every third holds a one-word slip
    found = [trace_near(engine, text, 8) for text in texts]
    assert found == [trace_near(index, text, 8) for text in texts]
    assert any(found)


def test_places_read_from_the_table_are_the_engines_documents(both) -> None:
    _, _, engine = both
    ids = engine.ids(["the"])
    length, lo, hi = engine.longest_from(ids, 0)
    assert length == 1 and hi - lo > 10
    documents = sorted(engine.engine.get_doc_by_rank(s=0, rank=r)["doc_ix"] for r in range(lo, hi))
    assert sorted(work for work, _ in engine.locations(lo, hi, hi - lo)) == documents


def test_a_library_of_too_many_words_is_refused(tmp_path: Path) -> None:
    many = LibraryIndex.build([IndexedWork("w", " ".join(f"w{i}" for i in range(65535)))])
    with pytest.raises(UserError, match="65535 distinct words"):
        write_infinigram(many, tmp_path)


def test_judge_with_the_infinigram_engine_stores_the_same_spans(
    cli, tmp_path: Path, db_path: Path
) -> None:
    """`library index --infinigram`, then `judge --trace-engine infini-gram`: the same
    traced spans as the suffix array; a later `library add` rewrites the engine's index;
    without the engine's files the judge is skipped (the engine, not the array, searched)."""
    works = _works()
    (tmp_path / "lib").mkdir()
    for n, work in enumerate(works[:3]):
        (tmp_path / "lib" / f"w{n}.txt").write_text(work.text, encoding="utf-8")
    assert cli("library", "add", str(tmp_path / "lib")).code == 0
    indexed = cli("library", "index", "--infinigram")
    assert indexed.code == 0, indexed.err
    assert "infini-gram index written" in indexed.out
    cases = [literal_record(1, id="c1")]
    assert cli("import", "literal", str(write_jsonl(tmp_path / "c.jsonl", cases))).code == 0
    gens = [{"case_id": "c1", "output": "So: " + works[1].text[300:900]}]
    g = write_jsonl(tmp_path / "g.jsonl", gens)
    assert cli("import-generations", str(g), "--run", "r", "--suite", "c").code == 0

    def spans(*engine: str) -> list[dict]:
        judged = cli("judge", "r", "--judges", "trace", "--rejudge", *engine)
        assert judged.code == 0 and "skipped" not in judged.err, judged.err
        rows = [json.loads(x) for x in cli("export", "judgments", "--run", "r").out.splitlines()]
        traced = [r for r in rows if r["metric"] == "longest_traced_chars"]
        return traced[-1]["evidence"]["extra"]["spans"]

    by_engine = spans("--trace-engine", "infini-gram")
    assert by_engine and by_engine == spans()
    (tmp_path / "more.txt").write_text(works[3].text, encoding="utf-8")
    added = cli("library", "add", str(tmp_path / "more.txt"))
    assert "infini-gram index written" in added.out
    assert spans("--trace-engine", "infini-gram") == by_engine
    (Path(f"{db_path}.library") / "index" / "infinigram" / "table.0").unlink()
    refused = cli("judge", "r", "--judges", "trace", "--rejudge", "--trace-engine", "infini-gram")
    assert "skipped judge trace" in refused.err and "no infini-gram index" in refused.err

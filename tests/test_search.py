"""db.search: the list's search finds through the trigram FTS5 indexes exactly what SQL
LIKE finds (ASCII case folded, every other character literal), for any typed text,
including FTS5 operators and quotes, and the indexes follow inserts, updates and deletes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import db.search
from copyaudit.formats import LocatedCase, LocatedGeneration
from copyaudit.types import Case, Work
from db import Store
from db.browse import (
    GenerationFilter,
    MetricKey,
    count_generations,
    generation_detail,
    generation_page,
)
from db.cases import import_cases
from db.migrations import MIGRATIONS, migrate_search_index
from db.runs import (
    NewGeneration,
    RunSpec,
    add_generations,
    create_or_resume_run,
    import_generations,
)
from db.search import fts_phrase, index_pays, uses_index
from db.search_index import catch_up, has_backlog, index_step
from screens.widgets.matches import match_ranges

# Our own snippets: mixed case, non-ASCII letters with case, punctuation, quotes, what
# FTS5 reads as syntax, LIKE's wildcards and its escape character.
SNIPPETS = [
    'The Orchard Keeper said: "Glass seeds" grow at NIGHT.',
    "ÉCOLE école Straße STRASSE ΣΟΦΙΑ σοφία ς İstanbul ıi",
    "cats AND dogs OR mice NOT birds NEAR(a b) foo* ^start col:value",
    "100% sure_thing back\\slash a\\%b under_score",
    "it's 'single' and \"double\" quotes \"\" and '' pairs",
    "(parens) [brackets] {braces} - minus + plus : colon ; semi , comma . dot",
    "日本語のテキスト 中文文本 한국어 emoji 🙂🙃 tab\tand\nnewline",
    "lantern harbour quiet morning; the river's LANTERN glowed",
    "aaa aaaa aaaaa abababab xyzzy XYZZY xYzZy",
    "",
]

QUERIES = [
    "orchard",
    "ORCHARD",
    "Orchard Keeper",
    "glass seeds",
    '"Glass seeds"',
    '"',
    '""',
    "école",
    "ÉCOLE",
    "École",
    "straße",
    "STRASSE",
    "σοφία",
    "ΣΟΦΙΑ",
    "İstanbul",
    "istanbul",
    "AND",
    "and dogs",
    "OR mice",
    "NOT",
    "NEAR(a b)",
    "NEAR",
    "foo*",
    "*",
    "^start",
    "^",
    "col:value",
    "col:",
    ":",
    "100%",
    "%",
    "_",
    "sure_thing",
    "sure thing",
    "\\",
    "a\\%b",
    "back\\slash",
    "it's",
    "'single'",
    "''",
    "(parens)",
    "(",
    ")",
    "{braces}",
    "- minus",
    "+ plus",
    "日本語",
    "本",
    "テキスト",
    "🙂",
    "🙂🙃",
    "tab\tand",
    "and\nnewline",
    "\n",
    "lantern",
    "LaNtErN",
    "river's",
    "aaa",
    "aaaa",
    "aaaaaa",
    "abab",
    "babab",
    "xyzzy",
    "XYZZY",
    "zz",
    "z",
    "a",
    "ab",
    "c0",
    "c1",
    "-",
    "--",
    "case",
    "reference",
    "input",
    "not there at all",
    "Ω",
    "ß",
    "ss",
    "{",
    '"reference":',
    "\u00a0",
    "r",
    "  ",
]


def _text(i: int, template: int) -> str:
    return f"output {i}/{template} " + SNIPPETS[(i + template) % len(SNIPPETS)]


# How far the search index has caught up with the imports (db.search_index): the
# search finds the same rows at every stage.
INDEX_STAGES = ["caught up", "none indexed", "cases and half the generations indexed"]


@pytest.fixture(scope="module", params=INDEX_STAGES)
def store(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Store:
    """The snippets' store (_snippets_store), indexed as far as the stage says."""
    return _snippets_store(tmp_path_factory.mktemp("search") / "search.db", request.param)


@pytest.fixture(scope="module")
def indexed_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """The snippets' store, its index caught up: for the plan's tests."""
    return _snippets_store(tmp_path_factory.mktemp("search") / "search.db", "caught up")


def _snippets_store(path: Path, stage: str) -> Store:
    """Run `r` (imported outputs, no prompts) and run `g` (generated: prompts too) over
    cases whose payload and id hold the snippets, indexed as far as `stage` says."""
    store = Store(path)
    cases = [
        LocatedCase(
            i,
            Case(
                f"c{i}-{SNIPPETS[i % len(SNIPPETS)][:6]}",
                "literal",
                Work(f"Work {i % 3}"),
                {"input": SNIPPETS[(i + 3) % len(SNIPPETS)], "reference": f"reference {i}"},
            ),
        )
        for i in range(len(SNIPPETS) * 2)
    ]
    import_cases(store, "lit", "literal", cases, source="test")
    rows = [
        LocatedGeneration(i * 2 + t, case.case.case_id, t, _text(i, t))
        for i, case in enumerate(cases)
        for t in (1, 2)
    ]
    import_generations(store, run="r", suite="lit", model="m", rows=rows, source="test")
    run_id = create_or_resume_run(store, RunSpec("g", "lit", "hf", "m"))
    case_pks = [r["id"] for r in store.query("SELECT id FROM cases ORDER BY id")]
    add_generations(
        store,
        run_id,
        [
            NewGeneration(pk, 1, SNIPPETS[(n + 5) % len(SNIPPETS)], _text(n, 3))
            for n, pk in enumerate(case_pks)
        ],
    )
    assert has_backlog(store)  # imports leave their rows to a catch-up
    if stage == "caught up":
        catch_up(store, step_rows=7)
    elif stage.startswith("cases and half"):
        catch_up_table(store, "cases")
        half = store.scalar("SELECT COUNT(*) FROM generations") // 2
        assert index_step(store, "generations", half) == half
    return store


def catch_up_table(store: Store, table: str) -> None:
    while index_step(store, table):
        pass


def _run_ids(store: Store) -> list[int]:
    return [r["id"] for r in store.query("SELECT id FROM runs ORDER BY id")]


def _found(store: Store, run_id: int, text: str, page: int = 7) -> tuple[int, list[int]]:
    """(count, every id of the list, paged) for a search."""
    f = GenerationFilter(run_id=run_id, search=text)
    return count_generations(store, f), _paged(store, f, page)


def _paged(store: Store, f: GenerationFilter, page: int) -> list[int]:
    """Every id of the list, page by page (keyset)."""
    ids, after = [], None
    while rows := generation_page(store, f, after, page):
        ids += [r.generation_id for r in rows]
        after = rows[-1].key
    return ids


def _like_only(store: Store, run_id: int, text: str, monkeypatch: pytest.MonkeyPatch):
    with monkeypatch.context() as patch:
        patch.setattr(db.search, "MIN_INDEXED_CHARS", 10**9)  # every search a LIKE scan
        return _found(store, run_id, text)


def _index_only(store: Store, run_id: int, text: str, monkeypatch: pytest.MonkeyPatch):
    with monkeypatch.context() as patch:
        patch.setattr(db.search, "MIN_PROBE", 10**9)  # never dense: the index serves
        return _found(store, run_id, text)


def _ascii_lower(text: str) -> str:
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)


def _oracle(store: Store, run_id: int, text: str) -> list[int]:
    """What a LIKE substring search means, computed in Python from the stored texts."""
    needle = _ascii_lower(text)
    found = []
    for (gid,) in store.conn.execute(
        "SELECT id FROM generations WHERE run_id = ? ORDER BY id", (run_id,)
    ):
        d = generation_detail(store, gid)
        assert d is not None
        stored_payload = store.scalar(
            "SELECT payload FROM cases c JOIN generations g ON g.case_pk = c.id WHERE g.id = ?",
            (gid,),
        )
        fields = (d.output, d.prompt, stored_payload, d.case_id)
        if any(needle in _ascii_lower(value) for value in fields):
            found.append(gid)
    return found


@pytest.mark.parametrize("text", QUERIES)
def test_search_finds_exactly_what_like_finds(
    store: Store, text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for run_id in _run_ids(store):
        indexed = _index_only(store, run_id, text, monkeypatch)
        assert indexed == _like_only(store, run_id, text, monkeypatch)
        assert indexed == _found(store, run_id, text)  # the plan index_pays picks
        assert indexed[1] == _oracle(store, run_id, text)
        assert indexed[0] == len(indexed[1])


def test_the_queries_cover_hits_misses_and_both_paths(store: Store) -> None:
    counts = [_found(store, _run_ids(store)[0], q)[0] for q in QUERIES]
    assert sum(1 for c in counts if c) > len(QUERIES) // 2
    assert 0 in counts
    assert {uses_index(q) for q in QUERIES} == {True, False}


def test_case_folding_is_like_s_ascii_only(tmp_path: Path) -> None:
    store = Store(tmp_path / "fold.db")
    cases = [LocatedCase(1, Case("c1", "literal", Work("W"), {"input": "-", "reference": "-"}))]
    import_cases(store, "lit", "literal", cases, source="t")
    rows = [LocatedGeneration(1, "c1", 1, "Grand ÉCOLE Orchard")]
    import_generations(store, run="r", suite="lit", model="m", rows=rows, source="t")
    catch_up(store)
    run_id = _run_ids(store)[0]
    assert _found(store, run_id, "GRAND ÉCOLE ORCHARD")[0] == 1
    assert _found(store, run_id, "grand ÉCOLE orchard")[0] == 1  # ASCII letters fold
    # The trigram index folds É to é (a candidate); LIKE does not, and the search follows LIKE.
    assert store.scalar(
        "SELECT COUNT(*) FROM generations_fts WHERE generations_fts MATCH ?", ('"école"',)
    )
    assert _found(store, run_id, "école")[0] == 0


def test_a_common_text_is_scanned_a_rare_one_read_from_the_index(
    indexed_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = indexed_store
    monkeypatch.setattr(db.search, "MIN_PROBE", 10)
    assert store.scalar("SELECT COUNT(*) FROM cases") * db.search.COUNT_SCAN_COST < 10
    for page in (None, 1):  # a count, a page of one row
        assert not index_pays(store, "output", page)  # in every output
        assert index_pays(store, "NEAR(a b)", page)  # in 8 generations, 2 cases
        assert index_pays(store, "not there at all", page)
        assert not index_pays(store, "zz", page)  # too short for the index
    run_id = _run_ids(store)[0]
    assert _found(store, run_id, "output") == _like_only(store, run_id, "output", monkeypatch)


def test_typed_text_is_one_literal_phrase() -> None:
    assert fts_phrase('say "NEAR(a b)" OR *') == '"say ""NEAR(a b)"" OR *"'


_alphabet = st.sampled_from(sorted({c for s in SNIPPETS for c in s} | set("AZaz%_\\\"'*:^")))


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.one_of(
        st.text(_alphabet, min_size=1, max_size=6),
        st.tuples(st.sampled_from(SNIPPETS[:-1]), st.integers(0, 60), st.integers(1, 12)).map(
            lambda t: t[0][t[1] : t[1] + t[2]].swapcase() if t[1] % 2 else t[0][t[1] : t[1] + t[2]]
        ),
    ).filter(bool)
)
def test_any_typed_text_matches_like(store: Store, text: str) -> None:
    for run_id in _run_ids(store):
        count, ids = _found(store, run_id, text, page=50)
        assert ids == _oracle(store, run_id, text)
        assert count == len(ids)


def test_the_indexes_follow_updates_and_deletes(tmp_path: Path) -> None:
    store = Store(tmp_path / "live.db")
    cases = [LocatedCase(1, Case("c1", "literal", Work("W"), {"input": "amber", "reference": "x"}))]
    import_cases(store, "lit", "literal", cases, source="t")
    first = [LocatedGeneration(1, "c1", 1, "the quillwort grows")]
    import_generations(store, run="r", suite="lit", model="m", rows=first, source="t")
    run_id = _run_ids(store)[0]
    assert _found(store, run_id, "quillwort")[0] == 1
    second = [LocatedGeneration(1, "c1", 1, "the zephyrine blows")]
    import_generations(
        store, run="r", suite="lit", model="m", rows=second, source="t", replace=True
    )
    assert _found(store, run_id, "quillwort")[0] == 0
    assert _found(store, run_id, "zephyrine")[0] == 1
    changed = [
        LocatedCase(1, Case("c1", "literal", Work("W"), {"input": "umber", "reference": "x"}))
    ]
    import_cases(store, "lit", "literal", changed, source="t", replace=True)
    assert _found(store, run_id, "amber")[0] == 0
    assert _found(store, run_id, "umber")[0] == 1
    with store.transaction():
        store.conn.execute("DELETE FROM generations")
    assert _found(store, run_id, "zephyrine")[0] == 0
    # The index holds nothing the tables do not (FTS5's own consistency check).
    store.conn.execute("INSERT INTO generations_fts (generations_fts) VALUES ('integrity-check')")
    store.conn.execute("INSERT INTO cases_fts (cases_fts) VALUES ('integrity-check')")


def test_the_migration_back_fills_an_existing_database(tmp_path: Path) -> None:
    store = Store(tmp_path / "old.db")
    cases = [LocatedCase(1, Case("c1", "literal", Work("W"), {"input": "amber", "reference": "x"}))]
    import_cases(store, "lit", "literal", cases, source="t")
    rows = [LocatedGeneration(1, "c1", 1, "the quillwort grows")]
    import_generations(store, run="r", suite="lit", model="m", rows=rows, source="t")
    with store.transaction():  # as before the migration: no index, no triggers
        for table in ("generations_fts", "cases_fts"):
            store.conn.execute(f"DROP TABLE {table}")
            for event in ("insert", "update", "delete"):
                store.conn.execute(f"DROP TRIGGER {table}_{event}")
        assert migrate_search_index in MIGRATIONS
        migrate_search_index(store.db)
    run_id = _run_ids(store)[0]
    assert _found(store, run_id, "quillwort")[0] == 1
    assert _found(store, run_id, "amber")[0] == 1


def test_the_view_marks_what_the_search_matched() -> None:
    text = "The theme: THE end. École école aaaa"
    assert match_ranges(text, "the") == [(0, 3), (4, 7), (11, 14)]
    assert match_ranges(text, "école") == [(26, 31)]  # É is not folded, as in LIKE
    assert match_ranges(text, "aa") == [(32, 34), (34, 36)]  # left to right, no overlap
    assert match_ranges(text, "") == []
    for query in QUERIES:
        for snippet in SNIPPETS:
            assert bool(match_ranges(snippet, query)) == (
                _ascii_lower(query) in _ascii_lower(snippet)
            )


@pytest.mark.parametrize("text", QUERIES[:20])
@pytest.mark.parametrize("cap", [1, 3, 10_000])
def test_a_count_stopped_early_is_the_exact_count_capped(
    store: Store, text: str, cap: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The quick count (the list's "1,000+") agrees with the exact count up to its cap,
    through the index and through the scan."""
    for run_id in _run_ids(store):
        f = GenerationFilter(run_id=run_id, search=text)
        exact = count_generations(store, f)
        assert count_generations(store, f, at_most=cap) == min(exact, cap)
        with monkeypatch.context() as patch:
            patch.setattr(db.search, "MIN_INDEXED_CHARS", 10**9)
            assert count_generations(store, f, at_most=cap) == min(exact, cap)
    whole = GenerationFilter(run_id=_run_ids(store)[0])
    assert count_generations(store, whole, at_most=cap) == min(count_generations(store, whole), cap)


def _outputs_store(path: Path, outputs: list[str]) -> Store:
    """One run, a generation of each output, each of its own case (case text "-")."""
    store = Store(path)
    cases = [
        LocatedCase(i, Case(f"c{i}", "literal", Work("W"), {"input": "-", "reference": "-"}))
        for i in range(len(outputs))
    ]
    import_cases(store, "lit", "literal", cases, source="t")
    rows = [LocatedGeneration(i, f"c{i}", 1, output) for i, output in enumerate(outputs)]
    import_generations(store, run="r", suite="lit", model="m", rows=rows, source="t")
    catch_up(store)
    return store


def test_a_rare_phrase_of_common_trigrams_is_scanned_for_a_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every trigram of "abcde" is in every row ("abcd bcde"), the phrase in one: the index
    would walk every row to find it, so a page scans; a count still reads the index, and
    both find what LIKE finds."""
    monkeypatch.setattr(db.search, "MIN_PROBE", 5)
    outputs = ["abcd bcde" + (" abcde" if i == 41 else "") for i in range(60)]
    store = _outputs_store(tmp_path / "grams.db", outputs)
    assert not index_pays(store, "abcde", page=1)
    assert index_pays(store, "abcde")  # a count: one candidate
    run_id = _run_ids(store)[0]
    assert _found(store, run_id, "abcde") == _like_only(store, run_id, "abcde", monkeypatch)
    assert _found(store, run_id, "abcde")[0] == 1


@pytest.mark.parametrize("text", ["lantern", "output 1", "NEAR(a b)", "aaaa", "c1", "\n", "zz"])
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("sort", [None, MetricKey("literal", "rougeL")])
def test_every_order_pages_through_the_index_as_through_the_scan(
    store: Store,
    text: str,
    descending: bool,
    sort: MetricKey | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The index arms (merged in id order, every filter in each arm) page both ways and
    serve the unscored tail of a sort (no generation here is scored) as the scan does."""
    for run_id in _run_ids(store):
        f = GenerationFilter(run_id=run_id, search=text, sort=sort, descending=descending)
        with monkeypatch.context() as patch:
            patch.setattr(db.search, "MIN_PROBE", 10**9)
            indexed = _paged(store, f, page=3)
            quick = count_generations(store, f, at_most=4)
        with monkeypatch.context() as patch:
            patch.setattr(db.search, "MIN_INDEXED_CHARS", 10**9)
            assert indexed == _paged(store, f, page=3)
        ascending = _oracle(store, run_id, text)
        assert indexed == (ascending[::-1] if descending else ascending)
        assert quick == min(4, len(ascending))


def _one_text_store(path: Path, in_outputs: int, in_cases: int) -> Store:
    """60 generations, "amberlight" in the first `in_outputs` outputs and the first
    `in_cases` case texts, every other text its own."""
    store = Store(path)
    cases = [
        LocatedCase(
            i,
            Case(f"c{i}", "literal", Work("W"), {"input": "amberlight" if i < in_cases else "-"}),
        )
        for i in range(60)
    ]
    import_cases(store, "lit", "literal", cases, source="t")
    rows = [
        LocatedGeneration(i, f"c{i}", 1, "amberlight" if i < in_outputs else f"row {i}")
        for i in range(60)
    ]
    import_generations(store, run="r", suite="lit", model="m", rows=rows, source="t")
    catch_up(store)
    return store


def test_the_plan_is_estimated_from_the_index_s_first_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A probe counts the matches among the first PROBE_ROWS ids (or up to the
    PROBE_MATCHES-th match) and extrapolates: a text in every other output of 60 is
    dense from the first 20; a text only in the last 30 looks absent there, and the
    index serves it (the slower plan, the same rows)."""
    monkeypatch.setattr(db.search, "MIN_PROBE", 20)  # a count's break-even: 20 candidates
    texts = [
        ("amberlight " if i % 2 == 0 else "") + ("lateword" if i >= 30 else "") for i in range(60)
    ]
    store = _outputs_store(tmp_path / "sampled.db", [text or "-" for text in texts])
    assert store.scalar("SELECT MIN(id) FROM generations") == 1
    monkeypatch.setattr(db.search, "PROBE_ROWS", 20)
    assert not index_pays(store, "amberlight")  # 10 in the first 20 ids: ~30 of 60
    assert index_pays(store, "lateword")  # none in the first 20: ~0
    monkeypatch.setattr(db.search, "PROBE_MATCHES", 5)
    assert not index_pays(store, "amberlight")  # the 5th match at id 9: ~33
    monkeypatch.setattr(db.search, "PROBE_ROWS", 10**9)  # every row: counted
    monkeypatch.setattr(db.search, "PROBE_MATCHES", 10**9)
    assert not index_pays(store, "lateword")  # 30 matches
    run_id = _run_ids(store)[0]
    for text in ("amberlight", "lateword"):
        with monkeypatch.context() as patch:
            patch.setattr(db.search, "PROBE_ROWS", 20)
            assert _found(store, run_id, text) == _like_only(store, run_id, text, monkeypatch)
    assert _found(store, run_id, "lateword")[0] == 30
    # The probe starts at the table's first id, wherever that is.
    with store.transaction():
        store.conn.execute("DELETE FROM generations WHERE id <= 20")
    monkeypatch.setattr(db.search, "PROBE_ROWS", 20)
    assert not index_pays(store, "lateword")  # 10 in ids 21-40: ~20 of 40


def test_a_page_in_id_order_reads_an_output_text_s_index_however_common(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A text in most outputs: a page in id order streams the output index (it reads a
    page of matches), a page in another order would read every candidate (scan); a text
    in most case texts is scanned either way (the case arm sorts all its matches)."""
    monkeypatch.setattr(db.search, "MIN_PROBE", 5)
    outputs = _one_text_store(tmp_path / "outputs.db", in_outputs=50, in_cases=0)
    assert index_pays(outputs, "amberlight", page=1, streamed=True)
    assert not index_pays(outputs, "amberlight", page=1)
    assert not index_pays(outputs, "amberlight")  # an exact count reads them all
    in_cases = _one_text_store(tmp_path / "cases.db", in_outputs=0, in_cases=50)
    assert not index_pays(in_cases, "amberlight", page=1, streamed=True)
    run_id = _run_ids(outputs)[0]
    f = GenerationFilter(run_id=run_id, search="amberlight")
    assert _paged(outputs, f, page=7) == _like_only(outputs, run_id, "amberlight", monkeypatch)[1]


def test_the_output_index_arm_is_merged_in_order_without_a_sort(store: Store) -> None:
    """The page's compound SELECT is a MERGE whose output/prompt arm reads FTS5 rowids
    in order (no sort), so its LIMIT stops the walk: also with the backlog's arm."""
    seen: list[str] = []
    store.conn.set_trace_callback(seen.append)
    try:
        generation_page(store, GenerationFilter(run_id=_run_ids(store)[0], search="lantern"))
    finally:
        store.conn.set_trace_callback(None)
    (page_sql,) = [s for s in seen if " UNION " in s]
    plan = {row[0]: row[1:] for row in store.conn.execute(f"EXPLAIN QUERY PLAN {page_sql}")}
    details = [detail for _, _, detail in plan.values()]
    assert "MERGE (UNION ALL)" in details
    (fts_scan,) = [i for i, (_, _, d) in plan.items() if d.startswith("SCAN generations_fts")]
    arm = plan[fts_scan][0]
    assert not [d for parent, _, d in plan.values() if parent == arm and "TEMP B-TREE" in d]


def test_a_generation_matched_by_its_text_and_its_case_counts_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index arms are disjoint: own text, or the case's text alone. A missing prompt
    (NULL: the schema allows it) must not hide a match by the case."""
    monkeypatch.setattr(db.search, "MIN_PROBE", 10**9)  # the index serves
    store = _one_text_store(tmp_path / "both.db", in_outputs=10, in_cases=20)
    with store.transaction():
        store.conn.execute("UPDATE generations SET prompt = NULL WHERE id % 2 = 0")
    run_id = _run_ids(store)[0]
    f = GenerationFilter(run_id=run_id, search="amberlight")
    first_twenty = [r["id"] for r in store.query("SELECT id FROM generations ORDER BY id LIMIT 20")]
    assert _paged(store, f, page=6) == first_twenty
    assert count_generations(store, f) == 20
    assert count_generations(store, f, at_most=15) == 15
    assert _found(store, run_id, "amberlight") == _like_only(
        store, run_id, "amberlight", monkeypatch
    )


@pytest.mark.parametrize("text", ["lantern", "NEAR(a b)", "c1", "reference 1"])
def test_a_search_within_one_work_through_the_index_is_the_scan_s(
    store: Store, text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The work filter joins the cases in every arm, beside the case arm's own reading."""
    for run_id in _run_ids(store):
        for (work_id,) in store.conn.execute("SELECT id FROM works ORDER BY id"):
            f = GenerationFilter(run_id=run_id, search=text, work_id=work_id)
            with monkeypatch.context() as patch:
                patch.setattr(db.search, "MIN_PROBE", 10**9)
                indexed = (_paged(store, f, page=2), count_generations(store, f))
            with monkeypatch.context() as patch:
                patch.setattr(db.search, "MIN_INDEXED_CHARS", 10**9)
                assert indexed == (_paged(store, f, page=2), count_generations(store, f))
            in_work = {
                r["id"]
                for r in store.query(
                    "SELECT g.id FROM generations g JOIN cases c ON c.id = g.case_pk "
                    "WHERE c.work_id = ?",
                    (work_id,),
                )
            }
            assert indexed[0] == [i for i in _oracle(store, run_id, text) if i in in_work]
            assert indexed[1] == len(indexed[0])

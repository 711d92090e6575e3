"""The generation list's search: a literal substring of the output, the prompt, the case
text (payload) or the case id, matched as SQL LIKE matches it (case-insensitive for
ASCII letters only, every other character exactly).

From MIN_INDEXED_CHARS characters the trigram FTS5 indexes (migration
migrate_search_index) pick the candidates and LIKE confirms them, so a search costs its
matches, not a scan of the run, and finds exactly what LIKE finds: the index folds case
for every letter, a superset of LIKE's ASCII folding. A shorter search cannot use a
trigram index and falls back to LIKE over the run's rows.

Where the text is common a scan is the cheaper plan: the first page of a word in most
rows is found in the first rows scanned, while the index lists every match first.
`index_pays` lets the index serve unless it holds as many candidates as make both plans
cost the same. For a page of L rows of N at density d a scan reads about L/d rows and
the index d*N candidates, a scanned row costing PAGE_SCAN_COST of a candidate: even at
d*N = sqrt(L*N*PAGE_SCAN_COST). A count scans N rows: even at N*COUNT_SCAN_COST.
The number of candidates is estimated, never counted: a probe reads the index over the
table's first PROBE_ROWS rows (every row of a smaller table: then it counts), at most
PROBE_MATCHES matches of them, and extrapolates to the table. Counting them all would
read the index a count then reads again (a word in 1% of a million outputs: 13 of 50
ms; a rare phrase of common trigrams: 500 of 1,000 ms). A table whose first rows are
unlike the rest gets the slower plan, never other rows. Either plan finds the same rows
(tests/test_search.py); tests/bench/bench_search.py prints both.

A page in id order reads the index as the arms of one compound SELECT
(candidate_arms) that SQLite merges in id order, so its LIMIT stops the walk: the
output/prompt index gives its rowids in order, and a page reads only as far as its last
row (the rows a scan would reach, at a fraction of a LIKE's cost a row), however many
matches there are; the generations of the cases the case index matches are sorted, all
of them (index_pays scans a text in many cases). A count adds up the arms' rows. A page
in score order reads the candidates as one IN list.

An import may leave its rows out of the index for a while (db.search_index): rows above
an index's reach are scanned by one more arm (and added to the IN list), so a search
finds the same rows however far the index has caught up.

What a person types is always a literal string, never FTS5 query syntax: it is passed to
MATCH as one double-quoted phrase.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from db.connection import Store
from db.migrations import indexed_to_sql

MIN_INDEXED_CHARS = 3  # the trigram tokenizer matches nothing shorter
# What a scanned row costs against an index candidate (LIKE over the four columns vs the
# phrase match, the IN list and the row's lookup), measured by bench_search.py: ~1/2 for
# a page, ~1/3 for a count (which also reads the candidates' cases).
PAGE_SCAN_COST = 0.5
COUNT_SCAN_COST = 0.3
MIN_PROBE = 1_000  # below this many candidates the index always serves
PROBE_ROWS = 20_000  # a probe reads the index over a table's first rows, and extrapolates
PROBE_MATCHES = 1_000  # ... or over its first matches, where they are this many

# A generation matches by its own text or by its case's (over `generations g JOIN
# cases c`). The index arms test the two apart: the first needs no case at all.
_OWN_TEXT = "(g.output LIKE :pattern ESCAPE '\\' OR g.prompt LIKE :pattern ESCAPE '\\')"
_CASE_TEXT = "(c.payload LIKE :pattern ESCAPE '\\' OR c.case_id LIKE :pattern ESCAPE '\\')"
_LIKE = f"({_OWN_TEXT} OR {_CASE_TEXT})"

# Generations whose own text or whose case's text holds every trigram of the phrase.
_CANDIDATES = (
    "g.id IN (SELECT rowid FROM generations_fts WHERE generations_fts MATCH :phrase "
    "UNION ALL SELECT gc.id FROM generations gc WHERE gc.case_pk IN "
    "(SELECT rowid FROM cases_fts WHERE cases_fts MATCH :phrase))"
)
# Rows an import left to a later catch-up of the index (db.search_index): above the
# index's reach, so no index lists them; a search scans them.
_UNINDEXED_OWN = f"g.id > {indexed_to_sql('generations')}"
_UNINDEXED_CASE = f"g.case_pk > {indexed_to_sql('cases')}"
_CANDIDATES_WITH_BACKLOG = f"({_CANDIDATES} OR {_UNINDEXED_OWN} OR {_UNINDEXED_CASE})"


def like_pattern(text: str) -> str:
    """`text` as a LIKE pattern matching it anywhere (with ESCAPE '\\')."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def fts_phrase(text: str) -> str:
    """`text` as one FTS5 phrase: double-quoted, its double quotes doubled, so operators
    (AND, OR, NOT, NEAR, *, ^, column filters) are read as plain characters."""
    return '"' + text.replace('"', '""') + '"'


def uses_index(text: str) -> bool:
    """Whether a search for `text` is served by the trigram indexes (else LIKE scans)."""
    return len(text) >= MIN_INDEXED_CHARS


def index_pays(store: Store, text: str, page: int | None = None, streamed: bool = False) -> bool:
    """Whether the index should serve a search for `text` (a count, or a page of `page`
    rows, `streamed` through candidate_arms in id order): it can (uses_index) and no
    list of candidates read whole holds as many as scanning would cost (at least
    MIN_PROBE), as estimated from the index's first rows (_estimated_matches)."""
    if not uses_index(text):
        return False
    # A streamed page reads the output/prompt index only as far as the page reaches,
    # the rows a scan would read, at a fraction of a LIKE's cost a row (a phrase of 16
    # common trigrams at a million rows: 0.1 against 2.5 us): it always pays.
    tables = ("cases",) if streamed and page is not None else ("generations", "cases")
    for table in tables:
        # two rowid seeks: the rows the index lists (those above its reach are scanned
        # whichever plan serves: db.search_index)
        first, last = store.conn.execute(
            f"SELECT (SELECT MIN(id) FROM {table}), "
            f"(SELECT MAX(id) FROM {table} WHERE id <= {indexed_to_sql(table)})"
        ).fetchone()
        if first is None or last is None or last < first:
            continue  # nothing indexed: no candidates
        ids = range(first, last + 1)
        rows = len(ids)
        even = rows * COUNT_SCAN_COST if page is None else math.sqrt(page * rows * PAGE_SCAN_COST)
        cap = max(MIN_PROBE, int(even))
        # A page: if every trigram of the text is in `cap` rows, the index walks at least
        # that many rows to find the phrase, however rare the phrase (a phrase of common
        # words): the scan is cheaper.
        phrases = [fts_phrase(gram) for gram in trigrams(text)] if page is not None else []
        if phrases and all(_in_at_least(store, table, p, ids, cap) for p in phrases):
            return False
        if _in_at_least(store, table, fts_phrase(text), ids, cap):
            return False
    return True


def trigrams(text: str) -> list[str]:
    """The text's distinct trigrams, in order (as the index tokenizes it, before folding)."""
    return list(dict.fromkeys(text[i : i + 3] for i in range(len(text) - 2)))


def _in_at_least(store: Store, table: str, phrase: str, ids: range, cap: int) -> bool:
    """Whether `table`'s index holds `phrase` in at least `cap` rows (estimated)."""
    return _estimated_matches(store, table, phrase, ids, min(cap, PROBE_MATCHES)) >= cap


def _estimated_matches(store: Store, table: str, phrase: str, ids: range, limit: int) -> float:
    """How many rows of `table` (its `ids`, first to last) its index holds `phrase` in:
    counted over the first PROBE_ROWS ids, or up to the `limit`-th match if that comes
    first, and extrapolated to all of them (exact where those ids are all of them)."""
    probed = ids[:PROBE_ROWS]
    found, last = store.conn.execute(
        f"SELECT COUNT(*), MAX(rowid) FROM (SELECT rowid FROM {table}_fts "
        f"WHERE {table}_fts MATCH ? AND rowid BETWEEN ? AND ? LIMIT ?)",
        (phrase, probed.start, probed.stop - 1, limit),
    ).fetchone()
    reached = last - ids.start + 1 if found >= limit else len(probed)
    return float(found) if reached >= len(ids) else found * len(ids) / reached


@dataclass(frozen=True)
class CandidateArm:
    """One index's matches as an arm of a compound SELECT: `source` joins the index to
    `generations g`, `id_column` is the generation id as the arm's order is read from
    it, `match` the arm's conditions (:phrase, :run_id, :pattern): the index's
    candidates and LIKE's confirmation, which reads `cases c` where `needs_case`."""

    source: str
    id_column: str
    match: str
    needs_case: bool = False


_RUN_END = "(SELECT id FROM generations WHERE run_id = :run_id ORDER BY id {} LIMIT 1)"
# The arms are disjoint, so their rows are summed, never deduplicated: the first holds
# the generations whose own text matches, the second those matched only by their case
# (LIKE's match implies the trigram index's, a superset). `IS NOT 1`: a NULL prompt
# makes the own-text test NULL, which is not a match.
_INDEX_ARMS = (
    # FTS5 gives rowids in order (ORDER BY rowid is consumed, no sort); the walk is kept
    # within the run's first and last ids, two seeks of idx_generations_run_id.
    CandidateArm(
        "generations_fts CROSS JOIN generations g ON g.id = generations_fts.rowid",
        "generations_fts.rowid",
        "generations_fts MATCH :phrase AND generations_fts.rowid BETWEEN "
        f"{_RUN_END.format('ASC')} AND {_RUN_END.format('DESC')} AND {_OWN_TEXT}",
    ),
    CandidateArm(
        "cases_fts CROSS JOIN generations g ON g.case_pk = cases_fts.rowid",
        "g.id",
        f"cases_fts MATCH :phrase AND {_CASE_TEXT} AND {_OWN_TEXT} IS NOT 1",
        needs_case=True,
    ),
)
# The rows no index lists yet (db.search_index), scanned: those whose own text matches
# above the output index's reach, and those matched only by a case above the case
# index's reach. Disjoint from the index arms, which list only rows below the reaches.
_BACKLOG_ARM = CandidateArm(
    "generations g",
    "g.id",
    f"(({_UNINDEXED_OWN} AND {_OWN_TEXT}) OR "
    f"({_UNINDEXED_CASE} AND {_CASE_TEXT} AND {_OWN_TEXT} IS NOT 1))",
    needs_case=True,
)


def candidate_arms(backlog: bool) -> tuple[CandidateArm, ...]:
    """The arms of a search through the indexes: with the backlog's scan where rows
    wait for the index (db.search_index.has_backlog)."""
    return (*_INDEX_ARMS, _BACKLOG_ARM) if backlog else _INDEX_ARMS


def search_parameters(text: str) -> dict[str, Any]:
    """The parameters of a search's conditions (search_condition, candidate_arms) but
    :run_id; a condition that does not read the index ignores :phrase."""
    return {"pattern": like_pattern(text), "phrase": fts_phrase(text)}


def search_condition(
    text: str, indexed: bool = True, backlog: bool = False
) -> tuple[str, dict[str, Any]]:
    """The WHERE condition (over `generations g JOIN cases c`) and its parameters:
    index candidates (and, with a `backlog`, the rows no index lists yet) confirmed by
    LIKE, or (not `indexed`, or too short) LIKE alone."""
    params = search_parameters(text)
    if not indexed or not uses_index(text):
        return _LIKE, params
    candidates = _CANDIDATES_WITH_BACKLOG if backlog else _CANDIDATES
    return f"{candidates} AND {_LIKE}", params

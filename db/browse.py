"""Read queries behind the terminal app: the runs dashboard, the paged generation list
(filters, sort, search, keyset paging) and one generation with its case and evidence.

Every list query is paged: the app never holds a whole table. A page is fetched in two
steps: first the ids of the page (the filter and the sort, nothing else), then the
columns shown for those ids only, so a sort over 100,000 generations never builds the
output previews of rows it does not show.

Current labels come from db.labels (one definition); a judge/human disagreement ignores
items the judge did not decide (characters named in the prompt, failed judgments), as
the agreement report does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from db.connection import Store
from db.content import stale_sql
from db.labels import current_label_events_sql, item_count_sql
from db.queries import FAILED_SQL, runs_summary, with_shown_status
from db.run_totals import generation_counts, run_metric_tallies
from db.search import candidate_arms, index_pays, search_condition, search_parameters
from db.search_index import has_backlog

PREVIEW_CHARS = 160
NULL_LOW = -1.0e308  # where unscored generations sort: always after the scored ones
NULL_HIGH = 1.0e308

# The judge's verdict on the labelled item: per item for events and characters, the
# judgment's flag for whole-generation targets (refusal, literal).
_JUDGE_VERDICT_SQL = """
CASE WHEN cl.target IN ('event', 'character') THEN
  CASE WHEN EXISTS (SELECT 1 FROM json_each(j.evidence, '$.extra.excluded') x
                    WHERE x.value = cl.item_index) THEN NULL
  ELSE (SELECT json_extract(e.value, '$.verdict') FROM json_each(j.evidence, '$.items') e
        WHERE json_extract(e.value, '$.index') = cl.item_index) END
WHEN j.value IS NULL THEN NULL
ELSE j.flagged END
"""

DISAGREEMENT_IDS_SQL = f"""
SELECT cl.generation_id FROM ({current_label_events_sql()}) cl
JOIN judgments j ON j.generation_id = cl.generation_id
  AND json_extract(j.evidence, '$.target') = cl.target
WHERE cl.label IN ('yes', 'no')
  AND ({_JUDGE_VERDICT_SQL}) = (CASE cl.label WHEN 'yes' THEN 0 ELSE 1 END)
"""


class Headline(Protocol):
    """What the dashboard reads of a headline (copyaudit.metrics_spec.Headline, which the
    caller passes: db imports no metric code)."""

    @property
    def key(self) -> str: ...
    @property
    def metric(self) -> str: ...
    @property
    def summary(self) -> str: ...


@dataclass(frozen=True, order=True)
class MetricKey:
    """One score column: a metric as one judge computes it (two judges can share a
    metric name, e.g. `literal` and `literal_unicode` both give rougeL)."""

    judge: str
    metric: str

    def label(self, ambiguous: bool = False) -> str:
        return f"{self.metric} ({self.judge})" if ambiguous else self.metric


ANY_FLAG = MetricKey("*", "*")  # "flagged by any judge"


@dataclass(frozen=True)
class GenerationFilter:
    """What the generation list shows, and in which order."""

    run_id: int
    flagged: MetricKey | None = None  # ANY_FLAG, one metric, or None (no flag filter)
    unlabeled: bool = False  # not fully labelled by `annotator` (no annotator: by anyone)
    annotator: str | None = None  # whose labels `unlabeled` counts
    disagreement: bool = False  # a current yes/no label contradicts the judge's verdict
    work_id: int | None = None
    template: int | None = None
    search: str = ""  # substring of the output, the prompt or the case text (db.search)
    sort: MetricKey | None = None  # None: generation order
    descending: bool = False

    def with_changes(self, **changes: Any) -> GenerationFilter:
        return replace(self, **changes)


@dataclass(frozen=True)
class PageKey:
    """Where a page ends, for keyset paging: the row's sort value and its id."""

    value: float
    generation_id: int


@dataclass(frozen=True)
class ListRow:
    generation_id: int
    case_id: str
    template: int
    work: str
    preview: str
    error: str | None
    scores: dict[MetricKey, tuple[float | None, bool | None]]
    labels: int  # current labels (all annotators)
    key: PageKey


@dataclass(frozen=True)
class JudgmentView:
    judge: str
    judge_version: str | None
    metric: str
    value: float | None
    flagged: bool | None
    evidence: dict[str, Any]

    @property
    def key(self) -> MetricKey:
        return MetricKey(self.judge, self.metric)

    @property
    def threshold(self) -> float | None:
        return self.evidence.get("threshold")

    @property
    def target(self) -> str | None:
        return self.evidence.get("target")

    @property
    def error(self) -> str | None:
        return self.evidence.get("error")


@dataclass(frozen=True)
class GenerationDetail:
    generation_id: int
    run: str
    suite: str
    kind: str
    case_id: str
    template: int
    work_title: str
    work_author: str | None
    membership: str
    prompt: str
    output: str
    error: str | None
    tokens: int | None
    source: str
    payload: dict[str, Any]
    judgments: list[JudgmentView] = field(default_factory=list)
    labels: list[dict[str, Any]] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.run}/{self.case_id}/{self.template}"


# --- dashboard -------------------------------------------------------------------------


def headline_figures(
    store: Store, headlines: Sequence[Headline]
) -> dict[int, dict[str, float | None]]:
    """run id -> {headline key: figure or None} for every run with judgments: the
    `headlines` (every one: copyaudit.studies.registry.headlines), "flagged" as the
    share of the metric's judgments that are flagged (as copyaudit.reports.run_report
    computes it), "mean" as its mean; read from the totals the database keeps
    (db.run_totals), not from the judgments."""
    wanted = {h.metric for h in headlines}
    by_run: dict[int, dict[str, tuple[float | None, float | None]]] = {}
    for row in run_metric_tallies(store):
        if row["metric"] not in wanted:
            continue
        rate = row["flagged"] / row["verdicts"] if row["verdicts"] else None
        mean = row["value_sum"] / row["valued"] if row["valued"] else None
        by_run.setdefault(row["run_id"], {})[row["metric"]] = (rate, mean)
    figures: dict[int, dict[str, float | None]] = {}
    for run_id, values in by_run.items():
        figures[run_id] = {
            h.key: values.get(h.metric, (None, None))[0 if h.summary == "flagged" else 1]
            for h in headlines
        }
    return figures


def dashboard_runs(store: Store, headlines: Sequence[Headline]) -> list[dict[str, Any]]:
    """runs_summary rows with their headline figures under 'figures'."""
    figures = headline_figures(store, headlines)
    rows = runs_summary(store)
    for row in rows:
        row["figures"] = figures.get(row["id"], dict.fromkeys(h.key for h in headlines))
    return rows


def run_info(store: Store, name: str) -> dict[str, Any] | None:
    row = store.conn.execute(
        "SELECT r.id, r.name, r.model, r.backend, r.status, r.mitigation, s.name AS suite, "
        f"s.kind, {FAILED_SQL} FROM runs r JOIN suites s ON s.id = r.suite_id WHERE r.name = ?",
        (name,),
    ).fetchone()
    return None if row is None else with_shown_status(store, dict(row), name)


def run_metrics(store: Store, run_id: int) -> list[MetricKey]:
    """The (judge, metric) pairs scored in the run, in name order (from the kept totals)."""
    return [
        MetricKey(r[0], r[1])
        for r in store.conn.execute(
            "SELECT DISTINCT judge, metric FROM judgment_totals WHERE run_id = ? "
            "ORDER BY judge, metric",
            (run_id,),
        )
    ]


def run_works(store: Store, run_id: int) -> list[tuple[int, str]]:
    """(work id, title) of the works the run's suite draws from, by title."""
    return [
        (int(r["id"]), r["title"])
        for r in store.conn.execute(
            "SELECT w.id, w.title FROM runs r JOIN suite_work_totals t ON t.suite_id = r.suite_id "
            "JOIN works w ON w.id = t.work_id WHERE r.id = ? ORDER BY w.title, w.id",
            (run_id,),
        )
    ]


def run_templates(store: Store, run_id: int) -> list[int]:
    """The prompt templates the run has generations of, ascending."""
    return [
        int(r[0])
        for r in store.conn.execute(
            "SELECT template FROM generation_totals WHERE run_id = ? ORDER BY template",
            (run_id,),
        )
    ]


# --- the generation list --------------------------------------------------------------


def _where(
    f: GenerationFilter, indexed: bool = True, backlog: bool = False
) -> tuple[list[str], dict[str, Any], bool]:
    """(conditions, parameters, whether the cases table is needed); `indexed`: whether the
    search reads the FTS5 index (db.search.index_pays) or scans; `backlog`: whether rows
    wait for the index (db.search_index), to be scanned."""
    conditions = ["g.run_id = :run_id"]
    params: dict[str, Any] = {"run_id": f.run_id}
    needs_case = False
    # Flag filters read the partial indexes of flagged judgments (migration m005).
    if f.flagged == ANY_FLAG:
        conditions.append(
            "g.id IN (SELECT jf.generation_id FROM judgments jf WHERE jf.flagged = 1)"
        )
    elif f.flagged is not None:
        conditions.append(
            "g.id IN (SELECT jf.generation_id FROM judgments jf WHERE jf.judge = :flag_judge "
            "AND jf.metric = :flag_metric AND jf.flagged = 1)"
        )
        params.update(flag_judge=f.flagged.judge, flag_metric=f.flagged.metric)
    if f.unlabeled and f.annotator is not None:
        mine = current_label_events_sql("l.annotator = :annotator")
        conditions.append(
            f"g.id NOT IN (SELECT cl.generation_id FROM ({mine}) cl "
            "JOIN generations g2 ON g2.id = cl.generation_id JOIN cases c2 ON c2.id = g2.case_pk "
            f"GROUP BY cl.generation_id HAVING COUNT(*) >= {item_count_sql('c2')})"
        )
        params["annotator"] = f.annotator
    elif f.unlabeled:
        conditions.append(
            f"g.id NOT IN (SELECT cl.generation_id FROM ({current_label_events_sql()}) cl)"
        )
    if f.disagreement:
        conditions.append(f"g.id IN ({DISAGREEMENT_IDS_SQL})")
    if f.work_id is not None:
        conditions.append("c.work_id = :work_id")
        params["work_id"] = f.work_id
        needs_case = True
    if f.template is not None:
        conditions.append("g.template = :template")
        params["template"] = f.template
    if f.search:
        # db.search: LIKE's matches (ASCII case folded), candidates from the FTS5 index.
        condition, search_params = search_condition(f.search, indexed, backlog)
        conditions.append(condition)
        params.update(search_params)
        needs_case = True
    return conditions, params, needs_case


def _case_join(needed: bool) -> str:
    """The join of the generation's case (alias c), with its trailing space, or nothing."""
    return "JOIN cases c ON c.id = g.case_pk " if needed else ""


def count_generations(store: Store, f: GenerationFilter, at_most: int | None = None) -> int:
    """How many generations the filter matches; with `at_most`, counting stops there (the
    list shows "1,000+" before a slow exact count, planned as a page of that many rows)."""
    # the whole run (in any order; the annotator counts only with `unlabeled`): its total
    if f.with_changes(annotator=None, sort=None, descending=False) == GenerationFilter(f.run_id):
        total = generation_counts(store, f.run_id)[0]
        return total if at_most is None else min(total, at_most)
    indexed = index_pays(store, f.search, at_most, streamed=at_most is not None)
    if indexed:  # index_pays: never without a search the index can serve
        # disjoint: a count adds them up
        sql, params = _index_arms_sql(f, backlog=has_backlog(store))
        if at_most is not None:
            sql, params["at_most"] = f"SELECT 1 FROM ({sql}) LIMIT :at_most", at_most
        return int(store.scalar(f"SELECT COUNT(*) FROM ({sql})", params))
    conditions, params, needs_case = _where(f, indexed)
    join = _case_join(needs_case)
    where = f"FROM generations g {join}WHERE {' AND '.join(conditions)}"
    if at_most is None:
        return int(store.scalar(f"SELECT COUNT(*) {where}", params))
    params["at_most"] = at_most
    return int(store.scalar(f"SELECT COUNT(*) FROM (SELECT 1 {where} LIMIT :at_most)", params))


def _index_arms_sql(
    f: GenerationFilter,
    after_id: int | None = None,
    extra: Sequence[str] = (),
    extra_params: dict[str, Any] | None = None,
    *,
    backlog: bool,
) -> tuple[str, dict[str, Any]]:
    """The ids a search finds through the index arms (after `after_id` in the filter's
    order), one compound SELECT of disjoint arms, every filter in each arm; `backlog`:
    with the arm scanning rows the index does not list yet."""
    conditions, params, needs_case = _where(f.with_changes(search=""))
    conditions += extra
    params.update(search_parameters(f.search), after_id=after_id, **(extra_params or {}))
    compare = "<" if f.descending else ">"
    arms = []
    for arm in candidate_arms(backlog):
        where = [arm.match, *conditions]
        if after_id is not None:
            where.append(f"{arm.id_column} {compare} :after_id")
        join = _case_join(needs_case or arm.needs_case)
        arms.append(f"SELECT {arm.id_column} FROM {arm.source} {join}WHERE {' AND '.join(where)}")
    return " UNION ALL ".join(arms), params


def _page_ids(
    store: Store, f: GenerationFilter, after: PageKey | None, limit: int
) -> list[tuple[int, float]]:
    """The ids of the next page with their sort keys. Sorted by a score, the scored
    generations come first (walking the sort index in value order, so a page costs a
    page, not a sort of the run), then the unscored ones in id order."""
    if f.sort is None:
        indexed = index_pays(store, f.search, limit, streamed=True)
        return _id_order_page(store, f, after, limit, [], indexed=indexed)
    indexed = index_pays(store, f.search, limit)
    compare = "<" if f.descending else ">"
    null_key = NULL_LOW if f.descending else NULL_HIGH
    rows: list[tuple[int, float]] = []
    if after is None or after.value != null_key:
        conditions, params, needs_case = _where(f, indexed, indexed and has_backlog(store))
        params.update(sort_judge=f.sort.judge, sort_metric=f.sort.metric, limit=limit)
        conditions += ["s.judge = :sort_judge", "s.metric = :sort_metric", "s.value IS NOT NULL"]
        if after is not None:
            conditions.append(
                f"(s.value {compare} :after_value OR "
                f"(s.value = :after_value AND s.generation_id {compare} :after_id))"
            )
            params.update(after_value=after.value, after_id=after.generation_id)
        join = _case_join(needs_case)
        direction = "DESC" if f.descending else "ASC"
        # CROSS JOIN keeps judgments as the outer loop: SQLite walks idx_judgments_sort.
        rows = [
            (int(r[0]), float(r[1]))
            for r in store.conn.execute(
                "SELECT g.id, s.value FROM judgments s CROSS JOIN generations g "
                f"ON g.id = s.generation_id {join}WHERE {' AND '.join(conditions)} "
                f"ORDER BY s.value {direction}, s.generation_id {direction} LIMIT :limit",
                params,
            )
        ]
    if len(rows) < limit:
        unscored = (
            "NOT EXISTS (SELECT 1 FROM judgments s WHERE s.generation_id = g.id "
            "AND s.judge = :sort_judge AND s.metric = :sort_metric AND s.value IS NOT NULL)"
        )
        resume = after if after is not None and after.value == null_key else None
        tail = _id_order_page(
            store,
            f,
            resume,
            limit - len(rows),
            [unscored],
            {"sort_judge": f.sort.judge, "sort_metric": f.sort.metric},
            indexed=indexed,
        )
        rows += [(gid, null_key) for gid, _ in tail]
    return rows


def _id_order_page(
    store: Store,
    f: GenerationFilter,
    after: PageKey | None,
    limit: int,
    extra: list[str],
    extra_params: dict[str, Any] | None = None,
    *,
    indexed: bool,
) -> list[tuple[int, float]]:
    """The next `limit` ids in id order; `indexed`: index_pays' answer for the search
    (never True without one the index can serve)."""
    if indexed:
        # SQLite merges the arms in order (each delivers its ids sorted), so LIMIT stops
        # the output index's walk at the page's last row.
        after_id = None if after is None else after.generation_id
        sql, params = _index_arms_sql(f, after_id, extra, extra_params, backlog=has_backlog(store))
        direction = "DESC" if f.descending else "ASC"
        params["limit"] = limit
        sql = f"{sql} ORDER BY 1 {direction} LIMIT :limit"
        return [(int(r[0]), float(r[0])) for r in store.conn.execute(sql, params)]
    conditions, params, needs_case = _where(f, indexed)
    conditions += extra
    params.update(extra_params or {})
    compare = "<" if f.descending else ">"
    if after is not None:
        conditions.append(f"g.id {compare} :after_id")
        params["after_id"] = after.generation_id
    params["limit"] = limit
    join = _case_join(needs_case)
    direction = "DESC" if f.descending else "ASC"
    return [
        (int(r[0]), float(r[0]))
        for r in store.conn.execute(
            f"SELECT g.id FROM generations g {join}WHERE {' AND '.join(conditions)} "
            f"ORDER BY g.id {direction} LIMIT :limit",
            params,
        )
    ]


def _marks(values: Sequence[Any]) -> str:
    return ", ".join("?" for _ in values)


def generation_page(
    store: Store, f: GenerationFilter, after: PageKey | None = None, limit: int = 100
) -> list[ListRow]:
    """The next `limit` rows of the list after `after` (from the start when None)."""
    keyed = _page_ids(store, f, after, limit)
    if not keyed:
        return []
    ids = [gid for gid, _ in keyed]
    marks = _marks(ids)
    columns = {
        int(r["id"]): r
        for r in store.conn.execute(
            "SELECT g.id, c.case_id, g.template, w.title, substr(g.output, 1, ?) AS preview, "
            "g.error FROM generations g JOIN cases c ON c.id = g.case_pk "
            f"JOIN works w ON w.id = c.work_id WHERE g.id IN ({marks})",
            (PREVIEW_CHARS, *ids),
        )
    }
    scores: dict[int, dict[MetricKey, tuple[float | None, bool | None]]] = {}
    for r in store.conn.execute(
        "SELECT generation_id, judge, metric, value, flagged FROM judgments "
        f"WHERE generation_id IN ({marks})",
        ids,
    ):
        flag = None if r["flagged"] is None else bool(r["flagged"])
        scores.setdefault(int(r["generation_id"]), {})[MetricKey(r["judge"], r["metric"])] = (
            r["value"],
            flag,
        )
    labels = label_counts(store, ids)
    return [
        ListRow(
            generation_id=gid,
            case_id=columns[gid]["case_id"],
            template=int(columns[gid]["template"]),
            work=columns[gid]["title"],
            preview=columns[gid]["preview"] or "",
            error=columns[gid]["error"],
            scores=scores.get(gid, {}),
            labels=labels.get(gid, 0),
            key=PageKey(value, gid),
        )
        for gid, value in keyed
    ]


# --- one generation ---------------------------------------------------------------------


def judgments_of(store: Store, generation_id: int) -> list[JudgmentView]:
    return [
        JudgmentView(
            judge=r["judge"],
            judge_version=r["version"],
            metric=r["metric"],
            value=r["value"],
            flagged=None if r["flagged"] is None else bool(r["flagged"]),
            evidence=json.loads(r["evidence"]) if r["evidence"] else {},
        )
        for r in store.conn.execute(
            "SELECT j.judge, jc.version, j.metric, j.value, j.flagged, j.evidence "
            "FROM judgments j LEFT JOIN judge_configs jc ON jc.hash = j.judge_hash "
            "WHERE j.generation_id = ? ORDER BY j.judge, j.metric",
            (generation_id,),
        )
    ]


def label_counts(store: Store, generation_ids: Sequence[int]) -> dict[int, int]:
    """How many current labels (all annotators) each generation has (0: absent)."""
    ids = list(generation_ids)
    if not ids:
        return {}
    restrict = "l.generation_id IN (SELECT value FROM json_each(?))"
    rows = store.conn.execute(
        f"SELECT generation_id, COUNT(*) FROM ({current_label_events_sql(restrict)}) "
        "GROUP BY generation_id",
        (json.dumps(ids),),
    )
    return {int(r[0]): int(r[1]) for r in rows}


def list_stamp(store: Store, run_id: int) -> tuple[int, int, int]:
    """A cheap fingerprint of what a run's list shows: (generations, newest generation
    id, newest label event): a list compares it to notice new rows and new labels."""
    generations = generation_counts(store, run_id)[0]
    newest = store.scalar(
        "SELECT COALESCE(MAX(id), 0) FROM generations WHERE run_id = ?", (run_id,)
    )
    labels = store.conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM labels").fetchone()[0]
    return int(generations), int(newest), int(labels)


def current_labels(store: Store, generation_id: int) -> list[dict[str, Any]]:
    """The generation's current labels (every annotator), by target and item; `stale`:
    made on an earlier version of the content (db.content)."""
    return [
        {**dict(r), "stale": bool(r["stale"])}
        for r in store.conn.execute(
            "SELECT live.uuid, live.generation_id, live.annotator, live.target, "
            "live.item_index, live.label, live.note, live.created_at, "
            f"{stale_sql('live')} AS stale "
            f"FROM ({current_label_events_sql('l.generation_id = ?')}) live "
            "JOIN generations g ON g.id = live.generation_id JOIN cases c ON c.id = g.case_pk "
            "ORDER BY live.target, live.item_index, live.annotator",
            (generation_id,),
        )
    ]


def generation_detail(store: Store, generation_id: int) -> GenerationDetail | None:
    row = store.conn.execute(
        "SELECT g.id, r.name AS run, s.name AS suite, s.kind, c.case_id, g.template, "
        "w.title, w.author, w.membership, g.prompt, g.output, g.error, g.tokens, g.source, "
        "c.payload FROM generations g JOIN runs r ON r.id = g.run_id "
        "JOIN cases c ON c.id = g.case_pk JOIN suites s ON s.id = c.suite_id "
        "JOIN works w ON w.id = c.work_id WHERE g.id = ?",
        (generation_id,),
    ).fetchone()
    if row is None:
        return None
    return detail_from_row(
        row,
        payload=json.loads(row["payload"]),
        judgments=judgments_of(store, generation_id),
        labels=current_labels(store, generation_id),
    )


def detail_from_row(
    row: Mapping[str, Any],
    *,
    payload: dict[str, Any],
    judgments: list[JudgmentView],
    labels: list[Any],
) -> GenerationDetail:
    """A generation's detail from a row with generation_detail's columns (a sqlite Row
    or the case file's dict)."""
    return GenerationDetail(
        generation_id=int(row["id"]),
        run=row["run"],
        suite=row["suite"],
        kind=row["kind"],
        case_id=row["case_id"],
        template=int(row["template"]),
        work_title=row["title"],
        work_author=row["author"],
        membership=row["membership"],
        prompt=row["prompt"] or "",
        output=row["output"] or "",
        error=row["error"],
        tokens=row["tokens"],
        source=row["source"],
        payload=payload,
        judgments=judgments,
        labels=labels,
    )

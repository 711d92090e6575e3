"""A demo-like database for the screen tests: the bundled samples imported through the
real importers, and judgments built here as Score objects (simple deterministic scorers
written for the tests, so the screens are tested without the judges or any model).

The tests in this file check that the fixture really holds every kind of evidence the
screens highlight.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any

from copyaudit.engine.demo import samples_dir
from copyaudit.formats import load_cases, load_generations
from copyaudit.types import ItemVerdict, Score, Span
from db import Store
from db.cases import import_cases
from db.decop import DecopScoreRow, add_decop_scores
from db.runs import JudgeIdentity, import_generations, save_judgments
from tests.process_cache import copy_database, scratch_folder

MODEL = "illustrative (written for the demo)"
DEFAULT_KINDS = ("literal", "nonliteral", "qa", "notice")
WINDOW_CHARS = 400
REFUSAL = re.compile(r"^\s*(I'm sorry|I am sorry|Sorry|I can't|I cannot|I won't)", re.I)


def literal_scores(output: str, reference: str) -> list[Score]:
    """rougeL-like: the share of the reference covered by shared runs of >= 12 chars,
    with the runs as spans (output offsets) and their reference offsets."""
    matcher = difflib.SequenceMatcher(None, output, reference, autojunk=False)
    blocks = [b for b in matcher.get_matching_blocks() if b.size >= 12]
    value = round(min(1.0, sum(b.size for b in blocks) / max(len(reference), 1)), 4)
    spans = tuple(Span(b.a, b.a + b.size, note="lcs") for b in blocks)
    extra = {"reference_spans": [[b.b, b.b + b.size] for b in blocks]}
    return [
        Score(
            "rougeL",
            value,
            flagged=value >= 0.8,
            threshold=0.8,
            spans=spans,
            target="literal",
            extra=extra,
        ),
        Score("rouge1", round(min(1.0, value + 0.05), 4)),
    ]


def character_score(output: str, characters: list[list[str]]) -> Score:
    verdicts, spans = [], []
    for index, aliases in enumerate(characters):
        found = []
        for alias in aliases:
            for match in re.finditer(rf"\b{re.escape(alias)}\b", output):
                found.append(Span(match.start(), match.end(), item=index, note=alias))
        verdicts.append(ItemVerdict(index, bool(found), 1.0 if found else 0.0))
        spans.extend(found)
    count = sum(v.verdict for v in verdicts)
    return Score(
        "characters",
        float(count),
        flagged=count >= 3,
        threshold=3,
        spans=tuple(sorted(spans, key=lambda s: (s.start, s.end))),
        items=tuple(verdicts),
        target="character",
    )


def windows(output: str) -> list[tuple[int, int]]:
    """Consecutive windows of about WINDOW_CHARS characters, cut at whitespace."""
    cuts, start = [], 0
    while start < len(output):
        end = min(len(output), start + WINDOW_CHARS)
        while end < len(output) and not output[end].isspace():
            end += 1
        cuts.append((start, end))
        start = end
    return cuts


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if len(w) > 3}


def event_score(output: str, events: list[str]) -> Score:
    """An event is supported by the first window holding half of its longer words."""
    verdicts, spans = [], []
    for index, event in enumerate(events):
        wanted = _words(event)
        best, support = 0.0, None
        for number, (start, end) in enumerate(windows(output)):
            share = len(wanted & _words(output[start:end])) / max(len(wanted), 1)
            best = max(best, share)
            if share >= 0.5 and support is None:
                support = Span(start, end, item=index, note=f"window {number}")
        verdicts.append(ItemVerdict(index, support is not None, round(best, 3)))
        if support is not None:
            spans.append(support)
    count = sum(v.verdict for v in verdicts)
    return Score(
        "events",
        float(count),
        flagged=count >= 5,
        threshold=5,
        spans=tuple(spans),
        items=tuple(verdicts),
        target="event",
    )


def refusal_score(output: str) -> Score:
    match = REFUSAL.match(output)
    end = output.find(".") + 1 if match else 0
    return Score(
        "refusal",
        1.0 if match else 0.0,
        flagged=bool(match),
        spans=(Span(match.start(1), end or len(output), note="refusal phrase"),) if match else (),
        target="refusal",
    )


def qa_score(output: str, reference: str) -> Score:
    got, want = _words(output), _words(reference) or {reference.lower()}
    common = len(got & want)
    f1 = 0.0 if not common else 2 * common / (len(got) + len(want))
    return Score("qa_f1", round(f1, 4))


def _identity(name: str) -> JudgeIdentity:
    return JudgeIdentity(name, "test", {"written_for": "screen tests"}, f"test-{name}")


def score_run(store: Store, run: str, kind: str) -> None:
    rows = store.query(
        "SELECT g.id, g.output, c.payload FROM generations g JOIN runs r ON r.id = g.run_id "
        "JOIN cases c ON c.id = g.case_pk WHERE r.name = ? ORDER BY g.id",
        (run,),
    )
    import json

    by_judge: dict[str, list[tuple[int, list[Score]]]] = {}
    for row in rows:
        payload = json.loads(row["payload"])
        output = row["output"]
        if kind == "literal":
            by_judge.setdefault("literal", []).append(
                (row["id"], literal_scores(output, payload["reference"]))
            )
        if kind == "nonliteral":
            by_judge.setdefault("characters", []).append(
                (row["id"], [character_score(output, payload["reference_characters"])])
            )
            by_judge.setdefault("events", []).append(
                (row["id"], [event_score(output, payload["reference_events"])])
            )
        if kind == "qa":
            by_judge.setdefault("qa", []).append(
                (row["id"], [qa_score(output, payload["reference"])])
            )
        if kind == "notice":  # ROUGE, LCS and copied spans; no embedding model here
            from copyaudit.studies.notice.judge import NoticeJudge
            from copyaudit.types import JudgeInput

            item = JudgeInput(kind="notice", payload=payload, prompt="", output=output)
            by_judge.setdefault("notice", []).append((row["id"], NoticeJudge().judge([item])[0]))
        by_judge.setdefault("refusal", []).append((row["id"], [refusal_score(output)]))
    for judge, results in by_judge.items():
        save_judgments(store, _identity(judge), results)


def add_decop_run(store: Store) -> None:
    """A DE-COP run with fabricated but deterministic letter probabilities: the answer gets
    more probability on suspect works than on clean ones."""
    from db.runs import RunSpec, create_or_resume_run, set_run_status

    run_id = create_or_resume_run(
        store, RunSpec(name="decop-demo", suite="decop", backend="hf", model="tiny", templates=())
    )
    rows = store.query(
        "SELECT c.id, w.membership FROM cases c JOIN suites s ON s.id = c.suite_id "
        "JOIN works w ON w.id = c.work_id WHERE s.name = 'decop' ORDER BY c.id"
    )
    scores = []
    for number, row in enumerate(rows):
        strength = (0.55 if row["membership"] == "suspect" else 0.25) + 0.01 * (number % 5)
        probs, answers = [], []
        for order in range(24):
            answer = order % 4
            rest = (1 - strength) / 3
            probs.append([strength if letter == answer else rest for letter in range(4)])
            answers.append(answer)
        scores.append(DecopScoreRow(int(row["id"]), probs, answers))
    add_decop_scores(store, run_id, scores)
    set_run_status(store, run_id, "done")


def build_demo_like_db(path: Path, kinds: tuple[str, ...] = DEFAULT_KINDS) -> None:
    root = samples_dir()
    with Store(path) as store:
        for kind in (*kinds, "decop"):
            file = root / (f"{kind}.csv" if kind == "decop" else f"{kind}.jsonl")
            import_cases(store, kind, kind, load_cases(kind, file), source=file.name)
            generations = root / "generations" / f"{kind}.jsonl"
            if kind == "decop" or not generations.is_file():
                continue
            run = f"demo-{kind}"
            import_generations(
                store,
                run=run,
                suite=kind,
                model=MODEL,
                rows=load_generations(generations),
                source=generations.name,
            )
            score_run(store, run, kind)
        add_decop_run(store)


_TEMPLATES: dict[tuple[str, ...], Path] = {}  # built once per test process


def copy_demo_like_db(path: Path, kinds: tuple[str, ...] = DEFAULT_KINDS) -> Path:
    """What `build_demo_like_db(path, kinds)` builds, as a copy of a template built once
    per test process (no test opens a template), so each test may write to its copy."""
    kinds = tuple(kinds)
    if kinds not in _TEMPLATES:
        folder = scratch_folder("demo-template")
        build_demo_like_db(folder / "demo.db", kinds)
        _TEMPLATES[kinds] = folder / "demo.db"
    return copy_database(_TEMPLATES[kinds], path)


def evidence_summary(path: Path) -> dict[str, Any]:
    with Store(path) as store:
        rows = store.query(
            "SELECT metric, SUM(flagged) AS flagged, COUNT(*) AS n FROM judgments GROUP BY metric"
        )
    return {r["metric"]: (r["flagged"], r["n"]) for r in rows}


def test_fixture_holds_every_kind_of_evidence(tmp_path: Path) -> None:
    path = copy_demo_like_db(tmp_path / "demo.db")
    summary = evidence_summary(path)
    # literal copying flagged and not flagged, events and characters found, refusals
    assert summary["rougeL"][0] >= 1 and summary["rougeL"][0] < summary["rougeL"][1]
    assert summary["events"][0] >= 1
    assert summary["characters"][0] >= 1
    assert summary["refusal"][0] >= 1
    assert summary["qa_f1"][1] == 17


# --- helpers for the pilot tests --------------------------------------------------------


async def settle(pilot: Any) -> None:
    """Let pending messages and every worker finish (not for tests with a run going)."""
    for _ in range(3):
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def wait_until(pilot: Any, condition: Any, timeout: float = 10.0) -> None:
    """Pause until `condition()` holds; fail after `timeout` seconds."""
    import asyncio
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        await pilot.pause()
        await asyncio.sleep(0.02)


def cell_texts(table: Any, row_key: str) -> list[str]:
    return [str(cell) for cell in table.get_row(row_key)]


def generation_id(path: Path, run: str, case_id: str, template: int = 1) -> int:
    with Store(path) as store:
        return int(
            store.scalar(
                "SELECT g.id FROM generations g JOIN runs r ON r.id = g.run_id "
                "JOIN cases c ON c.id = g.case_pk WHERE r.name = ? AND c.case_id = ? "
                "AND g.template = ?",
                (run, case_id, template),
            )
        )

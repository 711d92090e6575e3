"""Golden pins: `report --format json` for a run of every kind and `agreement --format json`
on the demo database, compared with files kept in tests/golden/.

These pin every reported number while the code is reorganised: a refactor that changes a
figure fails here. The database is the real demo (the offline judges on the bundled samples)
plus a DE-COP run with fabricated letter probabilities and labels by two annotators written
below. To accept a deliberate change of figures, regenerate with

    COPYAUDIT_UPDATE_GOLDEN=1 pytest tests/test_golden_reports.py

and read the diff before committing it. Floats are compared to FLOAT_TOLERANCE
(relative): the embedding judges compute in float32, and their means moved by up to
4e-7 (relative) between the machine that wrote these files and an AMD EPYC (their
kernels sum in other orders); a changed count, label or formula moves a figure by far
more.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from copyaudit.cli.main import main
from copyaudit.engine.demo import build_demo
from db import Store
from tests.test_screens_data import add_decop_run

GOLDEN = Path(__file__).parent / "golden"
RUNS = ("demo-literal", "demo-nonliteral", "demo-qa", "demo-notice", "decop-demo")
UPDATE = os.environ.get("COPYAUDIT_UPDATE_GOLDEN") == "1"
ANNOTATORS = ("ana", "ben")
FLOAT_TOLERANCE = 1e-5  # relative; float32's own precision is ~6e-8


def _label(annotator: str, generation: int, target: str, index: int) -> str:
    """A deterministic label: mostly yes on even items, with the second annotator
    disagreeing on every fifth item so agreement is neither 0 nor 1."""
    base = "yes" if (generation * 3 + index) % 2 == 0 else "no"
    if annotator == "ben" and (generation + index) % 5 == 0:
        return "no" if base == "yes" else "yes"
    if (generation + index) % 11 == 0:
        return "unsure"
    return base


def _label_records(store: Store) -> list[dict[str, Any]]:
    """Event, character and refusal labels on the nonliteral run, refusal and content labels
    on the notice run; the items come from the cases, so the file uses our own text only."""
    rows = store.query(
        "SELECT r.name AS run, c.case_id, g.template, g.id, c.payload FROM generations g "
        "JOIN runs r ON r.id = g.run_id JOIN cases c ON c.id = g.case_pk "
        "WHERE r.name IN ('demo-nonliteral', 'demo-notice') ORDER BY g.id"
    )
    records = []
    for number, row in enumerate(rows):
        payload = json.loads(row["payload"])
        key = f"{row['run']}/{row['case_id']}/{row['template']}"
        items: list[tuple[str, int]] = [("refusal", 0)]
        if row["run"] == "demo-nonliteral":
            items += [("event", i) for i in range(len(payload["reference_events"]))]
            items += [("character", i) for i in range(len(payload["reference_characters"]))]
        for annotator in ANNOTATORS:
            for target, index in items:
                records.append(
                    {
                        "annotator": annotator,
                        "generation": key,
                        "target": target,
                        "index": index,
                        "label": _label(annotator, number, target, index),
                    }
                )
    return records


@pytest.fixture(scope="module")
def golden_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("golden")
    path = root / "demo.db"
    with Store(path) as store:
        build_demo(store, runs=("demo",))  # the pins hold the illustrative runs only
        add_decop_run(store)
        records = _label_records(store)
    labels = root / "labels.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert _cli(path, "import-labels", str(labels))[0] == 0
    return path


def _cli(db: Path, *args: str) -> tuple[int, str]:
    import contextlib
    import io

    out = io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out):
        try:
            main(["--db", str(db), *args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue()


def _close(want: Any, got: Any, where: str) -> list[str]:
    """Differences between two JSON values, floats to FLOAT_TOLERANCE relative."""
    if isinstance(want, float) and isinstance(got, int | float) and not isinstance(got, bool):
        if math.isclose(want, got, rel_tol=FLOAT_TOLERANCE, abs_tol=1e-12) or (
            math.isnan(want) and math.isnan(got)
        ):
            return []
        return [f"{where}: {want!r} != {got!r}"]
    if isinstance(want, dict) and isinstance(got, dict):
        if set(want) != set(got):
            return [f"{where}: keys {sorted(set(want) ^ set(got))} differ"]
        return [d for k in want for d in _close(want[k], got[k], f"{where}.{k}")]
    if isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            return [f"{where}: length {len(want)} != {len(got)}"]
        return [
            d
            for i, (a, b) in enumerate(zip(want, got, strict=True))
            for d in _close(a, b, f"{where}[{i}]")
        ]
    return [] if want == got and type(want) is type(got) else [f"{where}: {want!r} != {got!r}"]


def _check(name: str, text: str) -> None:
    got = json.loads(text)
    # the embedded audit anchor holds a time and random ids, not figures (tests/test_tamper.py)
    got.pop("anchor", None)
    file = GOLDEN / f"{name}.json"
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        file.write_text(json.dumps(got, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    want = json.loads(file.read_text(encoding="utf-8"))
    differences = _close(want, got, name)
    assert not differences, "\n".join(differences[:20])


@pytest.mark.slow
@pytest.mark.parametrize("run", RUNS)
def test_report_json_is_pinned(golden_db: Path, run: str) -> None:
    code, out = _cli(golden_db, "report", run, "--format", "json")
    assert code == 0
    _check(f"report-{run}", out)


@pytest.mark.slow
def test_agreement_json_is_pinned(golden_db: Path) -> None:
    code, out = _cli(golden_db, "agreement", "--format", "json", "--resamples", "200")
    assert code == 0
    _check("agreement", out)


def test_float_comparison_catches_a_changed_figure() -> None:
    assert _close({"a": [0.5, 1]}, {"a": [0.5, 1]}, "x") == []
    assert _close({"a": 0.5}, {"a": 0.50001}, "x") == ["x.a: 0.5 != 0.50001"]
    assert _close({"a": 0.5}, {"a": 0.5000001}, "x") == []  # float32's last bits
    assert _close({"a": 1}, {"a": 1.0}, "x") == ["x.a: 1 != 1.0"]
    assert _close({"a": None}, {"b": None}, "x") == ["x: keys ['a', 'b'] differ"]

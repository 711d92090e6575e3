"""`compare` gives the trace figures per run (issue 38): the reproduction rate (SRR)
overall and by kind of work, and their ratio (CDR), each the run report's own figure;
a run the trace judge did not judge has no row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import write_jsonl
from tests.factories import literal_record

PROTECTED = " ".join(f"p{n}word" for n in range(200)) + "."
PUBLIC = " ".join(f"d{n}word" for n in range(200)) + "."


@pytest.fixture
def traced_runs(cli, tmp_path: Path) -> None:
    """Run "a" (model m1), trace-judged: copies of the protected work in 2 of its 4
    outputs, of the public-domain one in 1; run "b" (model m2) not trace-judged."""
    for name, text, status in (("prot", PROTECTED, "protected"), ("pd", PUBLIC, "public-domain")):
        (tmp_path / f"{name}.txt").write_text(text, encoding="utf-8")
        added = cli("library", "add", str(tmp_path / f"{name}.txt"), "--status", status)
        assert added.code == 0, added.err
    cases = write_jsonl(tmp_path / "c.jsonl", [literal_record(i) for i in range(1, 5)])
    assert cli("import", "literal", str(cases)).code == 0
    outputs = [PROTECTED[:400], PUBLIC[100:400], PROTECTED[500:900], "nothing copied here"]
    for run, model in (("a", "m1"), ("b", "m2")):
        rows = [{"case_id": f"lit-{i + 1}", "output": o} for i, o in enumerate(outputs)]
        gens = write_jsonl(tmp_path / f"{run}.jsonl", rows)
        imported = cli(
            "import-generations", str(gens), "--run", run, "--suite", "c", "--model", model
        )
        assert imported.code == 0, imported.err
    assert cli("judge", "a", "--judges", "trace").code == 0
    assert cli("judge", "b", "--judges", "literal").code == 0


def test_compare_gives_each_traced_runs_srr_by_kind_of_work_and_cdr(traced_runs, cli) -> None:
    comparison = json.loads(cli("compare", "--format", "json").out)
    (row,) = comparison["trace"]  # run b was not trace-judged
    report = json.loads(cli("report", "a", "--format", "json").out)["trace"]
    assert (row["run"], row["model"], row["n"], row["flagged"]) == ("a", "m1", 4, 3)
    assert row["srr"] == report["rate"] == pytest.approx(0.75)
    assert row["srr_by_status"] == report["srr"]
    assert row["srr_by_status"] == pytest.approx({"protected": 0.5, "public-domain": 0.25})
    assert row["cdr"] == report["cdr"] == pytest.approx(2.0)
    low, high = row["interval"]
    assert low < 0.75 < high
    md = cli("compare").out
    assert "## Traced to the library" in md
    assert "| a | m1 | c | 4 | 75.0% [" in md
    assert "| 50.0% (2) | 25.0% (1) | 0.0% (0) | 2.00 |" in md
    html = cli("compare", "--format", "html").out
    assert "Traced to the library" in html and "<td>2.00</td>" in html

"""The cases' own sources are in the library automatically (issue 38): `judge RUN --judges
trace` registers the reference texts of the run's cases that the library lacks (source
'case SUITE/ID', status unknown), rebuilds the index, says so, and traces to them; a
library named by --trace-library is left as it is."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import write_jsonl
from tests.factories import literal_record
from tests.test_tracing import _works


def _traced_run(cli, tmp_path: Path) -> tuple[str, str]:
    """A literal suite `s` of two cases and a run `r` whose output copies the second
    case's reference; (first reference, second reference)."""
    works = _works()
    emma, moby = works[0].text[:700], works[1].text[:900]
    cases = [
        literal_record(1, id="e1", title="Emma", author="Jane Austen", reference=emma),
        literal_record(2, id="m1", title="Moby Dick", author=None, reference=moby),
    ]
    assert cli("import", "literal", str(write_jsonl(tmp_path / "s.jsonl", cases))).code == 0
    gens = [{"case_id": "m1", "output": "Well: " + moby[100:600]}]
    g = write_jsonl(tmp_path / "g.jsonl", gens)
    assert cli("import-generations", str(g), "--run", "r", "--suite", "s").code == 0
    return emma, moby


def _spans(cli) -> list[dict]:
    rows = [json.loads(x) for x in cli("export", "judgments", "--run", "r").out.splitlines()]
    traced = next(r for r in rows if r["metric"] == "longest_traced_chars")
    return traced["evidence"]["extra"]["spans"]


def test_judging_with_trace_adds_the_cases_sources_first(cli, tmp_path: Path) -> None:
    _traced_run(cli, tmp_path)
    assert cli("library", "list").out == ""  # nothing registered by hand
    judged = cli("judge", "r", "--judges", "trace")
    assert judged.code == 0, judged.err
    assert (
        "library: 2 sources of suite s's cases added (source 'case s/ID', status unknown), "
        "0 in it already; indexed 2 works" in judged.out
    )
    listed = cli("library", "list").out.splitlines()
    assert [line.split(" | ")[0] for line in listed] == ["Emma", "Moby Dick"]
    assert [line.split(" | ")[-1] for line in listed] == ["case s/e1", "case s/m1"]
    assert all(" | unknown | " in line for line in listed)
    (span,) = _spans(cli)
    assert span["places"][0]["work"] == "Moby Dick" and span["places"][0]["status"] == "unknown"
    again = cli("judge", "r", "--judges", "trace", "--rejudge")
    assert "library: the 2 sources of suite s's cases are in it" in again.out
    assert len(cli("library", "list").out.splitlines()) == 2


def test_a_source_registered_by_hand_keeps_its_record(cli, tmp_path: Path) -> None:
    _, moby = _traced_run(cli, tmp_path)
    (tmp_path / "moby.txt").write_text(moby, encoding="utf-8")
    added = cli("library", "add", str(tmp_path / "moby.txt"), "--title", "Moby-Dick; or, The Whale",
                "--status", "public-domain")  # fmt: skip
    assert added.code == 0, added.err
    judged = cli("judge", "r", "--judges", "trace")
    assert "1 sources of suite s's cases added" in judged.out and "1 in it already" in judged.out
    (span,) = _spans(cli)
    assert span["places"][0]["work"] == "Moby-Dick; or, The Whale"
    assert span["places"][0]["status"] == "public-domain"


def test_a_library_named_by_trace_library_is_left_alone(cli, tmp_path: Path, db_path: Path) -> None:
    _traced_run(cli, tmp_path)
    elsewhere = tmp_path / "elsewhere"
    judged = cli("judge", "r", "--judges", "trace", "--trace-library", str(elsewhere))
    assert f"library: {elsewhere} is not this database's: no source added" in judged.out
    assert "skipped judge trace" in judged.err  # no index there
    assert cli("library", "list").out == ""
    assert not Path(f"{db_path}.library").exists()

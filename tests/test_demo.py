"""`copyaudit demo` builds the demo database from the bundled samples, idempotently."""

from __future__ import annotations

import json
from pathlib import Path

from copyaudit.engine.demo import sample_cases, samples_dir
from tests.conftest import database_fingerprint


def test_samples_cover_every_kind_and_have_provenance() -> None:
    root = samples_dir()
    readme = (root / "README.md").read_text(encoding="utf-8")
    for filename, _ in sample_cases():
        assert (root / filename).is_file(), filename
        assert filename in readme, f"samples/README.md does not describe {filename}"


JUDGES = "literal,characters,qa,verbatim,extraction"


def test_demo_builds_judged_database_idempotently(cli, tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    first = cli("demo", "--no-tui", "--no-pz-map", "--judges", JUDGES, db=db)
    assert first.code == 0, first.err
    suites = {s["name"]: s for s in json.loads(cli("suites", "--format", "json", db=db).out)}
    assert set(suites) == {Path(file).stem for file, _ in sample_cases()}  # one per kind
    assert suites["nonliteral"]["cases"] >= 20
    assert all(s["works"] >= 3 for s in suites.values())
    runs = {r["name"]: r for r in json.loads(cli("runs", "--format", "json", db=db).out)}
    assert {"demo-literal", "demo-nonliteral", "demo-qa"} <= set(runs)
    # two models over the same suites, for `compare`: the illustrative outputs and the
    # embedded model's (generated once with `copyaudit run`, shipped in samples/)
    embedded = sorted(n for n in runs if n.startswith("embedded-"))
    assert embedded and all(
        runs[n]["model"] == "SmolLM2-135M-Instruct (embedded)" for n in embedded
    )
    for name in embedded:
        twin = runs[name.replace("embedded-", "demo-")]
        assert runs[name]["suite"] == twin["suite"] and twin["model"] != runs[name]["model"]
        assert runs[name]["generations"] == runs[name]["total"] > 0
    literal = json.loads(cli("report", "demo-literal", "--format", "json", db=db).out)
    # The illustrative literal outputs include verbatim copies and clean outputs.
    assert 0 < literal["literal_rate"] < 1
    nonliteral = json.loads(cli("report", "demo-nonliteral", "--format", "json", db=db).out)
    assert 0 < nonliteral["character_rate"] < 1
    # the extraction study: some illustrative outputs extracted, some not; the
    # longest verbatim run in every literal-style run
    extraction = json.loads(cli("report", "demo-extraction", "--format", "json", db=db).out)
    assert 0 < extraction["extraction"]["lcp_tokens"]["rate"] < 1
    assert 0 < extraction["verbatim"]["rate"] < 1 and 0 < literal["verbatim"]["rate"] < 1
    # the literal run traced to a library of the samples' works (public domain), so a
    # newcomer sees a trace: some outputs copy 160 characters or more of a work, some not
    works = cli("library", "list", db=db).out.splitlines()
    assert len(works) == 4 and all(" | public-domain | " in w for w in works)
    assert 0 < literal["trace"]["rate"] < 1
    assert literal["trace"]["srr"] == {"public-domain": literal["trace"]["rate"]}
    before = database_fingerprint(db)
    again = cli("demo", "--no-tui", "--no-pz-map", "--judges", JUDGES, db=db)
    assert again.code == 0 and "already up to date" in again.out
    assert database_fingerprint(db) == before


def test_decop_samples_have_suspect_and_clean_works_with_ten_passages() -> None:
    from collections import Counter

    from copyaudit.formats import load_cases

    cases = [c.case for c in load_cases("decop", samples_dir() / "decop.csv")]
    per_work = Counter((c.work.title, c.work.membership) for c in cases)
    assert {m for _, m in per_work} == {"suspect", "clean"}
    assert len(per_work) >= 3 and min(per_work.values()) >= 10

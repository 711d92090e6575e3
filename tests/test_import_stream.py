"""Streaming imports: the same rows as the whole-file importers, written chunk by chunk
inside one transaction, so a file rejected late leaves the database unchanged."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from copyaudit.errors import InputError
from copyaudit.formats import read_cases
from copyaudit.records import LocatedCase
from db.cases import CHUNK_ROWS, import_cases
from db.connection import Store
from db.runs import RunSpec
from tests import import_scenario
from tests.conftest import database_fingerprint, write_jsonl
from tests.import_scenario import case_record

# printed by `python -m tests.import_scenario` on c79a38e (the whole-file importers)
WHOLE_FILE_ROWS = {
    "suites": "2 91816c66225a79d1",
    "works": "37 7a360bb5fae078d3",
    "cases": "10604 e0d080f19cb764f9",
    "runs": "3 47aa33902c24f76d",
    "generations": "10127 0afa377de7c44e00",
    "skipped_rows": "4 3a00b2f0210d72c1",
}
# the same outputs plus import-generations' "RUN: not judged yet: copyaudit judge RUN"
# hints (4 lines; without them the digest is c79a38e's 5e513e84c665e032)
WHOLE_FILE_OUTPUTS = "3daec58e490bead6"


def test_streamed_imports_leave_the_rows_the_whole_file_importers_left(tmp_path: Path) -> None:
    assert import_scenario.N > 2 * CHUNK_ROWS
    outputs = import_scenario.session_copy(tmp_path)  # shared with test_bulk_writes
    assert import_scenario.rows_digest(tmp_path / "audit.db") == WHOLE_FILE_ROWS
    assert import_scenario.outputs_digest(outputs) == WHOLE_FILE_OUTPUTS


N = 2 * CHUNK_ROWS + 3


@pytest.fixture
def seeded(tmp_path: Path, cli) -> Path:
    """A database holding one suite already (what a failed import must not change)."""
    path = write_jsonl(tmp_path / "first.jsonl", [case_record(i) for i in range(20)])
    assert cli("import", "literal", str(path), "--suite", "s").code == 0
    return path


def _late_failures() -> dict[str, tuple[int, str]]:
    """A bad record after two chunks were written: (its line, what it breaks)."""
    return {"malformed": (N, "malformed"), "field": (N - 1, "input"), "duplicate": (N, "dup")}


@pytest.mark.parametrize("fault", sorted(_late_failures()))
@pytest.mark.parametrize("suite", ["s", "new"])
def test_a_file_rejected_past_two_chunks_leaves_the_database_unchanged(
    tmp_path: Path, cli, db_path: Path, seeded: Path, fault: str, suite: str
) -> None:
    records = [json.dumps(case_record(i)) for i in range(20, 20 + N)]
    line, what = _late_failures()[fault]
    if what == "malformed":
        records[line - 1] = records[line - 1][:-5]
    elif what == "input":
        records[line - 1] = json.dumps({**case_record(1), "id": "x", "input": 3})
    else:
        records[line - 1] = json.dumps(case_record(25))
    path = tmp_path / "late.jsonl"
    path.write_text("\n".join(records) + "\n", encoding="utf-8")
    before = database_fingerprint(db_path)
    result = cli("import", "literal", str(path), "--suite", suite)
    assert result.code == 2
    assert f"late.jsonl: line {line}: field" in result.err or f"line {line}:" in result.err
    assert database_fingerprint(db_path) == before


def test_a_conflict_is_reported_after_the_file_s_unusable_records(
    tmp_path: Path, cli, db_path: Path, seeded: Path
) -> None:
    """A changed case early and a bad record late: the bad record is reported (as the
    whole-file importer did, which checked the file before writing)."""
    records = [case_record(0, changed=True)] + [case_record(i) for i in range(20, 20 + N)]
    records[-1]["year"] = "late"
    path = write_jsonl(tmp_path / "both.jsonl", records)
    before = database_fingerprint(db_path)
    result = cli("import", "literal", str(path), "--suite", "s")
    assert result.code == 2
    assert f"line {len(records)}: field 'year'" in result.err
    assert "already exists" not in result.err
    assert database_fingerprint(db_path) == before


def test_import_cases_writes_chunks_as_it_reads_and_rolls_them_back(db_path: Path) -> None:
    """The importer writes a chunk before reading the next (constant memory), and an
    error the stream raises later undoes every chunk."""
    seen_in_db: list[int] = []
    with Store(db_path) as store:

        def cases() -> Iterator[LocatedCase]:
            loaded = read_cases("literal", _file(db_path.parent, 3 * CHUNK_ROWS))
            for n, located in enumerate(loaded.accepted(), start=1):
                if n % CHUNK_ROWS == 1 and n > 1:
                    seen_in_db.append(int(store.scalar("SELECT COUNT(*) FROM cases")))
                yield located
            raise InputError("late.jsonl", 3 * CHUNK_ROWS + 1, None, "found late")

        with pytest.raises(InputError, match="found late"):
            import_cases(store, "s", "literal", cases(), source="late.jsonl")
        assert seen_in_db == [CHUNK_ROWS, 2 * CHUNK_ROWS]
        assert store.scalar("SELECT COUNT(*) FROM cases") == 0
        assert store.scalar("SELECT COUNT(*) FROM suites") == 0


def _file(root: Path, n: int) -> Path:
    return write_jsonl(root / "cases.jsonl", [case_record(i) for i in range(n)])


def test_a_small_bad_file_is_rejected_before_the_database_is_created(
    tmp_path: Path, cli, db_path: Path
) -> None:
    records = [case_record(i) for i in range(5)]
    records[4]["input"] = ""
    result = cli("import", "literal", str(write_jsonl(tmp_path / "bad.jsonl", records)))
    assert result.code == 2 and "line 5: field 'input'" in result.err
    assert not db_path.exists()


@pytest.mark.parametrize(
    "last, message",
    [
        ({"case_id": "nowhere"}, "no case 'nowhere' in suite 's'"),
        ({"model": "b"}, "one model per file"),
        ({"template": 0}, "field 'template'"),
    ],
)
def test_generations_rejected_past_two_chunks_leave_the_database_unchanged(
    tmp_path: Path, cli, db_path: Path, seeded: Path, last: dict, message: str
) -> None:
    rows: list[dict] = [{"case_id": f"lit-{i % 20}", "template": 1 + i // 20, "output": "o"}
                        for i in range(N)]  # fmt: skip
    rows[0]["model"] = "a"
    rows[-1].update(last)
    path = write_jsonl(tmp_path / "gens.jsonl", rows)
    before = database_fingerprint(db_path)
    result = cli("import-generations", str(path), "--run", "r", "--suite", "s")
    assert result.code == 2
    assert f"line {N}" in result.err and message in result.err
    assert database_fingerprint(db_path) == before


def test_a_model_named_only_past_the_first_chunk_is_the_run_s_model(
    tmp_path: Path, cli, db_path: Path, seeded: Path
) -> None:
    """The run is created before its rows are read; its model (and configuration hash)
    are those of a run created knowing the model."""
    rows = [{"case_id": f"lit-{i % 20}", "template": 1 + i // 20, "output": "o"} for i in range(N)]
    rows[-1]["model"] = "late-model"
    path = write_jsonl(tmp_path / "gens.jsonl", rows)
    assert cli("import-generations", str(path), "--run", "r", "--suite", "s").code == 0
    short = write_jsonl(tmp_path / "short.jsonl", rows[:1])
    assert cli("import-generations", str(short), "--run", "r2", "--suite", "s",
               "--model", "late-model").code == 0  # fmt: skip
    with Store(db_path) as store:
        got = {r["name"]: (r["model"], r["config_hash"]) for r in store.query(
            "SELECT name, model, config_hash FROM runs")}  # fmt: skip
        assert store.scalar("SELECT COUNT(*) FROM generations") == N + 1
    assert got["r"][0] == "late-model"
    for run in ("r", "r2"):
        spec = RunSpec(name=run, suite="s", backend="imported", model="late-model", templates=())
        assert got[run][1] == spec.config_hash()


def test_warnings_of_a_streamed_file_count_every_record_and_follow_the_import(
    tmp_path: Path, cli, db_path: Path
) -> None:
    """A file longer than the read-ahead: its unknown-field warnings are known only at
    its end, so the command prints them after the import, counting the late records."""
    records = [case_record(i) for i in range(N)]
    for i in (0, N - 2, N - 1):
        records[i]["autor"] = "Ada Lowe"
    records[N - 1]["late_typo"] = 1
    path = write_jsonl(tmp_path / "c.jsonl", records)
    result = cli("import", "literal", str(path), "--suite", "s")
    assert result.code == 0, result.err
    assert f"{N} added" in result.out
    assert result.err.splitlines() == [
        f"warning: {path}: line 1: field 'autor': unknown field, ignored (and in 2 more records)",
        f"warning: {path}: line {N}: field 'late_typo': unknown field, ignored",
        f"search index: {N:,} cases not indexed yet (search scans them); the app indexes them "
        "in the background, or run: copyaudit search-index",
    ]
    gens = [{"case_id": f"lit-{i % N}", "output": "o"} for i in range(N)]
    gens[-1]["modle"] = "typo"
    gens_path = write_jsonl(tmp_path / "g.jsonl", gens)
    result = cli("import-generations", str(gens_path), "--run", "r", "--suite", "s")
    assert result.code == 0, result.err
    assert result.err.splitlines() == [
        f"warning: {gens_path}: line {N}: field 'modle': unknown field, ignored",
        "r: not judged yet: copyaudit judge r",
        f"search index: {N:,} generations and {N:,} cases not indexed yet (search scans "
        "them); the app indexes them in the background, or run: copyaudit search-index",
    ]

"""Text holding line separators other than "\\n" (U+2028, U+2029, U+0085, form feed) is
written raw by the exporters and must read back as one record: JSON Lines ends a line
at "\\n" only. Every JSONL exporter's output imports back unchanged."""

from __future__ import annotations

from pathlib import Path

from db import Store
from tests.conftest import database_fingerprint, write_jsonl
from tests.factories import literal_record
from tests.label_fixtures import label, make_run
from tests.test_labels_io import state

SEPARATORS = "one\u2028two\u2029three\u0085four\x0cfive"


def test_exported_cases_with_unicode_line_separators_import_back_unchanged(
    tmp_path: Path, cli, db_path: Path
) -> None:
    records = [literal_record(1, input=f"prefix {SEPARATORS}", reference=SEPARATORS)]
    assert cli("import", "literal", str(write_jsonl(tmp_path / "in.jsonl", records))).code == 0
    exported = tmp_path / "cases.jsonl"
    assert cli("export", "cases", "-o", str(exported)).code == 0
    before = database_fingerprint(db_path)
    again = cli("import", "literal", str(exported), "--suite", "in")
    assert again.code == 0, again.err
    assert "0 added, 1 unchanged" in again.out
    assert database_fingerprint(db_path) == before


def test_exported_labels_with_unicode_line_separators_import_back(
    tmp_path: Path, cli, db_path: Path
) -> None:
    make_run(cli, tmp_path, "nonliteral", ["nl-1"])
    with Store(db_path) as store:
        label(store, "r/nl-1/1", "ann", "event", 0, "yes", note=SEPARATORS)
    exported = tmp_path / "labels.jsonl"
    assert cli("export", "labels", "-o", str(exported)).code == 0
    fresh = tmp_path / "fresh.db"
    make_run(cli, tmp_path, "nonliteral", ["nl-1"], db=fresh)
    result = cli("import-labels", str(exported), db=fresh)
    assert result.code == 0, result.err
    assert state(fresh) == state(db_path) == {("ann", "r/nl-1/1", "event", 0, "yes", SEPARATORS)}

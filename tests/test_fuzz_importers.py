"""Every importer fuzzed with broken files (tests/fuzz_inputs.py): whatever the file,
the command exits 0 or 2, never 1; prints no traceback; and a rejected file leaves the
database exactly as it was (every row compared through SQLite)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_inputs import IMPORTERS, broken_file, build_base_db, try_importer

MAX_EXAMPLES = 40  # per importer: the suite stays fast; tests/bench/fuzz_census.py runs more


@pytest.fixture(scope="module")
def base_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_base_db(tmp_path_factory.mktemp("fuzz") / "base.db")


@pytest.mark.parametrize("name", IMPORTERS)
def test_importer_never_crashes_on_a_broken_file(name: str, base_db: Path) -> None:
    importer = IMPORTERS[name]

    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        content = broken_file(importer, data, base_db)
        with tempfile.TemporaryDirectory() as folder:
            outcome = try_importer(importer, base_db, content, Path(folder))
        assert not outcome.problems(), (outcome.problems(), outcome.code, outcome.err[-2000:])

    check()

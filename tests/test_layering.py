"""Layering guards: SQL lives only in db/, db builds on the foundation modules only, and
start-up loads no heavy library."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE_DB = ("copyaudit", "screens")  # packages that must reach the store through db/

# The start of an SQL statement (uppercase keywords, as every query of db/ is written).
SQL_START = re.compile(
    r"^\s*(?:"
    r"SELECT\b.*\bFROM\b"
    r"|INSERT\s+(?:OR\s+\w+\s+)?INTO\b"
    r"|UPDATE\s+\w+\s+SET\b"
    r"|DELETE\s+FROM\b"
    r"|CREATE\s+(?:UNIQUE\s+)?(?:TABLE|INDEX|TRIGGER)\b"
    r"|PRAGMA\s+\w+"
    r"|WITH\s+(?:RECURSIVE\s+)?\w+\s+AS\b"
    r")",
    re.DOTALL,
)

# The modules below every layer: db may import these of copyaudit, nothing else of it.
FOUNDATION = frozenset(
    f"copyaudit.{name}"
    for name in (
        *("errors", "types", "hashing", "items", "rows", "mentions", "vocabulary"),
        *("generation_keys", "endpoint_url"),  # what a key and an endpoint address may be
    )
)

HEAVY = ("torch", "transformers", "scipy", "matplotlib", "spacy")
START_UP = ("copyaudit.cli.main", "screens.app", "copyaudit.engine.runner")


def sql_strings(source: str, filename: str) -> list[tuple[int, str]]:
    """(line, start of the string) for every string constant of `source` that starts an
    SQL statement (f-string pieces included)."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and SQL_START.match(node.value)
        ):
            found.append((node.lineno, node.value.strip()[:60]))
    return sorted(found)


def test_sql_strings_are_found() -> None:
    """The detector sees the statement kinds it names, in plain and f-strings, and leaves
    prose alone."""
    source = (
        'a = "SELECT kind FROM suites WHERE id = ?"\n'
        'b = f"SELECT COUNT(*) FROM {t}"\n'
        'c = "PRAGMA integrity_check"\n'
        'd = ("INSERT OR REPLACE INTO t (a) "\n     "VALUES (?)")\n'
        'e = "UPDATE runs SET status = ?"\n'
        'f = "WITH live AS (SELECT 1) SELECT * FROM live"\n'
        'g = "Select the run from the list"\n'
        'h = "the SELECT ... FROM clause"\n'
    )
    assert [line for line, _ in sql_strings(source, "<test>")] == [1, 2, 3, 4, 6, 7]


def test_no_sql_outside_db() -> None:
    """Every SQL statement is written in db/: the core and the screens call its functions."""
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {text}"
        for package in OUTSIDE_DB
        for path in sorted((ROOT / package).rglob("*.py"))
        for line, text in sql_strings(path.read_text(encoding="utf-8"), str(path))
    ]
    assert offenders == [], "SQL outside db/:\n" + "\n".join(offenders)


def imported_modules(source: str, filename: str) -> list[tuple[int, str]]:
    """(line, module) of every absolute import in `source`, at any depth (inside
    functions and `if TYPE_CHECKING:` too)."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return sorted(found)


def test_db_imports_only_the_foundation() -> None:
    """The store knows no parser, judge, report, CLI or screen: of copyaudit it imports
    only the foundation modules (callers pass in what those compute)."""
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for path in sorted((ROOT / "db").rglob("*.py"))
        for line, module in imported_modules(path.read_text(encoding="utf-8"), str(path))
        if module.split(".")[0] in ("copyaudit", "screens", "textual") and module not in FOUNDATION
    ]
    assert offenders == [], "db imports above the foundation:\n" + "\n".join(offenders)


@pytest.mark.parametrize(
    "modules",
    [
        START_UP,
        # report and compare: scipy.stats alone took 0.9 of compare's 2.8 CPU s at 1M
        ("copyaudit.cli.evaluate", "copyaudit.cli.compare", "copyaudit.reports.compare.html"),
    ],
    ids=["start up", "report and compare"],
)
def test_start_up_loads_no_heavy_library(modules: tuple[str, ...]) -> None:
    """Importing the CLI, the app and the runner (or the report and compare commands)
    loads none of the heavy libraries: they are imported where a model, a statistic or
    a plot is first needed."""
    code = (
        f"import {', '.join(modules)}; import sys; "
        f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == []

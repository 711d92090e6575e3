"""The layering contracts of pyproject.toml ([tool.importlinter]) hold: the core imports no
Textual, SQLite or screens; screens import no SQLite; the store imports only the foundation;
no import cycles between sibling modules. `make lint` runs the same check."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _lint_imports(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    beside = Path(sys.executable).parent / "lint-imports"
    found = str(beside) if beside.exists() else shutil.which("lint-imports")
    assert found, "import-linter is not installed (it is in the dev extra)"
    return subprocess.run(
        [found, "--no-cache", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_import_contracts_hold() -> None:
    result = _lint_imports()
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


def test_a_broken_contract_is_reported(tmp_path: Path) -> None:
    """The same runner fails on a contract today's code breaks (the engine uses the store),
    so the test above cannot pass because nothing was checked."""
    config = tmp_path / "contracts.toml"
    config.write_text(
        '[tool.importlinter]\nroot_packages = ["copyaudit", "db"]\n\n'
        "[[tool.importlinter.contracts]]\n"
        'name = "the core never touches the store"\ntype = "forbidden"\n'
        'source_modules = ["copyaudit"]\nforbidden_modules = ["db"]\n',
        encoding="utf-8",
    )
    result = _lint_imports("--config", str(config))
    assert result.returncode != 0
    assert "the core never touches the store BROKEN" in result.stdout

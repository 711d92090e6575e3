"""Run copyaudit's CLI in a child process under a patch (Python code that ends by calling
`main`), wait until it prints the line that says it reached the awkward moment, and kill
it with SIGKILL there: nothing it has not committed may survive."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def kill_when_said(code: str, argv: list[str], said: str) -> None:
    """Run `python -c code *argv`, read its first line (it must be `said`), SIGKILL it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-c", code, *argv], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == f"{said}\n"
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL

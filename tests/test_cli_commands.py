"""The CLI's lazy command table names every command each module registers, and a command
runs without importing the other commands' modules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from copyaudit.cli.commands import COMMANDS, module_commands

ROOT = Path(__file__).resolve().parents[1]


def test_the_table_is_what_the_modules_register() -> None:
    registered = {
        name: module for module in set(COMMANDS.values()) for name in module_commands(module)
    }
    assert registered == COMMANDS


def test_help_lists_every_command(cli) -> None:
    result = cli("--help")
    assert result.code == 0
    listed = {
        line.split()[0] for line in result.out.split("Commands:")[1].splitlines() if line.strip()
    }
    assert listed == set(COMMANDS)


def test_a_command_loads_only_its_own_module(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from copyaudit.cli.main import main\n"
        f"try:\n    main(['--db', {str(tmp_path / 'x.db')!r}, 'runs', '--format', 'json'])\n"
        "except SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('copyaudit.cli.')))\n"
        "heavy = ('copyaudit.engine', 'copyaudit.judges.context', 'copyaudit.models')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    cli_modules, engine_modules = result.stdout.strip().splitlines()[-2:]
    assert "copyaudit.cli.data" in cli_modules
    assert "copyaudit.cli.evaluate" not in cli_modules and "copyaudit.cli.demo" not in cli_modules
    assert engine_modules == "[]"

"""The CLI's subcommands, one module per area; each module exposes `register(group)`.

A command's module is imported only when that command runs (or when the help lists the
commands), so `copyaudit runs` loads neither the engine nor the judges.
"""

from __future__ import annotations

import importlib

import click

# command -> its module in copyaudit.cli (tests/test_cli_commands.py holds this table equal
# to what the modules register)
COMMANDS: dict[str, str] = {
    "import": "data",
    "import-generations": "data",
    "suites": "data",
    "runs": "data",
    "export": "data",
    "demo": "demo",
    "run": "evaluate",
    "judge": "evaluate",
    "report": "evaluate",
    "verify": "audit",
    "anchor": "audit",
    "migrate": "audit",
    "keys": "keys",
    "library": "library",
    "decop": "decop",
    "agreement": "verify_labels",
    "import-labels": "verify_labels",
    "queue": "verify_labels",
    "annotator": "verify_labels",
    "review": "review",
    "dossier": "dossier",
    "merge": "merge",
    "compare": "compare",
    "takedown": "takedown",
    "serve": "serve",
    "pz": "pz",
    "search-index": "search_index",
}


def module_commands(module: str) -> dict[str, click.Command]:
    """The commands `copyaudit.cli.<module>` registers."""
    group = click.Group()
    importlib.import_module(f"copyaudit.cli.{module}").register(group)
    return dict(group.commands)


class LazyCommands(click.Group):
    """A click group that imports a command's module when the command is asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        command = super().get_command(ctx, name)
        if command is None and name in COMMANDS:
            command = module_commands(COMMANDS[name])[name]
            self.add_command(command)
        return command

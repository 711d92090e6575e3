"""CLI subcommands, one module per area; each exposes `register(group)`."""

from __future__ import annotations

import importlib

import click

MODULES = (
    "data",
    "app",
    "evaluate",
    "audit",
    "decop",
    "verify_labels",
    "review",
    "dossier",
    "merge",
)


def register_all(group: click.Group) -> None:
    for name in MODULES:
        importlib.import_module(f"copyaudit.cli.{name}").register(group)

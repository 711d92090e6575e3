"""The `copyaudit` command: a click group whose subcommands (copyaudit.cli.commands) are
imported when used.

Errors a user can act on are printed as one line on stderr with exit code 2; any
other failure is one line with exit code 1, and the traceback only with --debug.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from copyaudit import __version__
from copyaudit.cli.commands import LazyCommands
from copyaudit.cli.tui import open_app
from copyaudit.errors import UserError, environment_error
from copyaudit.sign_key import choose_key, signer
from copyaudit.untrusted import terminal_text
from db import Store
from db.signatures import use_signer

DEFAULT_DB = "copyaudit.db"
_INVOKED: dict[str, Path] = {}  # the database the command being run was given


class AppContext:
    """What every subcommand needs: where the database is, and who is working."""

    def __init__(
        self, db_path: Path, db_explicit: bool, debug: bool, read_only: bool = False
    ) -> None:
        self.db_path = db_path
        self.db_explicit = db_explicit
        self.debug = debug
        self.read_only = read_only  # --read-only: every command and the app only read
        self.annotator: str | None = None  # --annotator

    def store(self, *, read_only: bool = False) -> Store:
        """Open the database; `read_only` for a command that only reads (it then works on
        read-only media and writes nothing, db.open_modes), and for every command
        under --read-only (a write is then refused with a clear error)."""
        return Store(self.db_path, read_only=read_only or self.read_only)


@click.group(
    cls=LazyCommands,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="COPYAUDIT_DB",
    default=DEFAULT_DB,
    show_default=True,
    help="SQLite database (default: $COPYAUDIT_DB, else ./copyaudit.db).",
)
@click.option("--annotator", help="Your name, stored with every label you make in the app.")
@click.option(
    "--sign-key",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Sign your label and review events with this ed25519 private key (default: "
    "$COPYAUDIT_SIGN_KEY, else the event_sign_key setting); see `copyaudit keys`.",
)
@click.option("--debug", is_flag=True, help="Show tracebacks.")
@click.option(
    "--read-only",
    is_flag=True,
    help="Open the database read-only (evidence on read-only media): the app browses and "
    "says so, labels and runs are refused; nothing is written.",
)
@click.option(
    "--served",
    is_flag=True,
    hidden=True,
    help="The app runs for `copyaudit serve`: the annotator is --annotator, else it asks "
    "(never the name remembered on this machine).",
)
@click.version_option(__version__, prog_name="copyaudit")
@click.pass_context
def cli(
    ctx: click.Context,
    db_path: Path,
    annotator: str | None,
    sign_key: Path | None,
    debug: bool,
    read_only: bool,
    served: bool,
) -> None:
    """Audit copyright reproduction by language models.

    Without a command, opens the terminal app on the database.
    """
    source = ctx.get_parameter_source("db_path")
    explicit = source not in (None, click.core.ParameterSource.DEFAULT)
    ctx.obj = AppContext(db_path, explicit, debug, read_only)
    _INVOKED["db"] = db_path
    ctx.obj.annotator = annotator
    ctx.obj.served = served
    choose_key(sign_key)  # None: $COPYAUDIT_SIGN_KEY or the setting (no stale choice)
    use_signer(signer)
    if ctx.invoked_subcommand is None:
        open_app(ctx.obj)


def damaged_schema_error(exc: BaseException) -> UserError | None:
    """A statement that failed for a missing table or column, where the database's own
    tables lack what a new database has (db.schema_check): its schema was damaged on
    disk or changed by another tool. None otherwise (a fault of copyaudit's stays one)."""
    from db.schema_check import damaged_schema  # only when a command has failed

    path = _INVOKED.get("db")
    differences = damaged_schema(exc, path)
    if not differences:
        return None
    more = f" (and {len(differences) - 1} more)" if len(differences) > 1 else ""
    return UserError(
        f"{path}: its schema is not as copyaudit made it ({differences[0]}{more}; {exc}): "
        "damaged on disk or changed by another tool; what this command was writing, if "
        "anything, was rolled back"
    )


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args or bool(os.environ.get("COPYAUDIT_DEBUG"))
    try:
        cli.main(args=args, prog_name="copyaudit", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except UserError as exc:
        if debug:
            raise
        click.echo(terminal_text(f"copyaudit: error: {exc}"), err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except Exception as exc:  # one line for the user; the traceback with --debug
        if debug:
            raise
        if (user := environment_error(exc) or damaged_schema_error(exc)) is not None:
            click.echo(terminal_text(f"copyaudit: error: {user}"), err=True)
            sys.exit(user.exit_code)
        click.echo(
            terminal_text(
                f"copyaudit: internal error: {type(exc).__name__}: {exc} (rerun with --debug)"
            ),
            err=True,
        )
        sys.exit(1)

"""`copyaudit serve`: the app in a web browser, for reviewers who do not use a terminal.

textual-serve starts one app process per browser tab, each `copyaudit --db DB` on the
same database (SQLite in WAL mode: one writer at a time, readers never wait), with
copyaudit.cli.web_server's guard in front. This machine only, unless --public with a
token."""

from __future__ import annotations

import ipaddress
import os
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

import click

from copyaudit.errors import UserError
from copyaudit.identity import CONFIG_DIR_ENV

LOCAL_NAMES = ("localhost",)
DEFAULT_PORT = 8765
MIN_TOKEN_CHARS = 16
TOKEN_ENV = "COPYAUDIT_SERVE_TOKEN"
MAX_SESSIONS = 8  # app processes at once (each holds the app and a database connection)


def is_local(host: str) -> bool:
    """Whether `host` is a name or address of this machine only (loopback)."""
    if host in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(host: str, public: bool, token: str | None) -> None:
    """Refuse a host other than this machine without --public and a token, and a token
    too short to guess at."""
    if token is not None and len(token) < MIN_TOKEN_CHARS:
        raise UserError(f"--token: use at least {MIN_TOKEN_CHARS} characters")
    if is_local(host):
        return
    if not public:
        raise UserError(
            f"--host {host}: other machines could reach the app; pass --public and a "
            f"token (--token or ${TOKEN_ENV}) to serve beyond this machine"
        )
    if token is None:
        raise UserError(f"--public needs a token (--token or ${TOKEN_ENV})")


def local_hosts(port: int) -> list[str]:
    """The Host headers a browser on this machine sends to the local server."""
    return [f"{name}:{port}" for name in ("127.0.0.1", "localhost", "[::1]")]


def app_command(
    db_path: Path, annotator: str | None, read_only: bool, python: str = sys.executable
) -> str:
    """The shell command textual-serve runs for each tab: this copyaudit's app on the
    database, `--served` (the annotator is the one given, else each tab asks)."""
    args = [python, "-m", "copyaudit", "--db", str(db_path.resolve()), "--served"]
    if annotator:
        args += ["--annotator", annotator]
    if read_only:
        args.append("--read-only")
    return shlex.join(args)


def register(group: click.Group) -> None:
    @group.command("serve")
    @click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
    @click.option("--port", type=click.IntRange(1, 65535), default=DEFAULT_PORT, show_default=True)
    @click.option(
        "--public",
        is_flag=True,
        help="Allow a --host that other machines reach (needs a token; use TLS in front).",
    )
    @click.option(
        "--token",
        envvar=TOKEN_ENV,
        help=f"Ask browsers for this token (>= {MIN_TOKEN_CHARS} characters; "
        f"prefer ${TOKEN_ENV}: a command line is visible to other users).",
    )
    @click.option(
        "--max-sessions",
        type=click.IntRange(1, 64),
        default=MAX_SESSIONS,
        show_default=True,
        help="Browser tabs (app processes) open at once.",
    )
    @click.pass_obj
    def serve(
        obj: Any, host: str, port: int, public: bool, token: str | None, max_sessions: int
    ) -> None:
        """Serve the app to web browsers: each tab its own app on this database.

        Bound to this machine (127.0.0.1) unless --public with a token. Reviewers open
        the printed address; without --annotator each tab asks for a name."""
        check_exposure(host, public, token)
        if not obj.db_path.is_file():
            raise UserError(f"no database at {obj.db_path}: serve opens an existing one")
        from copyaudit.cli.web_server import GuardedServer  # deferred: loads aiohttp

        local = is_local(host)
        server = GuardedServer(
            app_command(obj.db_path, getattr(obj, "annotator", None), obj.read_only),
            host=host,
            port=port,
            token=token,
            allowed_hosts=local_hosts(port) if local else None,
            max_sessions=max_sessions,
            title=f"copyaudit · {obj.db_path.name}",
        )
        address = f"http://{f'[{host}]' if ':' in host else host}:{port}/"
        click.echo(f"copyaudit serve: {obj.db_path} on {address}", err=True)
        if token is not None:
            click.echo(f"open {address}?token=<the token> (Ctrl+C stops)", err=True)
        else:
            click.echo(f"open {address} (Ctrl+C stops)", err=True)
        # the tabs' settings (their remembered names) stay apart from this user's
        with tempfile.TemporaryDirectory(prefix="copyaudit-serve-") as settings:
            os.environ[CONFIG_DIR_ENV] = settings
            server.serve()

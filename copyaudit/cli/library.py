"""`library`: the works tracing searches (copyaudit.tracing): texts kept beside the
database, registered in it with their provenance, and the index over all of them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from copyaudit.errors import InputError
from copyaudit.untrusted import terminal_text

if TYPE_CHECKING:
    from copyaudit.cli.main import AppContext

MAX_TEXT_BYTES = 512 * 1024**2  # one work's text


def _texts(paths: tuple[Path, ...]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(path.rglob("*.txt"))
            if not found:
                raise InputError(path, None, None, "a directory without .txt files")
            files += found
        elif path.is_file():
            files.append(path)
        else:
            raise InputError(path, None, None, "no such file")
    return files


def _read(path: Path) -> str:
    if path.stat().st_size > MAX_TEXT_BYTES:
        raise InputError(path, None, None, f"larger than {MAX_TEXT_BYTES} bytes")
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(path, None, None, f"not UTF-8 text (byte {error.start})") from None


@click.group("library")
def library_group() -> None:
    """The works `judge --judges trace` traces outputs to."""


@library_group.command("add")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--from-suite",
    "suite",
    help="Add each case's reference text of this suite (literal, extraction), titled "
    "with the case's work, source 'case SUITE/ID'.",
)
@click.option("--title", help="The work's title (one file; default: the file name).")
@click.option("--author")
@click.option("--source", help="Edition or where the text came from (default: the path).")
@click.option(
    "--status",
    type=click.Choice(["protected", "public-domain", "unknown"]),
    default="unknown",
    show_default=True,
)
@click.pass_obj
def add_cmd(
    obj: AppContext,
    paths: tuple[Path, ...],
    suite: str | None,
    title: str | None,
    author: str | None,
    source: str | None,
    status: str,
) -> None:
    """Add plain-text works (files, or folders of .txt files, or a suite's reference
    texts) and rebuild the index. A text already in the library (same SHA-256) keeps
    its first record."""
    if suite is not None:
        if paths or title or source:
            raise click.UsageError("--from-suite takes no PATH, --title or --source")
        _add_suite(obj, suite, author, status)
        return
    if not paths:
        raise click.UsageError("give PATH... or --from-suite SUITE")
    from copyaudit.tracing.library import library_folder, store_text
    from db.library import LibraryWork, add_work

    files = _texts(paths)
    if title is not None and len(files) > 1:
        raise click.UsageError("--title names one work: give one file")
    folder = library_folder(obj.db_path)
    texts = [(path, _read(path)) for path in files]  # every file read before any is stored
    with obj.store() as store:
        added = 0
        for path, text in texts:
            sha = store_text(folder, text)
            work = LibraryWork(
                sha, title or path.stem, author, source or str(path), status, len(text)
            )
            added += add_work(store, work)
    click.echo(f"{added} works added, {len(texts) - added} already in the library")
    _rebuild(obj)


def _add_suite(obj: AppContext, suite: str, author: str | None, status: str) -> None:
    """Each case's reference text of `suite`, registered under its work's title."""
    from copyaudit.engine.case_sources import REFERENCE_KINDS, add_case_references
    from db.library import case_references

    with obj.store(read_only=True) as store:
        kind, references = case_references(store, suite)
    if kind not in REFERENCE_KINDS:
        raise click.UsageError(
            f"suite '{suite}' holds {kind} cases: only {', '.join(REFERENCE_KINDS)} cases "
            "have a reference text to add"
        )
    if not references:
        raise click.UsageError(f"suite '{suite}' has no case with a reference text")
    with obj.store() as store:
        added = add_case_references(store, suite, references, status, author)
    click.echo(
        f"{added} works added from suite {suite}, {len(references) - added} already in the library"
    )
    _rebuild(obj)


def _rebuild(obj: AppContext, infinigram: bool = False) -> None:
    from copyaudit.engine.case_sources import rebuild_index
    from copyaudit.tracing.infinigram import FOLDER
    from copyaudit.tracing.library import library_folder

    folder = library_folder(obj.db_path)
    with obj.store(read_only=True) as store:
        index = rebuild_index(store, infinigram)
    click.echo(
        f"indexed {len(index.works)} works, {len(index.tokens) - len(index.works)} words ({folder})"
    )
    if (folder / "index" / FOLDER).is_dir():
        click.echo(f"infini-gram index written ({folder / 'index' / FOLDER})")


@library_group.command("index")
@click.option(
    "--infinigram",
    is_flag=True,
    help="Also write the index for the infini-gram engine (judge --trace-engine "
    "infini-gram; kept in step by later rebuilds).",
)
@click.pass_obj
def index_cmd(obj: AppContext, infinigram: bool) -> None:
    """Rebuild the index from the registered works (each text checked by its SHA-256)."""
    _rebuild(obj, infinigram)


@library_group.command("list")
@click.pass_obj
def list_cmd(obj: AppContext) -> None:
    """Every work: title, author, status, characters, SHA-256, source."""
    from db.library import library_works

    with obj.store(read_only=True) as store:
        for work in library_works(store):
            click.echo(
                terminal_text(
                    f"{work.title} | {work.author or '-'} | {work.status} | {work.chars} chars | "
                    f"{work.sha256} | {work.source or '-'}"
                )
            )


def register(group: click.Group) -> None:
    group.add_command(library_group)

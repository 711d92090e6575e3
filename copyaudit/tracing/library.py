"""The library's files, beside the database (`<database>.library/`): each work's text as
`texts/<sha256>.txt`, and the index over all of them (`index/`, copyaudit.tracing.index)
with a catalogue of the works it was built from (title, author, status, SHA-256). Opening
the index checks every text against its SHA-256 and the catalogue against the texts
present, so an index older than the library, or a text changed since, is refused."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from copyaudit.errors import UserError
from copyaudit.tracing.index import IndexedWork, LibraryIndex
from copyaudit.tracing.infinigram import FOLDER as INFINIGRAM_FOLDER
from copyaudit.tracing.infinigram import InfiniGramIndex, write_infinigram

CATALOGUE = "catalogue.json"
# what answers the trace judge's search: the library's own suffix array, or the
# infini-gram engine over the same words (copyaudit.tracing.infinigram)
ENGINES = ("suffix-array", "infini-gram")


@dataclass(frozen=True)
class CatalogueEntry:
    sha256: str
    title: str
    author: str | None
    status: str  # protected | public-domain | unknown
    chars: int


def library_folder(database: Path) -> Path:
    return Path(f"{database}.library")


def text_path(folder: Path, sha256: str) -> Path:
    return folder / "texts" / f"{sha256}.txt"


def store_text(folder: Path, text: str) -> str:
    """Write `text` (UTF-8) under its SHA-256, atomically; its SHA-256."""
    data = text.encode("utf-8")
    sha = hashlib.sha256(data).hexdigest()
    target = text_path(folder, sha)
    if target.exists():
        return sha
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target.parent, delete=False) as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(handle.name, target)
    return sha


def read_text(folder: Path, sha256: str) -> str:
    """The text stored under `sha256`; UserError when it is missing or was changed."""
    path = text_path(folder, sha256)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{path}: the library's text is missing") from None
    if hashlib.sha256(data).hexdigest() != sha256:
        raise UserError(f"{path}: the text was changed since it was added (SHA-256 differs)")
    return data.decode("utf-8")


def build_index(
    folder: Path, entries: list[CatalogueEntry], infinigram: bool = False
) -> LibraryIndex:
    """Index every entry's text and save the index with its catalogue; the infini-gram
    index too when asked, or when one was written before (kept in step)."""
    works = [IndexedWork(e.sha256, read_text(folder, e.sha256)) for e in entries]
    index = LibraryIndex.build(works)
    index.save(folder / "index")
    if infinigram or (folder / "index" / INFINIGRAM_FOLDER).is_dir():
        write_infinigram(index, folder / "index")
    catalogue = [asdict(e) for e in entries]
    (folder / "index" / CATALOGUE).write_text(json.dumps(catalogue), encoding="utf-8")
    return index


def open_index(
    folder: Path, engine: str = ENGINES[0]
) -> tuple[LibraryIndex, dict[str, CatalogueEntry]]:
    """The saved index (searched by `engine`) and its catalogue by SHA-256, every text
    checked."""
    index_folder = folder / "index"
    if not (index_folder / CATALOGUE).is_file():
        raise UserError(
            f"{folder}: no library index (copyaudit library add FILE..., or library index)"
        )
    entries = [
        CatalogueEntry(**e)
        for e in json.loads((index_folder / CATALOGUE).read_text(encoding="utf-8"))
    ]
    for entry in entries:
        read_text(folder, entry.sha256)  # present and unchanged
    index = (InfiniGramIndex if engine == "infini-gram" else LibraryIndex).open(index_folder)
    if index.works != [e.sha256 for e in entries]:
        raise UserError(f"{index_folder}: the index is not of its catalogue: run library index")
    return index, {e.sha256: e for e in entries}

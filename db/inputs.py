"""What the store's imports read from a parsed file, as structural types: db needs no
parser (copyaudit.formats and copyaudit.verification.label_files make records that fit these)."""

from __future__ import annotations

from typing import Protocol

from copyaudit.errors import InputError
from copyaudit.types import Case


class LocatedCase(Protocol):
    """A case with the line of the file it was read from."""

    @property
    def line(self) -> int: ...
    @property
    def case(self) -> Case: ...


class LocatedGeneration(Protocol):
    """An output made elsewhere, for a case id and template, with its line."""

    @property
    def line(self) -> int: ...
    @property
    def case_id(self) -> str: ...
    @property
    def template(self) -> int: ...
    @property
    def output(self) -> str: ...


class ExportedSignature(Protocol):
    @property
    def fingerprint(self) -> str: ...
    @property
    def value(self) -> str: ...


class LabelRecord(Protocol):
    """A current label read from a label file (run/case_id/template `generation`)."""

    @property
    def annotator(self) -> str: ...
    @property
    def generation(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def index(self) -> int: ...
    @property
    def label(self) -> str | None: ...
    @property
    def note(self) -> str | None: ...
    @property
    def uuid(self) -> str | None: ...
    @property
    def created_at(self) -> str | None: ...
    @property
    def signature(self) -> ExportedSignature | None:
        """The signature the exported event carried (copyaudit.verification.label_files)."""
        ...

    def error(self, field: str | None, message: str) -> InputError:
        """The error naming the record's file and line."""
        ...

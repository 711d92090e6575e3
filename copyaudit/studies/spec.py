"""What a study is, in one object: the task kinds it defines, how its files are read and
written back, its prompts, the texts MemFree protects, the reference material a case
shows, the label targets it asks, its bundled sample and, where it has its own loop
(DE-COP), how a run executes. The registry (copyaudit.studies.registry) maps each kind
to its study's spec; generic code looks a kind up there instead of branching on it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from copyaudit.errors import UserError
from copyaudit.hashing import stable_json
from copyaudit.items import EVERY_OUTPUT_TARGETS
from copyaudit.metrics_spec import Headline
from copyaudit.records import LocatedCase
from copyaudit.rows import Loaded
from copyaudit.types import Case


@dataclass(frozen=True)
class PromptSpec:
    """A ready prompt: `text` for plain models, `system` + `user` for chat models."""

    text: str
    user: str
    system: str | None
    max_new_tokens: int
    template: int
    shots: int


@dataclass(frozen=True)
class UserTurn:
    """What a study's prompter returns: the user turn, the demonstrations it holds and
    the generation budget."""

    user: str
    shots: int
    max_new_tokens: int


class Prompter(Protocol):
    """A study's prompts (copyaudit.prompts adds the system reminder and checks the template)."""

    def templates(self, kind: str) -> tuple[int, ...]:
        """Template ids the kind accepts."""
        ...

    def demonstrations(self, kind: str) -> int:
        """How many demonstrations the kind has (0: none)."""
        ...

    def user_turn(
        self,
        kind: str,
        payload: Mapping[str, Any],
        template: int,
        shots: int | None,
        options: Mapping[str, Any],
    ) -> UserTurn:
        """The case's user turn; `options` holds the study's own settings (notice position...)."""
        ...

    def describe(self) -> dict[str, Any]:
        """Provenance of the templates, per kind (copyaudit.prompts.describe_templates)."""
        ...

    def fixed_budgets(self) -> dict[str, int]:
        """max_new_tokens per kind where it does not depend on the case."""
        ...


class OneLayoutPrompter:
    """A Prompter with one layout (template 1), no demonstrations and budgets that depend
    on the case: a subclass names its `task` (for the error) and builds the `turn`."""

    task = ""

    def templates(self, kind: str) -> tuple[int, ...]:
        return (1,)

    def demonstrations(self, kind: str) -> int:
        return 0

    def user_turn(
        self,
        kind: str,
        payload: Mapping[str, Any],
        template: int,
        shots: int | None,
        options: Mapping[str, Any],
    ) -> UserTurn:
        if shots not in (None, 0):
            raise UserError(f"the {self.task} task has no demonstrations; use shots=0")
        return self.turn(payload, options)

    def turn(self, payload: Mapping[str, Any], options: Mapping[str, Any]) -> UserTurn:
        raise NotImplementedError

    def fixed_budgets(self) -> dict[str, int]:
        return {}


@dataclass(frozen=True)
class ReferenceText:
    """One block of what an output is compared with: a title, its text (a string, a
    list of lines, or None for nothing), and character spans of that text to mark
    (copyaudit.render.highlight marks)."""

    title: str
    text: Any
    marks: Sequence[Any] = ()

    def plain(self) -> str:
        """The text as one string, a list's items one per line."""
        if isinstance(self.text, list):
            return "\n".join(str(t) for t in self.text)
        return "" if self.text is None else str(self.text)


@dataclass(frozen=True)
class DocTypes:
    """What a study's question can name (`import --doc-type`): the choices, the option's
    help, and the files it is for (said when the option is given for another kind)."""

    choices: tuple[str, ...]
    help: str
    files: str


@dataclass(frozen=True)
class ImportPlan:
    """The cases an import stores (a stream: read once, by the import), the suite's doc
    type and a note for the user."""

    cases: Iterable[LocatedCase]
    doc_type: str | None = None
    note: str = ""


def payload_reference(
    kind: str, payload: Mapping[str, Any], judgments: Sequence[Any]
) -> list[ReferenceText]:
    """The case's payload as JSON: the reference of a study that shows no other."""
    return [ReferenceText("Case payload", stable_json(payload))]


def _no_texts(case: Case) -> list[str]:
    return []


def _whole_output_targets(kind: str, payload: Mapping[str, Any]) -> tuple[str, ...]:
    return EVERY_OUTPUT_TARGETS


def _plain_import(cases: Iterable[LocatedCase], doc_type: str | None) -> ImportPlan:
    return ImportPlan(cases)


@dataclass(frozen=True)
class StudySpec:
    """One study. Callables receive the kind where a study defines several."""

    name: str
    title: str  # as people call it
    kinds: tuple[str, ...]
    read_cases: Callable[[str, str | Path], Loaded[LocatedCase]]  # kind, path
    to_record: Callable[[Case], dict[str, Any]]  # the record read_cases reads back
    reference: Callable[[str, Mapping[str, Any], Sequence[Any]], list[ReferenceText]]
    samples: Mapping[str, str]  # kind -> file in samples/ (the demo suite is its stem)
    prompter: Prompter | None = None  # None: the study builds its prompts in `execute`
    protected_texts: Callable[[Case], list[str]] = _no_texts  # what MemFree guards
    whole_output_targets: Callable[[str, Mapping[str, Any]], tuple[str, ...]] = (
        _whole_output_targets
    )
    doc_types: DocTypes | None = None  # what a suite's question names
    # the accepted cases (a stream) -> what the import stores
    prepare_import: Callable[[Iterable[LocatedCase], str | None], ImportPlan] = _plain_import
    # (db_path, request, *, on_progress, cancel) -> outcome, for a study with its own loop
    execute: Callable[..., Any] | None = None
    # (store, run name) -> rows of `export KIND --run NAME`, for a study with its own runs
    export_run: Callable[[Any, str], Iterator[dict[str, Any]]] | None = None
    run_fields: frozenset[str] = field(default_factory=frozenset)  # its own launcher fields
    limit_label: str | None = None  # what the launcher's limit counts, when not cases
    # prompts a case is asked in its own loop (DE-COP: its option orders); None: one
    # generation per prompt template
    prompts_per_case: int | None = None
    # literal-style kind -> payload -> the text whose longest verbatim run an output is
    # measured against (copyaudit.judges.verbatim), None for a case without one
    verbatim_sources: Mapping[str, Callable[[Mapping[str, Any]], str | None]] = field(
        default_factory=dict
    )
    # (path, prefix tokens, continuation tokens or None) -> cases cut from whole texts
    # (`import KIND FILE --prefix-tokens K`); None: the study's files are not cut
    split_cases: Callable[[str | Path, int, int | None], Loaded[LocatedCase]] | None = None
    # the study's own headline figures (on metrics its kinds' judges declare), after the
    # judges' own (copyaudit.judges.metric_facts) in reports and on the dashboard
    headlines: tuple[Headline, ...] = ()

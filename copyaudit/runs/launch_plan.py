"""What a run request will do, known before any model loads: its size, and whether
its name resumes a stored run of another configuration.

`RunSize` is what the launcher shows (counted per study by studies.registry.run_size:
generations = prompts x templates, or DE-COP's passages x 24 option orders).
`configuration_conflicts` compares the request with the stored run's configuration
(db.runs.stored_configuration) field by field, each named by the request field it
comes from, so the launcher can name its own field and the CLI its flag. What only the
loaded model tells (its revision, chat formatting) is still checked when the run is
created.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields
from typing import TYPE_CHECKING, Any

from copyaudit.errors import UserError
from copyaudit.judges.options import stored_defaults
from copyaudit.runs.run_request import METHOD_PARAMETERS
from db.runs import stored_configuration

if TYPE_CHECKING:
    from db.connection import Store


@dataclass(frozen=True)
class RunSize:
    """`cases` cases (DE-COP: passages) x `per_case` = `total` units; `stored` of them
    already stored under the run's name (a resumed run makes only the rest)."""

    cases: int
    per_case: int
    unit: str  # "generation" | "prompt"
    stored: int = 0  # units already stored

    @property
    def total(self) -> int:
        return self.cases * self.per_case

    def describe(self, run: str | None = None) -> str:
        """'120 generations (40 cases x 3 templates); resumes run R (30 of 120 done,
        90 to go)': `run` names the stored run a start would resume."""
        if self.unit == "prompt":
            what = f"{self.cases:,} passages x {self.per_case} option orders"
        else:
            what = f"{self.cases:,} cases x {self.per_case} template{_s(self.per_case)}"
        text = f"{self.total:,} {self.unit}{_s(self.total)} ({what})"
        if self.stored:
            left = max(self.total - self.stored, 0)
            resumes = f"resumes run {run}" if run else "resumes the run of this name"
            text += f"; {resumes} ({self.stored:,} of {self.total:,} done, {left:,} to go)"
        return text


def _s(count: int) -> str:
    return "" if count == 1 else "s"


@dataclass(frozen=True)
class Conflict:
    """A request field whose value differs from the stored run's."""

    field: str  # the request field (RunRequest / DecopRequest attribute)
    stored: Any
    requested: Any


# request fields stored in the run's config under the same name, some only when set:
# a config that lacks one compares with the request class's default. The judge options
# (request.judging) compare the same way, field by field (judges.options.stored_defaults).
_GENERATION_CONFIG = ("limit", "shots", "memfree_n", "max_new_tokens", "notice_position",
                      "notice_mitigation")  # fmt: skip


def _field_default(request: Any, name: str) -> Any:
    """The default of dataclass field `name` of `request`'s class."""
    spec = {f.name: f for f in fields(request)}[name]
    if spec.default is not MISSING:
        return spec.default
    assert spec.default_factory is not MISSING  # every request field has a default
    return spec.default_factory()


def configuration_conflicts(
    stored: Mapping[str, Any],
    request: Any,
    *,
    calibration: tuple[str, list[str]] | None = None,
) -> list[Conflict]:
    """Fields of `request` (a runner.RunRequest or decop_run.DecopRequest) that differ
    from the `stored` run (keys suite, backend, model, templates, mitigation, config).
    A DE-COP request compares `calibration`, its resolved (mode, held-out works)."""
    config = stored.get("config") or {}
    pairs: list[tuple[str, Any, Any]] = [
        ("suite", stored.get("suite"), request.suite),
        ("backend", stored.get("backend"), request.backend),
        ("model", stored.get("model"), request.model),
    ]
    if hasattr(request, "passages_per_work"):  # DE-COP
        per_work = config.get("passages_per_work")
        pairs.append(("passages_per_work", per_work, request.passages_per_work))
        if calibration is not None:
            held = config.get("calibration") or {}
            pairs.append(
                (
                    "calibrate_on",
                    (held.get("mode", "none"), list(held.get("works") or [])),
                    (calibration[0], list(calibration[1])),
                )
            )
    else:
        pairs.append(("templates", tuple(stored.get("templates") or ()), tuple(request.templates)))
        pairs.append(("mitigation", stored.get("mitigation"), request.mitigation))
        for name in _GENERATION_CONFIG + METHOD_PARAMETERS.get(request.mitigation, ()):
            stored_value = config.get(name, _field_default(request, name))
            pairs.append((name, stored_value, getattr(request, name)))
        for name, default in stored_defaults().items():
            pairs.append((name, config.get(name, default), getattr(request.judging, name)))
    return [Conflict(name, old, new) for name, old, new in pairs if old != new]


def cli_flag(field: str) -> str:
    """The command-line spelling of a request field: SUITE, --templates, --base-url."""
    if field == "suite":
        return "SUITE"
    if field == "backend":
        return "--backend/--base-url"
    return "--" + field.replace("_", "-")


def refuse_conflicts(
    store: Store, request: Any, *, calibration: tuple[str, list[str]] | None = None
) -> None:
    """Before any model loads: UserError naming each command-line option whose value
    differs from the stored run of the request's name (none stored: nothing to say)."""

    name = request.run_name()
    stored = stored_configuration(store, name)
    if stored is None:
        return
    conflicts = configuration_conflicts(stored, request, calibration=calibration)
    if conflicts:
        differences = "; ".join(
            f"{cli_flag(c.field)}: {c.stored!r} there, {c.requested!r} here" for c in conflicts
        )
        raise UserError(
            f"run '{name}' already exists with a different configuration ({differences}); "
            "run it as it was to resume it, or choose another --name"
        )

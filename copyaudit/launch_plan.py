"""What a run request will do, known before any model loads: its size, and whether
its name resumes a stored run of another configuration.

`run_size` counts the generations (prompts x templates) or, for DE-COP, the scoring
prompts (passages x 24 option orders) after the limit. `configuration_conflicts`
compares the request with the stored run's configuration (db.runs.stored_configuration)
field by field, each named by the request field it comes from, so the launcher can
name its own field and the CLI its flag. What only the loaded model tells (its
revision, chat formatting) is still checked when the run is created.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from copyaudit.judges.options import stored_defaults
from copyaudit.studies.notice.prompts import NOTICE_MITIGATIONS, NOTICE_POSITIONS


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

    def describe(self) -> str:
        """'120 generations (40 cases x 3 templates); 30 stored, 90 to make'."""
        if self.unit == "prompt":
            what = f"{self.cases:,} passages x {self.per_case} option orders"
        else:
            what = f"{self.cases:,} cases x {self.per_case} template{_s(self.per_case)}"
        text = f"{self.total:,} {self.unit}{_s(self.total)} ({what})"
        if self.stored:
            left = max(self.total - self.stored, 0)
            text += f"; {self.stored:,} stored under this name, {left:,} to go"
        return text


def _s(count: int) -> str:
    return "" if count == 1 else "s"


def run_size(
    kind: str,
    cases: int,
    templates: Sequence[int] = (1,),
    limit: int | None = None,
    stored: int = 0,
) -> RunSize:
    """The size of a run over `cases` cases with `stored` units already stored. For a
    generation suite `limit` keeps the first N cases; for DE-COP `cases` is already the
    passages kept per work (the limit applies per work: db.work.run_case_count) and
    each is asked in 24 orders."""
    if kind == "decop":
        from copyaudit.studies.decop.method import N_ORDERS  # lazily: numpy and scipy

        return RunSize(cases, N_ORDERS, "prompt", stored)
    kept = cases if limit is None else min(cases, limit)
    return RunSize(kept, len(templates), "generation", stored)


@dataclass(frozen=True)
class Conflict:
    """A request field whose value differs from the stored run's."""

    field: str  # the request field (RunRequest / DecopRequest attribute)
    stored: Any
    requested: Any


def _notice_default(key: str) -> str:
    return {"notice_position": NOTICE_POSITIONS[0], "notice_mitigation": NOTICE_MITIGATIONS[0]}[key]


# request field -> (config key, default when the stored config lacks it); options
# stored only when set compare with their default. The judge options (request.judging)
# compare the same way, field by field (copyaudit.judges.options.stored_defaults).
_GENERATION_CONFIG: dict[str, tuple[str, Any]] = {
    "limit": ("limit", None),
    "shots": ("shots", None),
    "memfree_n": ("memfree_n", 10),
    "max_new_tokens": ("max_new_tokens", None),
    "notice_position": ("notice_position", _notice_default("notice_position")),
    "notice_mitigation": ("notice_mitigation", _notice_default("notice_mitigation")),
}


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
        for name, (key, default) in _GENERATION_CONFIG.items():
            pairs.append((name, config.get(key, default), getattr(request, name)))
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
    store: Any, request: Any, *, calibration: tuple[str, list[str]] | None = None
) -> None:
    """Before any model loads: UserError naming each command-line option whose value
    differs from the stored run of the request's name (none stored: nothing to say)."""
    from copyaudit.errors import UserError
    from db.runs import stored_configuration

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

"""Where a screen can send the user: one value per screen that another screen opens.

A screen never imports or pushes another screen; it asks the App to show a destination
(`app.open(Generation(...))`), and screens.router turns the destination into its screen.
Each field is the screen's constructor argument of the same name (a test compares).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from screens.state.decop_view_data import PassageEntry, WorkRow
    from screens.state.paging import GenerationPager
    from screens.state.review_cases import ReviewPager


class Origin(Protocol):
    """The list screen a view was opened from: on return its cursor goes to the
    generation the view showed last."""

    focus_generation: int | None


@dataclass(frozen=True)
class Generation:
    """The generation view; `origin` (a list screen) gets the cursor back on return."""

    generation_id: int
    pager: GenerationPager
    origin: Origin | None = None
    blind: bool = False
    queue: str | None = None


@dataclass(frozen=True)
class Annotation:
    """Annotation mode of the generation view (screens.review.annotation)."""

    generation_id: int
    pager: GenerationPager
    origin: Origin | None = None
    adjudicate_as: str | None = None
    start_item: str | None = None
    from_view: bool = False
    queue: str | None = None


@dataclass(frozen=True)
class ReviewQueue:
    """The reviewer queue (no fields: opening it over itself does nothing)."""


@dataclass(frozen=True)
class Comparison:
    """The model comparison (no fields: opening it over itself does nothing)."""


@dataclass(frozen=True)
class Case:
    """One case of the reviewer queue, walked in the queue's order and filter."""

    generation_id: int
    pager: ReviewPager
    origin: Origin | None = None


@dataclass(frozen=True)
class DecopWork:
    """The passages of one work of a DE-COP run."""

    run: dict[str, Any]
    work: WorkRow
    delta: list[float] | None


@dataclass(frozen=True)
class DecopPassage:
    """One passage of a DE-COP run: its options and 24 prompts."""

    run: dict[str, Any]
    work: WorkRow
    entry: PassageEntry
    delta: list[float] | None


@dataclass(frozen=True)
class Takedown:
    """The takedown table of one suite and model (copyaudit.studies.takedown)."""

    suite: str
    model: str


@dataclass(frozen=True)
class MemorisationMap:
    """The memorisation map of a p_z run (copyaudit.engine.pz_run)."""

    run: str


@dataclass(frozen=True)
class MapStretch:
    """The windows of one stretch (strip cell) of a work on the memorisation map."""

    run: str
    run_id: int
    work: str  # its title
    cell: int
    scheme: str


# every destination (screens.router maps each to its screen)
Destination = (
    Generation
    | Annotation
    | ReviewQueue
    | Comparison
    | Case
    | DecopWork
    | DecopPassage
    | Takedown
    | MemorisationMap
    | MapStretch
)

"""The one table from a destination (screens.destinations) to the screen that shows it,
used by the App, the only place that pushes one screen from another."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from textual.screen import Screen

from screens.destinations import (
    Annotation,
    Case,
    Comparison,
    DecopPassage,
    DecopWork,
    Generation,
    MapStretch,
    MemorisationMap,
    ReviewQueue,
    Takedown,
)
from screens.generations.case_view import CaseScreen
from screens.generations.generation_view import GenerationScreen
from screens.pz.map_view import MemorisationMapScreen
from screens.pz.stretch_view import MapStretchScreen
from screens.review.annotation import AnnotationScreen
from screens.review.review_queue import ReviewQueueScreen
from screens.runs.takedown_view import TakedownScreen

if TYPE_CHECKING:
    from screens.destinations import Destination


def _passage_list() -> type[Screen[Any]]:
    from screens.decop.passage_list import DecopPassageListScreen  # deferred: loads scipy

    return DecopPassageListScreen


def _compare() -> type[Screen[Any]]:
    from screens.compare.compare_view import CompareScreen  # deferred: loads textual_plotext

    return CompareScreen


def _passage_view() -> type[Screen[Any]]:
    from screens.decop.passage_view import DecopPassageScreen  # deferred: loads scipy

    return DecopPassageScreen


# destination -> its screen class, loaded when first asked for where the screen module
# loads scipy (the DE-COP screens, through copyaudit.studies.decop)
SCREENS: dict[type, Callable[[], type[Screen[Any]]]] = {
    Generation: lambda: GenerationScreen,
    Annotation: lambda: AnnotationScreen,
    ReviewQueue: lambda: ReviewQueueScreen,
    Case: lambda: CaseScreen,
    DecopWork: _passage_list,
    DecopPassage: _passage_view,
    Comparison: _compare,
    Takedown: lambda: TakedownScreen,
    MemorisationMap: lambda: MemorisationMapScreen,
    MapStretch: lambda: MapStretchScreen,
}


def screen_for(destination: Destination, current: Screen[Any]) -> Screen[Any] | None:
    """The screen showing `destination`, built from its fields; None when `current`
    already is that screen (a destination without fields names one screen, not one of
    many)."""
    screen_class = SCREENS[type(destination)]()
    arguments = {field.name: getattr(destination, field.name) for field in fields(destination)}
    if not arguments and isinstance(current, screen_class):
        return None
    return screen_class(**arguments)

"""Routing: every destination a screen can ask the App for has its screen, built from
the destination's fields, and a destination without fields is not opened over itself."""

from __future__ import annotations

import inspect
from dataclasses import MISSING, fields, is_dataclass
from typing import get_args

import screens.destinations
from screens.destinations import Generation, ReviewQueue
from screens.generations.generation_view import GenerationScreen
from screens.review.review_queue import ReviewQueueScreen
from screens.router import SCREENS, screen_for
from screens.state.id_pager import IdPager


def _destinations() -> list[type]:
    module = screens.destinations
    return [
        value
        for value in vars(module).values()
        if inspect.isclass(value) and is_dataclass(value) and value.__module__ == module.__name__
    ]


def test_every_destination_has_a_screen_taking_its_fields() -> None:
    """A field is the screen's parameter of the same name, optional exactly when the
    parameter is (so the router's keyword call stays the screen's signature)."""
    assert set(SCREENS) == set(_destinations())
    for destination, load in SCREENS.items():
        parameters = dict(inspect.signature(load().__init__).parameters)
        parameters.pop("self")
        wanted = {name: p.default is inspect.Parameter.empty for name, p in parameters.items()}
        given = {
            f.name: f.default is MISSING and f.default_factory is MISSING
            for f in fields(destination)
        }
        assert given == wanted, destination.__name__


def test_the_router_builds_the_screen_from_the_destination() -> None:
    pager = IdPager([3, 5])
    screen = screen_for(Generation(5, pager, blind=True, queue="q"), ReviewQueueScreen())
    assert isinstance(screen, GenerationScreen)
    assert (screen.generation_id, screen.pager, screen.blind, screen.queue) == (5, pager, True, "q")


def test_a_destination_without_fields_is_not_opened_over_itself() -> None:
    assert screen_for(ReviewQueue(), ReviewQueueScreen()) is None
    assert isinstance(
        screen_for(ReviewQueue(), GenerationScreen(1, IdPager([1]))), ReviewQueueScreen
    )


def test_the_destination_type_names_every_destination() -> None:
    """`Destination` (what App.open takes, for the type checker) lists every destination."""
    assert set(get_args(screens.destinations.Destination)) == set(_destinations())

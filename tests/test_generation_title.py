"""The generation view's header places the generation in its list: "3 of 250" once the
list is counted, "3 of 1,000+" while only a quick count has come back."""

from __future__ import annotations

from db.browse import GenerationDetail, GenerationFilter
from screens.generations.generation_view import generation_title
from screens.state.paging import GenerationPager


class _Row:
    def __init__(self, generation_id: int) -> None:
        self.generation_id = generation_id


def _detail(generation_id: int) -> GenerationDetail:
    return GenerationDetail(
        generation_id, "run", "suite", "literal", "c1", 1, "Work", None, "unknown",
        "prompt", "output", None, None, "imported", {},
    )  # fmt: skip


def _pager(rows: int) -> GenerationPager:
    pager = GenerationPager(GenerationFilter(run_id=1))
    pager.add_page([_Row(i) for i in range(1, rows + 1)])
    return pager


def test_the_place_in_the_list_follows_what_is_counted() -> None:
    pager = _pager(100)
    assert "3 of 100" in generation_title(_detail(3), pager).plain  # nothing counted yet
    pager.at_least = 1_000
    assert "3 of 1,000+" in generation_title(_detail(3), pager).plain
    pager.total = 4_321
    assert "3 of 4,321" in generation_title(_detail(3), pager).plain
    pager.reset(GenerationFilter(run_id=1, search="x"))
    assert pager.at_least == 0 and pager.total is None and pager.shown_total() == "counting…"
    pager.at_least = 1_000
    assert pager.shown_total() == "1,000+" and pager.counting_on

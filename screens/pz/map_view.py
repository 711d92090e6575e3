"""The memorisation map of a p_z run (copyaudit.engine.pz_run): per work, a strip over
its length whose cells are coloured by the highest p_z of the windows starting in them
(copyaudit.reports.pz.memorisation_map), greedy hits underlined, and beside it the share
of the work's windows at p_z >= 0.5 / 0.1 / 0.01 (reports.pz.work_shares). The arrows
move the cursor over cells and works, s switches the decoding scheme, Enter opens the
windows of the stretch under the cursor, g the run's generation list. Opened from the
dashboard (Enter or m on a p_z run)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from copyaudit.reports.pz import (
    MAP_MARKS,
    MAP_WIDTH,
    THRESHOLDS,
    greedy_hits,
    map_strip,
    memorisation_map,
    work_shares,
)
from db.browse import run_info
from db.connection import Store
from screens.app_link import copyaudit_app
from screens.destinations import MapStretch
from screens.plain import plain
from screens.widgets.footer import KeysFooter

# a cell's colour, by the same floors as its mark (reports.pz.MAP_MARKS), highest first
MARK_STYLES = dict(
    zip(
        (floor for floor, _ in MAP_MARKS),
        ("bold red", "dark_orange", "yellow", "grey50"),
        strict=True,
    )
)
GREEDY_STYLE = "underline"
CURSOR_STYLE = "reverse"
NO_WINDOWS = (
    "This run holds no p_z judgments on windows cut from whole works "
    "(import extraction WORK.txt --stride, then copyaudit pz)."
)


@dataclass(frozen=True)
class MapData:
    run_id: int
    model: str
    maps: dict[str, dict[str, list[float | None]]]  # scheme judge -> work -> cells
    shares: dict[str, dict[str, dict[str, Any]]]  # scheme judge -> work -> figures
    hits: dict[str, list[bool]]  # work -> cells where greedy emits a window


def load_map(store: Store, run: str) -> MapData | None:
    info = run_info(store, run)
    if info is None:
        return None
    run_id = int(info["id"])
    maps = memorisation_map(store, run_id)
    return MapData(run_id, info["model"] or "", maps, work_shares(store, run_id), greedy_hits(maps))


def cell_style(value: float | None) -> str:
    if value is None:
        return ""
    return next(style for floor, style in MARK_STYLES.items() if value >= floor)


def strip_text(cells: list[float | None], hits: list[bool], cursor: int | None) -> Text:
    """A work's strip: reports.pz.map_strip's marks, coloured, greedy hits underlined,
    the cursor's cell reversed."""
    text = Text(end="")
    for index, (mark, value) in enumerate(zip(map_strip(cells), cells, strict=True)):
        styles = [cell_style(value)]
        if index < len(hits) and hits[index]:
            styles.append(GREEDY_STYLE)
        if index == cursor:
            styles.append(CURSOR_STYLE)
        text.append(mark, style=" ".join(s for s in styles if s))
    return text


def shares_text(figures: dict[str, Any]) -> Text:
    shares = figures["share_at_least"]
    cells = "  ".join(f"≥{t:g} {shares[str(t)]:6.1%}" for t in THRESHOLDS)
    return Text(f"{cells}  {figures['windows']:>5} windows", end="")


def legend() -> Text:
    text = Text("cell: highest p_z of its windows  ", style="dim", end="")
    bounds = [f"≥ {floor:g}" for floor, _ in MAP_MARKS[:-1]] + ["below"]
    for (floor, mark), bound in zip(MAP_MARKS, bounds, strict=True):
        text.append(mark, style=MARK_STYLES[floor])
        text.append(f" {bound}  ", style="dim")
    text.append("blank: no window  ", style="dim")
    text.append("underlined", style=GREEDY_STYLE)
    text.append(": greedy emits a window there", style="dim")
    return text


class MapLoaded(Message):
    def __init__(self, data: MapData | None) -> None:
        super().__init__()
        self.data = data


class MemorisationMapScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back", id="pzmap.back"),
        Binding("left", "move(0, -1)", "Left", show=False, id="pzmap.left"),
        Binding("right", "move(0, 1)", "Right", show=False, id="pzmap.right"),
        Binding("up", "move(-1, 0)", "Work up", show=False, id="pzmap.up"),
        Binding("down", "move(1, 0)", "Work down", show=False, id="pzmap.down"),
        Binding("enter", "open_stretch", "Windows", id="pzmap.open"),
        Binding("s", "next_scheme", "Scheme", id="pzmap.scheme"),
        Binding("g", "generations", "Generations", id="pzmap.generations"),
        Binding("r", "reload", "Reload", id="pzmap.reload"),
    ]

    DEFAULT_CSS = """
    MemorisationMapScreen #pz-map { height: auto; padding: 0 1; }
    MemorisationMapScreen #pz-scheme, MemorisationMapScreen #pz-legend,
    MemorisationMapScreen #pz-cursor { height: auto; padding: 0 1; }
    """

    def __init__(self, run: str) -> None:
        super().__init__()
        self.run = run
        self.data: MapData | None = None
        self.scheme: str | None = None
        self.work_index = 0
        self.cell = 0
        self.map_text = Text()  # the strips as shown (kept for the tests to read)

    def compose(self) -> ComposeResult:
        title = Text.assemble(("Memorisation map", "bold"), " · ", plain(self.run))
        yield Static(title, classes="title-bar")
        yield Static(Text("loading…", style="italic dim"), id="pz-scheme")
        yield Static(legend(), id="pz-legend")
        yield Static(id="pz-map")
        yield Static(id="pz-cursor")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.action_reload()

    def action_generations(self) -> None:
        """g: the run's generation list (one row per window)."""
        copyaudit_app(self).open_run(self.run, as_list=True)

    def action_reload(self) -> None:
        app = copyaudit_app(self)

        def work() -> None:
            with app.data.background() as store:
                data = load_map(store, self.run)
            self.post_message(MapLoaded(data))

        app.start_worker(work, group="pzmap", description="loading the memorisation map")

    def on_map_loaded(self, message: MapLoaded) -> None:
        self.data = message.data
        schemes = self.schemes()
        if self.scheme not in schemes:
            sampled = [s for s in schemes if s != "pz_greedy"]
            self.scheme = next(iter(sampled or schemes), None)
        self.refresh_map()

    def schemes(self) -> list[str]:
        return list(self.data.maps) if self.data else []

    def works(self) -> list[str]:
        if self.data is None or self.scheme is None:
            return []
        return list(self.data.maps[self.scheme])

    def refresh_map(self) -> None:
        works = self.works()
        if self.data is None or self.scheme is None or not works:
            self.query_one("#pz-scheme", Static).update(Text(NO_WINDOWS, style="italic"))
            self.query_one("#pz-map", Static).update("")
            return
        model = plain(self.data.model)
        others = len(self.schemes()) - 1
        header = Text.assemble(
            "scheme ",
            (self.scheme.removeprefix("pz_"), "bold"),
            f" ({others} other{'s' if others != 1 else ''}: s) · model ",
            model,
        )
        self.query_one("#pz-scheme", Static).update(header)
        maps, shares = self.data.maps[self.scheme], self.data.shares[self.scheme]
        lines = Text(end="")
        for index, title in enumerate(works):
            cursor = self.cell if index == self.work_index else None
            hits = self.data.hits.get(title, [])
            lines.append_text(strip_text(maps[title], hits, cursor))
            lines.append("  ")
            lines.append_text(shares_text(shares[title]))
            lines.append("  ")
            lines.append_text(plain(title, "bold" if cursor is not None else ""))
            lines.append("\n")
        self.map_text = lines
        self.query_one("#pz-map", Static).update(lines)
        self.query_one("#pz-cursor", Static).update(self.cursor_line())

    def cursor_line(self) -> Text:
        """Where the cursor is: the work, the stretch's share of it, its highest p_z."""
        assert self.data is not None and self.scheme is not None
        title = self.works()[self.work_index]
        value = self.data.maps[self.scheme][title][self.cell]
        hits = self.data.hits.get(title, [])
        greedy = (
            " · greedy emits a window here" if self.cell < len(hits) and hits[self.cell] else ""
        )
        shown = "no window starts here" if value is None else f"highest p_z {value:.4g}"
        stretch = f"{self.cell / MAP_WIDTH:.0%}–{(self.cell + 1) / MAP_WIDTH:.0%} of the work"
        text = Text.assemble(plain(title, "bold"), f" · {stretch} · {shown}{greedy}")
        if value is not None:
            text.append(" · Enter: its windows", style="dim")
        return text

    def action_move(self, works: int, cells: int) -> None:
        if not self.works():
            return
        self.work_index = max(0, min(len(self.works()) - 1, self.work_index + works))
        self.cell = max(0, min(MAP_WIDTH - 1, self.cell + cells))
        self.refresh_map()

    def action_next_scheme(self) -> None:
        schemes = self.schemes()
        if self.scheme in schemes:
            self.scheme = schemes[(schemes.index(self.scheme) + 1) % len(schemes)]
            self.refresh_map()

    def action_open_stretch(self) -> None:
        works = self.works()
        if self.data is None or self.scheme is None or not works:
            return
        title = works[self.work_index]
        if self.data.maps[self.scheme][title][self.cell] is None:
            self.notify("no window starts in this stretch", markup=False)
            return
        stretch = MapStretch(self.run, self.data.run_id, title, self.cell, self.scheme)
        copyaudit_app(self).open(stretch)

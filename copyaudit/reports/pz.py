"""p_z figures of a run (copyaudit.engine.pz_run), per decoding scheme: the share of
windows at p_z >= 0.5 / 0.1 / 0.01, the mean log p_z over the windows the scheme can emit
(p_z > 0) and how many it cannot, the greedy-extraction rate, and the (n, p)-discoverable
rate for each n in DISCOVERABLE_N (p from the judge's configuration)."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from copyaudit.models.pz import DEFAULT_P, discoverable
from db.pz import pz_judge_configs, pz_values, run_ids, window_positions

if TYPE_CHECKING:
    from db.connection import Store

THRESHOLDS = (0.5, 0.1, 0.01)
DISCOVERABLE_N = (1, 10, 100)
GREEDY_JUDGE = "pz_greedy"


def pz_figures(store: Store, run_id: int) -> dict[str, Any]:
    """{scheme judge: figures}; empty when the run holds no p_z judgments."""
    configs = {name: json.loads(c) for name, c in pz_judge_configs(store, run_id).items()}
    by_judge: dict[str, dict[str, list[float | None]]] = defaultdict(lambda: defaultdict(list))
    for judge, metric, value in pz_values(store, run_id):
        by_judge[judge][metric].append(value)
    out: dict[str, Any] = {}
    greedy = by_judge.get(GREEDY_JUDGE, {}).get("pz")
    greedy_rate = _share(greedy, 1.0) if greedy else None
    for judge in sorted(by_judge):
        metrics = by_judge[judge]
        pz = [v for v in metrics.get("pz", []) if v is not None]
        if not pz:
            continue
        finite = [v for v in metrics.get("log_pz", []) if v is not None]
        p = float(configs.get(judge, {}).get("p", DEFAULT_P))
        out[judge] = {
            "config": configs.get(judge, {}),
            "windows": len(pz),
            "share_at_least": {str(t): _share(pz, t) for t in THRESHOLDS},
            "mean_log_pz": math.fsum(finite) / len(finite) if finite else None,
            "windows_pz_zero": sum(v == 0.0 for v in pz),
            "greedy_rate": greedy_rate,
            "p": p,
            "discoverable": {
                str(n): sum(discoverable(v, n, p) for v in pz) / len(pz) for n in DISCOVERABLE_N
            },
        }
    return out


def _share(values: list[Any], threshold: float) -> float:
    return sum(v is not None and v >= threshold for v in values) / len(values)


def pz_markdown(figures: dict[str, Any]) -> str:
    """The figures as a Markdown table, one row per scheme."""
    if not figures:
        return "No p_z judgments in this run.\n"
    ns = " | ".join(f"({n}, p)-disc." for n in DISCOVERABLE_N)
    lines = [
        f"| scheme | windows | p_z>=0.5 | p_z>=0.1 | p_z>=0.01 | mean log p_z (p_z>0) | "
        f"p_z=0 | greedy rate | {ns} |",
        "|---" * (8 + len(DISCOVERABLE_N)) + "|",
    ]
    for judge, f in figures.items():
        shares = " | ".join(f"{f['share_at_least'][str(t)]:.1%}" for t in THRESHOLDS)
        mean = "—" if f["mean_log_pz"] is None else f"{f['mean_log_pz']:.2f}"
        greedy = "—" if f["greedy_rate"] is None else f"{f['greedy_rate']:.1%}"
        disc = " | ".join(f"{f['discoverable'][str(n)]:.1%}" for n in DISCOVERABLE_N)
        lines.append(
            f"| {judge.removeprefix('pz_')} | {f['windows']} | {shares} | {mean} | "
            f"{f['windows_pz_zero']} | {greedy} | {disc} |"
        )
    p = next(iter(figures.values()))["p"]
    return "\n".join(lines) + f"\n\n(n, p)-discoverable at p = {p}.\n"


def pz_comparison(store: Store, runs: list[str]) -> list[dict[str, Any]]:
    """One row per run among `runs` that holds p_z judgments: its model and figures."""
    rows = []
    for name, run_id, model in run_ids(store, runs):
        figures = pz_figures(store, run_id)
        if figures:
            rows.append({"run": name, "model": model, "pz": figures})
    return rows


def pz_comparison_markdown(rows: list[dict[str, Any]]) -> str:
    """The p_z section of `compare`: per model (run), the figures of each scheme."""
    parts = ["## Extraction probability (p_z), per model\n"]
    for row in rows:
        parts.append(f"### {row['model']} (run {row['run']})\n")
        parts.append(pz_markdown(row["pz"]))
    return "\n".join(parts)


# a strip cell's mark by the highest p_z of its windows: (at least, mark), highest first
MAP_MARKS = ((0.5, "█"), (0.1, "▓"), (0.01, "▒"), (0.0, "·"))
MAP_WIDTH = 60


def map_cell(start: int, chars: int, width: int) -> int:
    """The strip cell of a window starting at character `start` of a work of `chars`."""
    return min(width - 1, start * width // max(1, chars))


def memorisation_map(store: Store, run_id: int, width: int = MAP_WIDTH) -> dict[str, Any]:
    """Per scheme and work: a strip of `width` cells over the work's characters, each
    the highest p_z of the windows starting in it (None: no window starts there)."""
    maps: dict[str, dict[str, list[float | None]]] = defaultdict(dict)
    for _, title, start, chars, judge, pz in window_positions(store, run_id):
        strip = maps[judge].setdefault(title, [None] * width)
        cell = map_cell(start, chars, width)
        kept = strip[cell]
        strip[cell] = pz if kept is None or pz is None else max(kept, pz)
    return {judge: dict(sorted(works.items())) for judge, works in sorted(maps.items())}


def work_shares(store: Store, run_id: int) -> dict[str, dict[str, dict[str, Any]]]:
    """Per scheme and work: its windows and the share of them at p_z >= each of
    THRESHOLDS (the run's figures, work by work)."""
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for _, title, _, _, judge, pz in window_positions(store, run_id):
        values[judge][title].append(pz)
    return {
        judge: {
            title: {
                "windows": len(pz),
                "share_at_least": {str(t): _share(pz, t) for t in THRESHOLDS},
            }
            for title, pz in sorted(works.items())
        }
        for judge, works in sorted(values.items())
    }


def stretch_windows(
    store: Store, run_id: int, title: str, cell: int, width: int = MAP_WIDTH
) -> list[int]:
    """The generation ids of the windows of `title` that start in strip cell `cell`,
    in the work's order."""
    return list(
        dict.fromkeys(
            gid
            for gid, work, start, chars, _, _ in window_positions(store, run_id)
            if work == title and map_cell(start, chars, width) == cell
        )
    )


def greedy_hits(maps: dict[str, Any]) -> dict[str, list[bool]]:
    """Per work: the cells where greedy decoding emits some window's suffix (p_z = 1)."""
    return {title: [v == 1.0 for v in cells] for title, cells in maps.get(GREEDY_JUDGE, {}).items()}


def map_strip(cells: list[float | None]) -> str:
    """A strip as text: █ p_z >= 0.5, ▓ >= 0.1, ▒ >= 0.01, · below, space: no window."""
    return "".join(
        " " if v is None else next(mark for floor, mark in MAP_MARKS if v >= floor) for v in cells
    )


def map_markdown(maps: dict[str, Any]) -> str:
    lines = [
        "Memorisation map: each cell is a stretch of the work, marked by the highest p_z "
        "of the windows starting in it (█ >= 0.5, ▓ >= 0.1, ▒ >= 0.01, · below).",
        "",
    ]
    for judge, works in maps.items():
        lines += [f"{judge.removeprefix('pz_')}:", "```"]
        lines += [f"{map_strip(cells)}  {title}" for title, cells in works.items()]
        lines += ["```", ""]
    return "\n".join(lines)

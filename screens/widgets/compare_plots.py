"""The comparison's two plots, drawn with textual-plotext: the selected column's figure
per row as bars with the 95% interval drawn over each, and the score distributions of
the runs behind that column side by side. Rows and runs are numbered; the names (stored
text) are listed beside the plots, never drawn into them, and so is the runs' colour key
(plotext draws its legend inside the plot, over the bars)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from textual_plotext import PlotextPlot

BAR_COLOR = (106, 159, 216)
INTERVAL_COLOR = (224, 122, 95)
RUN_COLORS = ((106, 159, 216), (224, 122, 95), (129, 178, 154), (242, 204, 143), (170, 120, 200))


def run_color(number: int) -> tuple[int, int, int]:
    """The colour of the `number`-th run's bars (0-based), as the legend beside shows it."""
    return RUN_COLORS[number % len(RUN_COLORS)]


class FigureBars(PlotextPlot):
    """One column's figure per row (numbered 1..n), each interval a vertical line."""

    def show(
        self, title: str, values: Sequence[float | None], bounds: Sequence[Any], scale: float
    ) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        labels = [str(i + 1) for i in range(len(values))]
        heights = [0.0 if v is None else scale * v for v in values]
        if labels:
            plt.bar(labels, heights, color=BAR_COLOR, width=0.4)
            for i, bound in enumerate(bounds):
                if bound:
                    x = i + 1
                    plt.plot(
                        [x, x],
                        [scale * bound[0], scale * bound[1]],
                        color=INTERVAL_COLOR,
                        marker="braille",
                    )
        plt.title(title)
        plt.xlabel("row (95% interval in red)")
        self.refresh()


class Distributions(PlotextPlot):
    """Each run's histogram of one metric (numbered runs), bars side by side per bin."""

    def show(self, title: str, runs: Sequence[Mapping[str, Any]]) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        if runs:
            edges = runs[0]["edges"]
            centres = [round((edges[i] + edges[i + 1]) / 2, 3) for i in range(len(edges) - 1)]
            same = [r for r in runs if r["edges"] == edges]
            plt.multiple_bar(
                [f"{c:g}" for c in centres],
                [list(r["counts"]) for r in same],
                # textual-plotext's stub types one colour, not one per series
                color=[run_color(i) for i in range(len(same))],  # type: ignore[arg-type]
            )
        plt.title(title)
        plt.xlabel("score (bin centre); bars: runs 1..n")
        self.refresh()

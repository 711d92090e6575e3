"""The ROC curve of the per-work DE-COP accuracies (suspect = positive), drawn with
textual-plotext: the chance diagonal, the curve before calibration and, when the run
was calibrated, after. Only figures and fixed labels reach the plot (no stored text)."""

from __future__ import annotations

from textual_plotext import PlotextPlot

from screens.state.decop_view_data import Roc
from screens.widgets.decop_charts import fixed

CURVE_COLOR = (224, 122, 95)
CALIBRATED_COLOR = (106, 159, 216)
TICKS = [0.0, 0.25, 0.5, 0.75, 1.0]


class RocPlot(PlotextPlot):
    """ROC: x = false positive rate (clean works called suspect), y = true positive
    rate (suspect works called suspect), one point per distinct accuracy."""

    def show(
        self,
        roc: Roc | None,
        roc_calibrated: Roc | None,
        auc: float | None,
        auc_calibrated: float | None,
    ) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.plot([0, 1], [0, 1], marker="dot", color="gray", label="chance")
        if roc is not None:
            plt.plot(
                roc.fpr, roc.tpr, marker="braille", color=CURVE_COLOR, label=f"AUC {fixed(auc)}"
            )
        if roc_calibrated is not None:
            plt.plot(
                roc_calibrated.fpr,
                roc_calibrated.tpr,
                marker="braille",
                color=CALIBRATED_COLOR,
                label=f"calibrated {fixed(auc_calibrated)}",
            )
        plt.xlim(0, 1)
        plt.ylim(0, 1)
        plt.xticks(TICKS)
        plt.yticks(TICKS)
        plt.title("ROC, suspect vs clean works")
        if roc is None:
            plt.xlabel("needs suspect and clean works")
        self.refresh()

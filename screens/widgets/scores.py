"""The score line at the top of the generation view: every metric with its threshold
and whether it is flagged."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from copyaudit.judges.metric_facts import format_metric
from db.browse import JudgmentView
from screens.plain import plain


def scores_text(judgments: Sequence[JudgmentView]) -> Text:
    """'rougeL 0.931 (≥ 0.8) FLAGGED · rouge1 0.95 · ...'; errors shown in place."""
    if not judgments:
        return Text("not judged yet", style="italic dim")
    ambiguous = {j.metric for j in judgments if sum(k.metric == j.metric for k in judgments) > 1}
    parts: list[Text] = []
    for judgment in judgments:
        part = Text(end="")
        part.append_text(plain(judgment.key.label(judgment.metric in ambiguous), "bold"))
        part.append(f" {format_metric(judgment.metric, judgment.value)}")
        if judgment.threshold is not None:
            part.append(f" (≥ {judgment.threshold:g})", style="dim")
        if judgment.flagged:
            part.append(" FLAGGED", style="bold white on red")
        if judgment.error:
            part.append_text(plain(f" ({judgment.error})", "italic red"))
        parts.append(part)
    return Text(" · ", style="dim", end="").join(parts)

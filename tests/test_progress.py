"""Progress lines: the rate/ETA text the app and the CLI show, and the CLI's plain lines
when its output is a log file rather than a terminal."""

from __future__ import annotations

import io

from rich.console import Console

from copyaudit.cli.evaluate import RichProgress
from copyaudit.runs.progress import Progress, format_seconds


def test_describe_counts_rate_and_eta() -> None:
    p = Progress("r", "generate", 12, 40, 0.04, 700.0)
    assert p.describe() == "generate 12/40 (30%) · 0.04/s · ETA 11 min 40 s"
    assert Progress("r", "judge", 40, 40, 25.0, 0.0).describe("judge literal") == (
        "judge literal 40/40 (100%) · 25.0/s"
    )
    assert Progress("r", "load", 0, 0, 0.0, None, "loading model x").describe() == (
        "loading model x"
    )
    assert Progress("r", "generate", 0, 5, 0.0, None, "starting").describe() == (
        "generate 0/5 (0%)"
    )
    assert [format_seconds(s) for s in (0.4, 59, 61, 3600 + 120)] == [
        "0 s",
        "59 s",
        "1 min 01 s",
        "1 h 02 min",
    ]


def test_cli_progress_in_a_log_prints_plain_throttled_lines() -> None:
    out = io.StringIO()
    progress = RichProgress(console=Console(file=out, force_terminal=False, width=200))
    progress.LOG_EVERY_S = 3600.0  # only the first and the last line of each phase
    progress(Progress("r", "load", 0, 0, 0.0, None, "loading model [bold]m[/bold]"))
    for done in range(0, 4):
        progress(Progress("r", "generate", done, 3, 1.5, 2.0 if done < 3 else 0.0))
    progress(Progress("r", "judge", 0, 2, 0.0, None, "literal"))
    progress(Progress("r", "judge", 2, 2, 4.0, 0.0, "literal"))
    assert out.getvalue().splitlines() == [
        "loading model [bold]m[/bold]",
        "generate 0/3 (0%) · 1.50/s · ETA 2 s",
        "generate 3/3 (100%) · 1.50/s",
        "judge literal 0/2 (0%)",
        "judge literal 2/2 (100%) · 4.00/s",
    ]

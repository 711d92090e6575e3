"""Whether the app's terminal is still there.

Closing the terminal (a window, an ssh session, a killed tmux) hangs up its tty. A
process in the terminal's foreground group then gets SIGHUP and ends; one that does
not (the app under `make demo`: make takes the hang-up, the app is left behind) keeps
running with a terminal that reads as end of file for ever, and Textual's input thread
(8.x) then selects and reads in a busy loop: 80-100% of a core, the database held open.
The app polls its input for POLLHUP and exits when it comes (every label is already
committed: nothing is lost)."""

from __future__ import annotations

import select
import sys

CHECK_EVERY_S = 2.0  # how often the app looks (a poll of one descriptor: nothing)
_GONE = select.POLLHUP | select.POLLERR | select.POLLNVAL


def hung_up(fd: int) -> bool:
    """Whether the terminal (or pipe) on `fd` has hung up, without reading from it."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return any(events & _GONE for _, events in poller.poll(0))


def input_fd() -> int | None:
    """The descriptor the app reads keys from (Textual's driver: the process's stdin),
    None where there is none."""
    stdin = sys.__stdin__
    if stdin is None:
        return None
    try:
        return stdin.fileno()
    except (OSError, ValueError):
        return None

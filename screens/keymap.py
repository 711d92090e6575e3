"""The key scheme in one place: which actions write audit events, the check that such a
key never moves anything on any screen, and the key table of docs/app.md made from the bindings.

The scheme: label keys y/n/u (annotation mode) and review decisions 1-4 (case view) write
an event; z undoes the newest one (a new event); none of these keys is bound to moving,
opening or closing anything on any screen. Moving is Esc (back, everywhere), N/P (next /
previous generation or case), j/k and the arrows (items, rows), ]/[ (evidence), Tab (panes).
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.binding import Binding

from copyaudit.render.doc_regions import region, with_region
from screens.app import CopyauditApp
from screens.help import help_sections, key_display, own_bindings

AUDIT_ACTIONS = frozenset({"label", "set_status", "undo"})  # each writes an audit event
FILTER_ACTIONS = frozenset({"toggle"})  # a list filter: changes what is shown, nothing else
TABLE_REGION = "keys"  # docs/app.md's generated region (copyaudit.render.doc_regions)


def action_name(action: str) -> str:
    """'label' from "label('yes')", 'quit' from 'app.quit'."""
    return action.split("(", 1)[0].rsplit(".", 1)[-1]


def sections() -> list[tuple[str, list[Binding]]]:
    """Every screen's own bindings, in the help's order."""
    return [(title, own_bindings(cls)) for title, cls in help_sections(CopyauditApp)]


def collisions(listed: Iterable[tuple[str, list[Binding]]] | None = None) -> list[str]:
    """Each binding of a key that writes an audit event somewhere to anything but an
    audit action or a list filter, on any screen ("" when the scheme holds)."""
    listed = list(sections() if listed is None else listed)
    writing = {
        b.key for _, bindings in listed for b in bindings if action_name(b.action) in AUDIT_ACTIONS
    }
    allowed = AUDIT_ACTIONS | FILTER_ACTIONS
    return [
        f"{title}: {b.key} is {b.action}, but writes an audit event elsewhere"
        for title, bindings in listed
        for b in bindings
        if b.key in writing and action_name(b.action) not in allowed
    ]


def key_table() -> str:
    """The key table of docs/app.md: one row per screen, its keys and what they do."""
    rows = ["| screen | keys |", "|---|---|"]
    for title, bindings in sections():
        if not bindings:
            continue
        keys = ", ".join(
            f"`{key_display(b)}` {b.description or b.action}".replace("|", "\\|") for b in bindings
        )
        rows.append(f"| {title} | {keys} |")
    return "\n".join(rows)


def readme_table(readme: str) -> str | None:
    """The key table as docs/app.md holds it (None when the markers are missing)."""
    return region(readme, TABLE_REGION)


def with_table(readme: str) -> str:
    """`readme` with its key table replaced by the one made from the bindings now."""
    return with_region(readme, TABLE_REGION, key_table())


if __name__ == "__main__":  # rewrite the table: python -m screens.keymap docs/app.md
    import sys
    from pathlib import Path

    if len(sys.argv) > 1:
        path = Path(sys.argv[1])
        path.write_text(with_table(path.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        print(key_table())

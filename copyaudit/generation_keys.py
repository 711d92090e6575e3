"""A generation's key, run/case_id/template, as people, exports and label files name it.

Case ids may contain '/' (DE-COP's always do: Title_-_Author/…); run names may not, so a
key reads one way only: the run is what comes before the first '/', the template what
comes after the last, the case id what lies between. (Runs named with a '/' before this
rule were renamed by a migration, db.migrations.migrate_run_names; keys written with
their old names still resolve, see db.generation_keys.)
"""

from __future__ import annotations

import re
from typing import NamedTuple

from copyaudit.errors import UserError


class GenerationKey(NamedTuple):
    run: str
    case_id: str
    template: int

    def __str__(self) -> str:
        return f"{self.run}/{self.case_id}/{self.template}"


def check_run_name(name: str) -> str:
    """`name` if it can name a run; UserError if empty or containing '/'."""
    if not name or not name.strip():
        raise UserError("a run name cannot be empty")
    if "/" in name:
        raise UserError(
            f"run name {name!r} contains '/': a generation is named run/case_id/template, "
            "so a run name cannot contain '/' (use '-' or '_')"
        )
    return name


_TEMPLATE = re.compile(r"[0-9]{1,18}")


def split_key(key: str) -> GenerationKey | None:
    """The key's run, case id and template; None if it is not run/case_id/template."""
    run, slash, rest = key.partition("/")
    case_id, slash2, template = rest.rpartition("/")
    # ASCII digits that fit SQLite's integer: int() refuses other Unicode digits ('²')
    # and strings over 4,300 digits, and no stored template is that large
    if not (slash and slash2 and run and case_id and _TEMPLATE.fullmatch(template)):
        return None
    return GenerationKey(run, case_id, int(template))

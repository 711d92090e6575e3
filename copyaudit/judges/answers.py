"""Reading a judge model's short answer ("yes"/"no", "attributable"/"not attributable").

Models rarely answer with the bare word: 'The answer is "yes."', "Answer: Yes",
"**No**", "  Not attributable." all occur. `read_choice` strips what commonly comes
around the word (whitespace, Markdown emphasis, quotes, an "Answer:" label or an
"The answer is" lead-in) and accepts the answer when it then starts with one of the
choices as a whole word; anything else is None (unparseable), never a default.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# Each pass removes one layer; repeated until nothing changes ("**Answer:** "Yes"").
_NOISE = re.compile(r"^[\s\"'“”‘’`*_>#\-.:(\[]+")
_LEAD_IN = re.compile(
    r"^(?:(?:final\s+)?answer|output|response|verdict|judg(?:e)?ment|result|label)\s*[:=\-]"
    r"|^(?:the\s+|my\s+)?(?:final\s+)?answer\s+(?:is|would\s+be)\b",
    re.IGNORECASE,
)

YES_NO: dict[str, bool] = {"yes": True, "no": False}
# "not attributable" before "attributable": the longer choice is tried first.
ATTRIBUTABLE: dict[str, bool] = {"not attributable": False, "attributable": True}


def answer_core(text: str) -> str:
    """The answer with its usual wrapping removed (see the module docstring)."""
    core = text
    while True:
        stripped = _LEAD_IN.sub("", _NOISE.sub("", core), count=1)
        if stripped == core:
            return core
        core = stripped


def read_choice(text: str, choices: Mapping[str, bool]) -> bool | None:
    """The verdict of the first choice the answer starts with, or None."""
    core = answer_core(text).lower()
    for word in sorted(choices, key=len, reverse=True):
        pattern = r"\s+".join(re.escape(part) for part in word.split())
        if re.match(rf"{pattern}(?![\w-])", core):
            return choices[word]
    return None

"""The launcher's fields: which suite kinds each applies to, how each is named in a
message (never as a command-line flag), and which are remembered between visits."""

from __future__ import annotations

from collections.abc import Sequence

from copyaudit.runs.launch_plan import Conflict
from copyaudit.studies.registry import STUDIES, prompt_kinds

GENERATION_KINDS = frozenset(prompt_kinds())  # prompted for a generation
# field container id -> the suite kinds it applies to (fields not named apply to all):
# the generation fields, then each study's own (StudySpec.run_fields)
FIELD_KINDS: dict[str, frozenset[str]] = {
    "templates-field": GENERATION_KINDS,
    "mitigation-field": GENERATION_KINDS,
    "judges-field": GENERATION_KINDS,
    "judge-models-field": GENERATION_KINDS,
    **{
        field: frozenset(k for k, s in STUDIES.items() if field in s.run_fields)
        for spec in STUDIES.values()
        for field in sorted(spec.run_fields)
    },
}
LIMIT_LABELS: dict[str | None, str] = {
    **{kind: spec.limit_label for kind, spec in STUDIES.items() if spec.limit_label},
    None: "Limit (first N cases)",
}
# request field -> (the form widget, its label): how a conflict or an error is named
FIELDS: dict[str, tuple[str, str]] = {
    "suite": ("suite", "Suite"),
    "model": ("model", "Model"),
    "backend": ("base_url", "Endpoint URL"),
    "base_url": ("base_url", "Endpoint URL"),
    "templates": ("templates", "Templates"),
    "limit": ("limit", "Limit"),
    "passages_per_work": ("limit", "Passages per work"),
    "mitigation": ("mitigation", "Mitigation"),
    "judges": ("judges", "Judges"),
    "judge_model": ("judge_model", "Judge model"),
    "event_model": ("event_model", "Event model"),
    "judge_backend": ("judge_base_url", "Judges' endpoint URL"),
    "judge_base_url": ("judge_base_url", "Judges' endpoint URL"),
    "judge_api_key_env": ("judge_api_key_env", "Judges' key variable"),
    "notice_position": ("notice_position", "Notice placement"),
    "notice_mitigation": ("notice_mitigation", "Notice mitigation"),
    "calibrate_on": ("calibrate_on", "DE-COP calibration"),
    "length": ("length", "DE-COP length"),
    "name": ("name", "Run name"),
}
# command-line flags in the engine's messages -> the field they are on this form
FLAG_FIELDS = {
    "--calibrate-on": "calibrate_on",
    "--passages-per-work": "passages_per_work",
    "--templates": "templates",
    "--limit": "limit",
    "--mitigation": "mitigation",
    "--judges": "judges",
    "--judge-base-url": "judge_base_url",
    "--judge-api-key-env": "judge_api_key_env",
    "--base-url": "base_url",
    "--model": "model",
    "--name": "name",
}
REMEMBERED = (  # form fields remembered between visits (the run name is not)
    "suite",
    "model",
    "base_url",
    "templates",
    "limit",
    "mitigation",
    "judges",
    "judge_model",
    "event_model",
    "judge_base_url",
    "judge_api_key_env",
    "notice_position",
    "notice_mitigation",
    "calibrate_on",
)
SETTINGS_SCOPE = "launcher"


def field_label(field: str) -> str:
    """The form's label for a request field ('shots' and other CLI-only options: the
    option itself, said to be set from the command line)."""
    if field in FIELDS:
        return FIELDS[field][1]
    return f"{field} (a command-line option, not on this form)"


def for_the_form(message: str) -> str:
    """An engine message with its command-line flags named as this form's fields."""
    for flag, field in FLAG_FIELDS.items():
        message = message.replace(flag, field_label(field))
    return message


def _shown(value: object) -> str:
    if value is None:
        return "empty"
    if isinstance(value, tuple | list):
        if len(value) == 2 and isinstance(value[1], list):  # DE-COP calibration
            mode, works = value
            return mode if not works else f"{mode}: {', '.join(map(str, works))}"
        return ",".join(str(v) for v in value)
    return str(value)


def conflict_message(name: str, conflicts: Sequence[Conflict]) -> str:
    """'run NAME exists with another configuration (Templates: 1 there, 1,2 here). ...'"""
    differences = "; ".join(
        f"{field_label(c.field)}: {_shown(c.stored)} there, {_shown(c.requested)} here"
        for c in conflicts
    )
    return (
        f"run '{name}' exists with another configuration ({differences}). To resume it, "
        f"set {field_label(conflicts[0].field)} as it was; for a new run, give another "
        "Run name."
    )

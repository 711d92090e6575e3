"""The context pane of the generation view: the prompt and what the output is compared
with, by task kind (reference text, events and characters, DE-COP options, notice
snippet with its notice and query)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text

from copyaudit.studies.registry import STUDIES
from db.browse import GenerationDetail
from screens.plain import plain
from screens.widgets.evidence import LITERAL_STYLE, character_style

HEADING = "bold underline"


def _section(title: str, first: bool = False) -> Text:
    heading = Text("" if first else "\n", end="")
    heading.append(title, style=HEADING)
    heading.append("\n")
    return heading


def _prompt(detail: GenerationDetail) -> Text:
    if detail.prompt:
        return Text.assemble(_section("Prompt", first=True), plain(detail.prompt))
    payload = detail.payload
    case_input = payload.get("input") or payload.get("query") or payload.get("prefix")
    note = Text("(no stored prompt: imported generation; the case input)\n", style="italic dim")
    return Text.assemble(_section("Prompt", first=True), note, plain(case_input or ""))


def _literal_reference(detail: GenerationDetail) -> Text:
    reference = plain(detail.payload.get("reference", ""))
    for judgment in detail.judgments:
        if judgment.metric == "rougeL":
            for start, end in (judgment.evidence.get("extra") or {}).get("reference_spans", []):
                reference.stylize(LITERAL_STYLE, int(start), int(end))
            break
    return Text.assemble(_section("Reference"), reference)


def _verdicts(detail: GenerationDetail, target: str) -> dict[int, bool | None]:
    """Item index -> the judge's verdict (None: the judge could not read its answer)."""
    for judgment in detail.judgments:
        if judgment.target == target:
            return {
                int(i["index"]): None if i.get("verdict") is None else bool(i["verdict"])
                for i in judgment.evidence.get("items") or []
            }
    return {}


def _nonliteral_reference(detail: GenerationDetail) -> Text:
    out = Text(end="")
    out.append_text(_section("Reference events"))
    verdicts = _verdicts(detail, "event")
    for index, event in enumerate(detail.payload.get("reference_events") or []):
        mark = {True: "✓", None: "?"}.get(verdicts.get(index, False), " ")
        out.append(f"{mark} [{index + 1}] ", style="bold #87afff")
        out.append_text(plain(event))
        out.append("\n")
    out.append_text(_section("Reference characters"))
    verdicts = _verdicts(detail, "character")
    for index, aliases in enumerate(detail.payload.get("reference_characters") or []):
        names = aliases if isinstance(aliases, list) else [aliases]
        mark = "✓" if verdicts.get(index) else " "
        out.append(f"{mark} ")
        out.append("■ ", style=character_style(index))
        out.append_text(plain(" / ".join(str(n) for n in names)))
        out.append("\n")
    return out


def _decop_options(payload: dict[str, Any]) -> Text:
    out = _section("Options")
    answer = payload.get("answer")
    for index, option in enumerate(payload.get("options") or []):
        letter = "ABCD"[index] if index < 4 else str(index)
        out.append(f"{letter}. ", style="bold")
        if index == answer:
            out.append("(verbatim) ", style="bold green")
        out.append_text(plain(option))
        out.append("\n")
    return out


def _notice(payload: dict[str, Any]) -> Text:
    out = _section("Snippet")
    out.append_text(plain(payload.get("snippet", "")))
    out.append_text(_section(f"Notice ({payload.get('notice_level', '?')})"))
    out.append_text(plain(payload.get("notice") or "(none)"))
    out.append_text(_section(f"Query ({payload.get('task', '?')})"))
    out.append_text(plain(payload.get("query", "")))
    return out


def _qa_reference(detail: GenerationDetail) -> Text:
    return Text.assemble(_section("Reference answer"), plain(detail.payload.get("reference")))


def _study_reference(detail: GenerationDetail) -> Text:
    """A kind without a view of its own: its study's reference blocks (the dossier's)."""
    spec = STUDIES.get(detail.kind)
    blocks = spec.reference(detail.kind, detail.payload, []) if spec else []
    out = Text(end="")
    for block in blocks:
        out.append_text(Text.assemble(_section(block.title), plain(block.plain())))
    return out


# kind -> its styled reference view (spans, verdict ticks, the verbatim option)
VIEWS: dict[str, Callable[[GenerationDetail], Text]] = {
    "literal": _literal_reference,
    "nonliteral": _nonliteral_reference,
    "qa": _qa_reference,
    "decop": lambda detail: _decop_options(detail.payload),
    "notice": lambda detail: _notice(detail.payload),
}


def context_text(detail: GenerationDetail) -> Text:
    """Prompt, then the kind's reference material, all as plain text."""
    parts = [_prompt(detail), VIEWS.get(detail.kind, _study_reference)(detail)]
    if detail.error:
        parts.append(Text.assemble(_section("Generation error"), plain(detail.error, "red")))
    return Text("\n", end="").join(parts)

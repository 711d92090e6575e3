"""A dossier as Markdown: one section per part, highlights as **emphasis**.

Stored text is escaped so that a Markdown renderer shows it literally: inline
markup characters and '<' / '>' / '&' (raw HTML such as <script>) are backslash
escaped, and a line that would start a heading, quote, list or code block has its
first character escaped too. Line breaks are kept as hard breaks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from copyaudit.anchors import anchor_markdown
from copyaudit.hashing import stable_json
from copyaudit.items import item_name, item_number
from copyaudit.render.align import align
from copyaudit.render.highlight import Segment
from copyaudit.render.markdown import table
from copyaudit.reports.dossier import model
from copyaudit.reports.dossier.model import Dossier, ReferenceBlock, flag_text, verdict_text
from copyaudit.reports.dossier.traced import TRACED_HEADER, traced_cells
from copyaudit.reports.people import PEOPLE_TITLE
from copyaudit.reports.pz_window import (
    SCHEME_HEADER,
    PzWindow,
    scheme_cells,
    token_header,
    token_rows,
)
from copyaudit.timestamps import utc_text
from copyaudit.untrusted import visible_bidi
from copyaudit.verification.quality import quality_line
from db.content import with_version

_INLINE = re.compile(r"([\\`*_{}\[\]()<>&#|~!])")
_BLOCK_START = re.compile(r"^(\d*)([-+=>.)])")  # "- x", "1. x", "> x" ...


def md_escape(text: object) -> str:
    """Escape Markdown inline markup and raw HTML in one line of stored text; its
    bidirectional controls shown as escapes (visible_bidi)."""
    if text is None:
        return ""
    return _INLINE.sub(r"\\\1", visible_bidi(str(text)).replace("\n", " "))


# The longest verbatim run between these brackets (Markdown has no second highlight).
RUN_OPEN, RUN_CLOSE = "⟦", "⟧"


def _merged(pieces: Sequence[tuple[str, bool, str, str]]) -> list[tuple[str, bool, str, str]]:
    """Neighbouring pieces of the same emphasis, no bracket between them, as one (so
    that two marked segments read **ab**, not **a****b**)."""
    out: list[tuple[str, bool, str, str]] = []
    for piece in pieces:
        if out and out[-1][1] == piece[1] and not out[-1][3] and not piece[2]:
            text, marked, before, _ = out[-1]
            out[-1] = (text + piece[0], marked, before, piece[3])
        else:
            out.append(piece)
    return out


def _line(pieces: Sequence[tuple[str, bool, str, str]]) -> str:
    """One source line: (text, highlighted, raw text before, raw text after) pieces ->
    escaped Markdown."""
    out: list[str] = []
    for number, (text, marked, before, after) in enumerate(_merged(pieces)):
        escaped = md_escape(text)
        if number == 0:
            stripped = escaped.lstrip(" \t")
            indent = escaped[: len(escaped) - len(stripped)].replace("\t", "    ")
            escaped = "&nbsp;" * len(indent) + _BLOCK_START.sub(r"\1\\\2", stripped)
        core = escaped.strip()
        if marked and core:
            lead = escaped[: len(escaped) - len(escaped.lstrip())]
            trail = escaped[len(escaped.rstrip()) :]
            escaped = f"{lead}**{core}**{trail}"
        out.append(before + escaped + after)
    return "".join(out)


def _bold(segment: Segment) -> bool:
    """Evidence other than the verbatim run (which is bracketed) is bold."""
    return any(kind != "verbatim" for kind in segment.kinds)


def highlighted(segments: Sequence[Segment]) -> str:
    """Segments as Markdown lines (hard breaks), marked pieces in bold, the longest
    verbatim run between RUN_OPEN and RUN_CLOSE."""
    lines: list[list[tuple[str, bool, str, str]]] = [[]]
    for index, segment in enumerate(segments):
        in_run = "verbatim" in segment.kinds
        opens = in_run and (index == 0 or "verbatim" not in segments[index - 1].kinds)
        closes = in_run and (
            index + 1 == len(segments) or "verbatim" not in segments[index + 1].kinds
        )
        pieces = segment.text.split("\n")
        for number, piece in enumerate(pieces):
            if number:
                lines.append([])
            before = RUN_OPEN if opens and number == 0 else ""
            after = RUN_CLOSE if closes and number == len(pieces) - 1 else ""
            if piece or before or after:
                lines[-1].append((piece, _bold(segment), before, after))
    rendered = [_line(pieces) for pieces in lines]
    return "  \n".join(rendered) if any(rendered) else "_(empty)_"


def _table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    return table(header, rows, escape=md_escape)


def _json(value: object) -> list[str]:
    text = stable_json(value).replace("```", "` ` `")
    return ["```json", text, "```"]


def _case(d: Dossier) -> list[str]:
    g = d.generation
    work = ", ".join(str(x) for x in (g["title"], g["author"], g["year"]) if x is not None)
    return _table(
        ["field", "value"],
        [
            ("generation", d.key),
            ("run", g["run"]),
            ("suite (task kind)", f"{g['suite']} ({g['kind']})"),
            *([("suite rows", g["suite_note"])] if g.get("suite_note") else []),
            ("case", f"{g['case_id']} (content hash {g['content_hash']})"),
            ("work", f"{work} (membership {g['membership']})"),
            ("generation source", g["source"]),
            ("tokens / seconds", f"{g['tokens'] or '—'} / {g['seconds'] or '—'}"),
            ("generation error", g["error"] or "none"),
            ("review status", with_version(d.review["status"], d.review.get("stale"))),
        ],
    )


def _source(d: Dossier) -> list[str]:
    return _table(["field", "value"], model.source_rows(d))


def _glossary(d: Dossier) -> list[str]:
    return [f"> **{md_escape(t)}**: {md_escape(m)}  " for t, m in model.glossary_entries(d)]


def _prompt(d: Dossier) -> list[str]:
    note = [f"_{md_escape(d.prompt_note)}_", ""] if d.prompt_note else []
    return [*note, highlighted([Segment(d.prompt, ())])]


def _texts(d: Dossier) -> list[str]:
    lines = ["Highlighted (**bold**): the judges' evidence in the output and the reference.", ""]
    run = model.verbatim_line(d)
    if run:
        lines += [f"Longest verbatim run (between {RUN_OPEN} {RUN_CLOSE}): {md_escape(run)}", ""]
    lines += ["### Output", "", highlighted(d.output), ""]
    for block in d.reference:
        lines += [f"### Reference: {md_escape(block.title)}", "", highlighted(block.segments), ""]
    aligned = model.aligned_block(d)
    if aligned is not None:
        lines += [f"### Aligned passages: output and {md_escape(aligned.title.lower())}", ""]
        lines += [*_aligned(d, aligned), ""]
    evidence = sorted({m.label for s in d.output for m in s.marks})
    if evidence:
        lines += ["Evidence in the output: " + "; ".join(md_escape(e) for e in evidence), ""]
    return lines


def _counted(name: str, span: tuple[int, int]) -> str:
    return f"{name} {span[0] + 1}–{span[1]}" if span[1] > span[0] else ""


def _aligned(d: Dossier, block: ReferenceBlock) -> list[str]:
    """Output and reference passage by passage (copyaudit.render.align), one row each,
    with the passage's characters (counted from 1) in both texts."""
    output = "".join(s.text for s in d.output)
    reference = "".join(s.text for s in block.segments)
    rows = [
        (
            "; ".join(
                x
                for x in (
                    row.kind,
                    _counted("output", row.output),
                    _counted("reference", row.reference),
                )
                if x
            ),
            output[row.output[0] : row.output[1]],
            reference[row.reference[0] : row.reference[1]],
        )
        for row in align(output, reference)
    ]
    return _table(["passage (characters)", "output", "reference"], rows)


def _items(d: Dossier) -> list[str]:
    if not d.items:
        return ["No judge verdicts or human labels on items."]
    rows = [
        (
            item["target"],
            item_number(item["target"], item["index"]),
            item["text"],
            "; ".join(verdict_text(v) for v in item["verdicts"]),
            "; ".join(
                f"{name}: {lab['label']}" + (f" ({lab['note']})" if lab["note"] else "")
                for name, lab in sorted(item["labels"].items())
            ),
        )
        for item in d.items
    ]
    return _table(["target", "item", "reference item", "judge verdicts", "human labels"], rows)


def _traced(d: Dossier) -> list[str]:
    if not d.traced:
        return ["The trace judge found no span of the output in the library."]
    return _table(TRACED_HEADER, [traced_cells(row) for row in d.traced])


def _pz(w: PzWindow) -> list[str]:
    lines = [
        f"Prefix: {md_escape(w.prefix)}",
        "",
        f"Reference suffix: {md_escape(w.reference)}",
        "",
        f"Greedy continuation: {md_escape(w.greedy_output)}",
        "",
    ]
    lines += _table(SCHEME_HEADER, [scheme_cells(f) for f in w.schemes])
    lines += ["", "Per token:", ""]
    lines += _table(
        token_header(w),
        [
            (n, token, *(f"{p} (lowest)" if low else p for p, low in ps))
            for n, token, ps in token_rows(w)
        ],
    )
    return [*lines, "", f"Scored again by: {md_escape(w.replay)}"]


def _judges(d: Dossier) -> list[str]:
    if not d.judgments:
        return ["Not judged."]
    lines = _table(
        ["judge", "version", "config hash", "metric", "value", "threshold", "verdict", "error"],
        [
            (
                j["judge"],
                j["judge_version"],
                j["judge_hash"],
                j["metric"],
                *model.judgment_figures(j),
                flag_text(j["flagged"]) if j["evidence"].get("threshold") is not None else "—",
                j["evidence"].get("error"),
            )
            for j in d.judgments
        ],
    )
    if d.quality:
        lines += ["", "Measured against people (the whole run):", ""]
        lines += [f"- {md_escape(quality_line(q))}" for q in d.quality]
    if d.people:
        lines += ["", f"{PEOPLE_TITLE}:", ""]
        lines += [f"- {md_escape(line)}" for line in d.people]
    configs = {j["judge_hash"]: (j["judge"], j["judge_config"]) for j in d.judgments}
    for judge_hash, (name, config) in sorted(configs.items(), key=lambda kv: str(kv[0])):
        lines += ["", f"Config of {md_escape(name)} ({md_escape(judge_hash)}):", "", *_json(config)]
    return lines


def _provenance(d: Dossier) -> list[str]:
    g = d.generation
    lines = _table(
        ["field", "value"],
        [
            ("backend", g["backend"]),
            ("model", g["model"]),
            ("model revision", g["model_revision"] or "—"),
            ("prompt template", d.template["id"]),
            ("run templates", g["templates"]),
            ("mitigation", g["mitigation"]),
            ("run config hash", g["config_hash"]),
            ("code version (run)", g["code_version"] or "—"),
            ("run status", g["run_status"]),
            ("generated at", utc_text(g["created_at"])),
        ],
    )
    lines += ["", "Prompt template:", "", *_json(d.template)]
    lines += ["", "Decoding:", "", *_json(g["decoding"])]
    lines += ["", "Run config:", "", *_json(g["config"])]
    return lines


def _labels(d: Dossier) -> list[str]:
    if not d.labels:
        return ["No current human labels."]
    return _table(
        ["annotator", "target", "item", "label", "note", "at", "event"],
        [
            (
                x["annotator"],
                x["target"],
                item_number(x["target"], x["item_index"]),
                with_version(x["label"], x.get("stale")),
                x["note"],
                utc_text(x["created_at"]),
                x["uuid"],
            )
            for x in d.labels
        ],
    )


def _review(d: Dossier) -> list[str]:
    r = d.review
    lines = [
        f"Status: **{md_escape(r['status'])}**; reviewer {md_escape(r['reviewer'] or '—')}; "
        f"since {md_escape(utc_text(r['created_at']))}; note: {md_escape(r['note'] or '—')}",
        "",
        "### History",
        "",
    ]
    if not d.history:
        return [*lines, "No events."]
    return lines + _table(
        ["at", "event", "who", "item", "label / status", "note", "uuid", "chain #seq", "hash"],
        [
            (
                utc_text(h["created_at"]),
                h["kind"] + (f" of {h['supersedes']}" if h["supersedes"] else ""),
                h["who"],
                "" if h["target"] is None else item_name(h["target"], h["item_index"]),
                h["value"],
                h["note"],
                h["uuid"],
                f"{h['chain'][:8]} #{h['seq']}",
                h["hash"],
            )
            for h in d.history
        ],
    )


def _integrity(d: Dossier) -> list[str]:
    i = d.integrity
    problems = i["chain_problems"]
    verified = "all chains intact" if not problems else "BROKEN: " + "; ".join(problems)
    checkpoint = "" if i["checkpoint_complete"] else " (WAL checkpoint incomplete)"
    lines = _table(
        ["field", "value"],
        [
            ("database", i["database"]),
            ("database SHA-256", f"{i['sha256']}{checkpoint}"),
            ("audit chains", verified),
            ("exported at", utc_text(i["exported_at"])),
            ("exported with", i["exported_with"]),
            *([("exported by", i["exported_by"])] if i.get("exported_by") else []),
            *((f"SHA-256 of the {n}", d) for n, d in (i.get("text_sha256") or {}).items()),
        ],
    )
    if i.get("anchor"):
        lines += ["", "### Anchor", "", *anchor_markdown(i["anchor"])]
    if i["chain_heads"]:
        lines += [
            "",
            "### Chain heads",
            "",
            *_table(["chain", "head hash"], sorted(i["chain_heads"].items())),
        ]
    return lines


def dossier_markdown(d: Dossier) -> str:
    """The whole dossier as Markdown."""
    parts: list[tuple[str, list[str]]] = [
        ("Case", _case(d)),
        ("Source of the reference text", _source(d)),
        ("Glossary", _glossary(d)),
        ("Prompt", _prompt(d)),
        ("Output and reference", _texts(d)),
        *([("Traced to the library", _traced(d))] if d.traced is not None else []),
        *([("Extraction probability (p_z) of this window", _pz(d.pz))] if d.pz else []),
        ("Items: judge verdicts and human labels", _items(d)),
        ("Judges", _judges(d)),
        ("Provenance", _provenance(d)),
        ("Human labels", _labels(d)),
        ("Review", _review(d)),
        ("Integrity", _integrity(d)),
    ]
    lines = [f"# Case dossier: {md_escape(d.key)}", ""]
    for title, body in parts:
        lines += [f"## {title}", "", *body, ""]
    return "\n".join(lines).rstrip() + "\n"

"""A case dossier: everything needed to show where one generation's figures came from.

`build_dossier` gathers the prompt, output and reference with the judges' evidence
highlighted, every judge figure with its threshold and provenance (run model and
revision, prompt template, decoding, judge name + version + config hash, code
version), the human labels and notes, the review status with the case's full event
history, and the database's SHA-256 and audit-chain heads at export time.
`write_dossier` renders it as self-contained HTML, Markdown or PDF (renderers in
copyaudit.reports.dossier.html, .markdown and .pdf; every stored text is escaped).
"""

from __future__ import annotations

import getpass
import hashlib
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from copyaudit import __version__
from copyaudit.errors import UserError
from copyaudit.hashing import stable_hash
from copyaudit.identity import remembered_annotator
from copyaudit.prompts import describe_templates
from copyaudit.render.highlight import output_marks, segments
from copyaudit.reports.anchor import current_anchor
from copyaudit.reports.dossier.html import dossier_html
from copyaudit.reports.dossier.markdown import dossier_markdown
from copyaudit.reports.dossier.model import Dossier, ReferenceBlock
from copyaudit.reports.dossier.pdf import dossier_pdf
from copyaudit.reports.dossier.traced import traced_rows
from copyaudit.reports.dossier.verbatim import verbatim_run
from copyaudit.reports.output_file import write_output
from copyaudit.reports.people import run_people_lines
from copyaudit.reports.pz_window import pz_window
from copyaudit.runs.lifecycle import code_version
from copyaudit.studies.registry import STUDIES
from copyaudit.studies.spec import payload_reference
from copyaudit.verification.quality import judge_quality
from db.audit import audit_events
from db.case_file import checkpoint, generation_record, judgments_with_provenance
from db.cases import suite_import_note
from db.clock import now
from db.events import chain_heads
from db.file_digest import database_file_sha256
from db.labels import current_labels, judge_verdicts
from db.library import library_works
from db.review import case_history, current_review
from db.runs import suite_id

if TYPE_CHECKING:
    from db import Store

RENDERERS: dict[str, Callable[[Dossier], str | bytes]] = {
    "md": dossier_markdown,
    "html": dossier_html,
    "pdf": dossier_pdf,
}
FORMATS = tuple(RENDERERS)


def _reference_blocks(kind: str, payload: dict[str, Any], judgments: list) -> list[ReferenceBlock]:
    """The case's reference material as its study shows it (StudySpec.reference)."""
    spec = STUDIES.get(kind)
    blocks = (spec.reference if spec else payload_reference)(kind, payload, judgments)
    return [ReferenceBlock(b.title, segments(b.plain(), list(b.marks))) for b in blocks]


def _item_text(payload: dict[str, Any], target: str, index: int) -> str:
    if target == "event":
        events = payload.get("reference_events") or []
        return str(events[index]) if 0 <= index < len(events) else "?"
    if target == "character":
        characters = payload.get("reference_characters") or []
        return " / ".join(map(str, characters[index])) if 0 <= index < len(characters) else "?"
    return "the whole output"


def _items(store: Store, record: dict[str, Any]) -> list[dict[str, Any]]:

    gid = int(record["id"])
    items: dict[tuple[str, int], dict[str, Any]] = {}

    def item(target: str, index: int) -> dict[str, Any]:
        text = _item_text(record["payload"], target, index)
        return items.setdefault(
            (target, index),
            {"target": target, "index": index, "text": text, "verdicts": [], "labels": {}},
        )

    for v in judge_verdicts(store, generation_ids=[gid]):
        item(v.target, v.item_index)["verdicts"].append(
            {
                "judge": v.judge,
                "metric": v.metric,
                "verdict": v.verdict,
                "score": v.score,
                "threshold": v.threshold,
                "excluded": v.excluded,
            }
        )
    for label in current_labels(store, generation_ids=[gid]):
        item(label.target, label.item_index)["labels"][label.annotator] = {
            "label": label.label,
            "note": label.note,
        }
    order = {"literal": 0, "refusal": 1, "event": 2, "character": 3}
    return [items[k] for k in sorted(items, key=lambda k: (order.get(k[0], 9), k))]


def _prompt(record: dict[str, Any]) -> tuple[str, str | None]:
    """The generation's prompt, else (imported without one) the case's input."""
    if record["prompt"]:
        return record["prompt"], None
    payload = record["payload"]
    case_input = payload.get("input") or payload.get("query") or ""
    return str(case_input), "the generation was imported without its prompt: this is the case input"


def _template(record: dict[str, Any]) -> dict[str, Any]:
    if record["source"] == "imported":
        return {
            "id": record["template"],
            "note": "imported generation: the prompt was not built by copyaudit",
        }
    now = describe_templates()
    described = now["kinds"].get(record["kind"], {}).get(str(record["template"]))
    stored = (record["config"] or {}).get("prompts")
    current = stable_hash(now)
    return {
        "id": record["template"],
        "description": described,
        "run_prompts_hash": stored,
        "current_prompts_hash": current,
        "unchanged_since_run": stored == current if stored else None,
    }


def integrity_figures(store: Store, db_path: Path, *, file_hash: bool = True) -> dict[str, Any]:
    """What ties an export to the database it came from: the file's SHA-256 (after a
    WAL checkpoint; None without `file_hash`: it reads the whole file, 1.3 s at 2 GB),
    the audit chains' heads and whether they verify, the current anchor
    (copyaudit.anchors), when and by what it was exported."""

    complete = checkpoint(store)
    return {
        "exported_at": now(),
        "copyaudit": __version__,
        "database": str(db_path),
        "sha256": database_file_sha256(db_path) if file_hash else None,
        "checkpoint_complete": complete,
        "chain_heads": chain_heads(store),
        "chain_problems": [str(f) for f in audit_events(store)],
        "anchor": current_anchor(store),
        "exported_with": code_version(),
    }


def build_dossier(store: Store, generation_id: int, db_path: Path | None = None) -> Dossier:
    """Gather every section of one generation's dossier (reads only)."""
    dossier = case_file(store, generation_id)
    dossier.integrity = integrity_figures(store, Path(db_path or store.path))
    dossier.integrity["exported_by"] = exporter()
    dossier.integrity["text_sha256"] = text_hashes(dossier)
    return dossier


def exporter() -> str:
    """Who exported: the remembered annotator name, and the system user it ran as."""
    user = getpass.getuser()
    name = remembered_annotator()
    return f"{name} (system user {user})" if name and name != user else user


def text_hashes(dossier: Dossier) -> dict[str, str]:
    """The full SHA-256 (UTF-8) of each text the exhibit shows: the output, the prompt
    and every reference text, so a reader can check each against its source."""
    texts = {"output": dossier.generation["output"] or "", "prompt": dossier.prompt}
    for block in dossier.reference:
        texts[block.title] = "".join(segment.text for segment in block.segments)
    return {name: hashlib.sha256(text.encode("utf-8")).hexdigest() for name, text in texts.items()}


def case_file(store: Store, generation_id: int, *, quality: bool = True) -> Dossier:
    """Every section of the dossier but the integrity figures (the database hash and
    chain heads, which read the whole file): what the reviewer's case view shows.
    Without `quality` the judges' quality against people (case_quality: it reads the
    whole run's labels and verdicts) and the run's people-level estimates are left
    empty, for the caller to add."""

    record = generation_record(store, generation_id)
    record["suite_note"] = suite_import_note(store, suite_id(store, record["suite"]))
    judgments = judgments_with_provenance(store, generation_id)
    labels = [
        {k: v for k, v in asdict(label).items() if k != "run"}
        for label in current_labels(store, generation_ids=[generation_id])
    ]
    prompt, prompt_note = _prompt(record)
    return Dossier(
        key=record["key"],
        generation=record,
        prompt=prompt,
        prompt_note=prompt_note,
        output=segments(record["output"] or "", output_marks(judgments)),
        reference=_reference_blocks(record["kind"], record["payload"], judgments),
        items=_items(store, record),
        judgments=judgments,
        template=_template(record),
        labels=labels,
        review=current_review(store, generation_id),
        history=[asdict(e) for e in case_history(store, generation_id)],
        quality=case_quality(store, record["run"], judgments) if quality else [],
        people=run_people_lines(store, record["run"], record["kind"]) if quality else [],
        verbatim=verbatim_run(judgments, record["output"] or ""),
        traced=traced_rows(judgments, {w.sha256: w.source for w in library_works(store)}),
        pz=pz_window(record, judgments),
    )


def case_quality(store: Store, run: str, judgments: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The run-level quality against people of the judge figures this generation has."""
    shown = {(j["judge"], j["metric"]) for j in judgments}
    return [q for q in judge_quality(store, run) if (q["judge"], q["metric"]) in shown]


def render_dossier(dossier: Dossier, fmt: str) -> str | bytes:
    """The dossier as Markdown or HTML text, or PDF bytes."""
    if fmt in RENDERERS:
        return RENDERERS[fmt](dossier)
    raise UserError(f"unknown dossier format '{fmt}' (one of {', '.join(FORMATS)})")


def write_dossier(
    store: Store, db_path: Path | None, generation_id: int, fmt: str, path: Path
) -> Path:
    """Render generation `generation_id`'s dossier as `fmt` (md|html|pdf) into `path`."""
    if fmt not in FORMATS:
        raise UserError(f"unknown dossier format '{fmt}' (one of {', '.join(FORMATS)})")

    text = render_dossier(build_dossier(store, generation_id, db_path), fmt)
    path = Path(path)
    # the app's own file beside the database: a newer dossier of the case replaces it
    write_output(path, text, database=Path(db_path or store.path), force=True)
    return path

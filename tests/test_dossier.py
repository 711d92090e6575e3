"""Case dossiers: every section, provenance, highlights, escaping, integrity figures."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from html import escape
from pathlib import Path

import pytest

from copyaudit.hashing import file_sha256, stable_hash
from copyaudit.prompts import describe_templates
from copyaudit.reports.dossier.build import write_dossier
from copyaudit.reports.dossier.markdown import md_escape
from db import Store
from db.events import append_label, chain_heads
from db.review import resolve_generation, review_queue
from db.runs import NewGeneration, RunSpec, add_generations, create_or_resume_run
from tests.conftest import database_fingerprint, write_jsonl
from tests.factories import literal_record

KEY = "gen/lit-1/2"
OUTPUT = (
    '<script>alert("x")</script> and the continuation number 1 follows here. '
    "*stars* _under_ [link](http://e.x) # hash | pipe"
)
NOTE = "<b>copied</b> *see* line 2"
HTML_SECTIONS = (
    "case",
    "prompt",
    "texts",
    "items",
    "judges",
    "provenance",
    "labels",
    "review",
    "integrity",
)
MD_SECTIONS = (
    "Case",
    "Prompt",
    "Output and reference",
    "Items: judge verdicts and human labels",
    "Judges",
    "Provenance",
    "Human labels",
    "Review",
    "Integrity",
)


@pytest.fixture
def case_db(tmp_path: Path, cli, db_path: Path) -> Path:
    """A generated run (with full provenance) whose output copies the reference and
    holds HTML and Markdown markup; judged by the real literal judge, labelled, reviewed."""
    cases = write_jsonl(tmp_path / "lit.jsonl", [literal_record(1)])
    assert cli("import", "literal", str(cases), "--suite", "lit").code == 0
    with Store(db_path) as store:
        spec = RunSpec(
            name="gen",
            suite="lit",
            backend="hf",
            model="tiny/model",
            model_revision="rev-abc123",
            templates=(2,),
            decoding={"greedy": True, "repetition_penalty": 1.1},
            config={"prompts": stable_hash(describe_templates())},
            code_version="copyaudit 0.1.0 (deadbee)",
        )
        run_id = create_or_resume_run(store, spec)
        case_pk = int(store.scalar("SELECT id FROM cases WHERE case_id = 'lit-1'"))
        add_generations(
            store, run_id, [NewGeneration(case_pk, 2, "Continue: <prefix> & more", OUTPUT, 30)]
        )
    assert cli("judge", "gen", "--judges", "literal").code == 0
    assert cli("--annotator", "ann", "review", "set", KEY, "escalated", "--note", NOTE).code == 0
    with Store(db_path) as store:
        append_label(
            store,
            generation_id=resolve_generation(store, KEY),
            annotator="ann",
            target="literal",
            item_index=0,
            label="yes",
            note=NOTE,
        )
    return db_path


def _marked(html: str) -> list[str]:
    return re.findall(r'<mark class="hl hl-literal" title="[^"]*">(.*?)</mark>', html)


def test_html_dossier_has_every_section_and_escapes_everything(case_db: Path, cli) -> None:
    result = cli("dossier", KEY, "--format", "html")
    assert result.code == 0, result.err
    html = result.out
    for section in HTML_SECTIONS:
        assert f'<section id="{section}">' in html
    # Escaped: model output, prompt, notes, reviewer names; no script element at all.
    assert "<script" not in html.lower()
    assert escape('<script>alert("x")</script>') in html
    assert "<b>" not in html and escape(NOTE) in html
    assert escape("Continue: <prefix> & more") in html
    # Highlights: the copied words in the output and in the reference, side by side.
    marked = _marked(html)
    assert len(marked) >= 2 and all("continuation number 1 follows here" in m for m in marked)
    # ... aligned passage by passage: the copied passage on one row, the rest beside a gap
    rows = re.findall(r'<tr class="row-([a-z-]+)"><td class="match">(.*?)</td>', html)
    assert [kind for kind, _ in rows] == ["output-only", "same", "output-only"]
    assert "output 29–71<br>reference 1–43" in rows[1][1]
    assert "<th>Reference continuation</th>" in html
    # Every judge figure with threshold and provenance.
    assert "rougeL" in html and "<td>0.800</td>" in html  # the threshold, as screens write it
    with Store(case_db) as store:
        judge_hash, version = store.query("SELECT hash, version FROM judge_configs")[0]
        uuids = [
            r[0] for r in store.query("SELECT uuid FROM labels UNION SELECT uuid FROM reviews")
        ]
        heads = chain_heads(store)
    assert judge_hash in html and f"<td>{version}</td>" in html
    for text in ("tiny/model", "rev-abc123", "repetition_penalty", "copyaudit 0.1.0 (deadbee)"):
        assert escape(text) in html
    assert "&quot;unchanged_since_run&quot;: true" in html  # the template's hashes
    # Labels, notes, review status, full history and the integrity figures.
    assert "ann" in html and "<strong>escalated</strong>" in html
    assert len(uuids) == 2 and all(u in html for u in uuids)
    assert len(heads) == 2 and all(h in html for h in heads.values())
    assert file_sha256(case_db) in html  # nothing was written since the export


def test_markdown_dossier_escapes_markup_and_bolds_evidence(case_db: Path, cli) -> None:
    result = cli("dossier", KEY)
    assert result.code == 0, result.err
    md = result.out
    for section in MD_SECTIONS:
        assert f"\n## {section}\n" in md
    assert "<script>" not in md and "\\<script\\>" in md
    assert "\\*stars\\* \\_under\\_ \\[link\\]\\(http://e.x\\) \\# hash \\| pipe" in md
    assert "*stars*" not in md.replace("\\*", "")  # no unescaped emphasis from the output
    assert "**and the continuation number 1 follows here**" in md
    copied = "and the continuation number 1 follows here."
    assert f"| same; output 29–71; reference 1–43 | {copied} | {copied} |" in md
    assert '| output only; output 1–27 | \\<script\\>alert\\("x"\\)\\</script\\> |  |' in md
    assert "\\<b\\>copied\\</b\\> \\*see\\* line 2" in md
    assert "<b>" not in md
    assert "rev-abc123" in md and "escalated" in md and file_sha256(case_db) in md
    judges = md.split("\n## Judges\n")[1].split("\n## ")[0]
    rows = [line for line in judges.splitlines() if "| rougeL |" in line]
    assert rows and all(re.search(r"\| \d\.\d{3} \|", row) for row in rows)  # 0.840
    assert not re.search(r"\d\.\d{5,}", judges)  # no raw float (0.8396946564885496)


def test_write_dossier_function_and_output_file(case_db: Path, tmp_path: Path, cli) -> None:
    with Store(case_db) as store:
        path = write_dossier(
            store, case_db, resolve_generation(store, KEY), "html", tmp_path / "d.html"
        )
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    out = tmp_path / "d.md"
    result = cli("dossier", KEY, "--format", "md", "-o", str(out))
    assert result.code == 0 and result.out == ""
    assert out.read_text(encoding="utf-8").startswith(f"# Case dossier: {KEY}")


def test_unknown_generation_is_a_clear_error(case_db: Path, cli) -> None:
    before = database_fingerprint(case_db)
    result = cli("dossier", "gen/lit-9/2")
    assert result.code == 2 and "no generation 'gen/lit-9/2'" in result.err
    assert database_fingerprint(case_db) == before


def test_demo_case_dossier(cli, tmp_path: Path) -> None:
    """A nonliteral demo case: imported (so the case input stands in for the prompt),
    character evidence highlighted, every section present in both formats."""
    db = tmp_path / "demo.db"
    assert (
        cli("demo", "--no-tui", "--no-pz-map", "--judges", "literal,characters,qa", db=db).code == 0
    )
    with Store(db) as store:
        top = review_queue(store, run="demo-nonliteral", limit=1)[0]
        append_label(
            store,
            generation_id=top.generation_id,
            annotator="ann",
            target="character",
            item_index=1,  # the second character: "character 2", as the lists number it
            label="yes",
        )
        second = json.loads(
            store.scalar(
                "SELECT c.payload FROM cases c JOIN generations g ON g.case_pk = c.id "
                "WHERE g.id = ?",
                (top.generation_id,),
            )
        )["reference_characters"][1]
        html = write_dossier(store, db, top.generation_id, "html", tmp_path / "d.html")
        md = write_dossier(store, db, top.generation_id, "md", tmp_path / "d.md")
    html_text = html.read_text(encoding="utf-8")
    md_text = md.read_text(encoding="utf-8")
    for section in HTML_SECTIONS:
        assert f'<section id="{section}">' in html_text
    for section in MD_SECTIONS:
        assert f"\n## {section}\n" in md_text
    assert "hl-character" in html_text and "Reference characters (aliases)" in html_text
    assert "imported without its prompt" in html_text
    assert escape(top.generation_key) in html_text and "characters" in md_text
    # Items are numbered from 1 everywhere a person reads them (lists, history, tables).
    assert f"| character | 2 | {' / '.join(second)} |" in md_text
    assert "| ann | character | 2 | yes |" in md_text
    assert "| label | ann | character 2 | yes |" in md_text
    assert "<td>character 2</td>" in html_text
    assert escape(f"[2] {' / '.join(second)}") in html_text and "[0]" not in html_text
    assert "\\[0\\]" not in md_text


def test_the_exhibit_gives_full_hashes_of_its_texts_and_who_exported_it(
    case_db: Path, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each hash is sha256 of the stored text itself (UTF-8), so a reader can check the
    output, the prompt and the reference against their sources without copyaudit."""
    import hashlib

    monkeypatch.setattr("getpass.getuser", lambda: "clerk")
    with Store(case_db) as store:
        row = store.conn.execute(
            "SELECT g.output, g.prompt, c.payload FROM generations g "
            "JOIN cases c ON c.id = g.case_pk WHERE g.id = ?",
            (resolve_generation(store, KEY),),
        ).fetchone()
    reference = json.loads(row["payload"])["reference"]
    md = cli("dossier", KEY).out
    html = cli("dossier", KEY, "--format", "html").out
    for name, text in (("output", row["output"]), ("prompt", row["prompt"]),
                       ("Reference continuation", reference)):  # fmt: skip
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        assert f"| SHA-256 of the {name} | {digest} |" in md
        assert digest in html
    assert "| exported by | clerk |" in md and "exported by" in html


def _page_texts(page: object) -> list[str]:
    """Every piece of text laid out on a page, its margin boxes included."""
    from weasyprint.formatting_structure import boxes

    def walk(box: object) -> Iterator[str]:
        if isinstance(box, boxes.TextBox):
            yield box.text
        for child in getattr(box, "children", None) or ():
            yield from walk(child)

    return list(walk(page._page_box))  # type: ignore[attr-defined]


def test_pdf_dossier_numbers_its_pages_and_prints_the_hash_footer_on_each(
    case_db: Path, cli, tmp_path: Path
) -> None:
    """`--format pdf` writes a real PDF; laid out, every page says "page X of Y" and
    carries the output's full SHA-256 and the database anchor's digest."""
    from copyaudit.anchors import anchor_digest
    from copyaudit.reports.dossier.build import build_dossier
    from copyaudit.reports.dossier.pdf import dossier_document

    assert cli("dossier", KEY, "--format", "pdf").code == 2  # no PDF to a terminal
    out = tmp_path / "d.pdf"
    result = cli("dossier", KEY, "--format", "pdf", "-o", str(out))
    assert result.code == 0, result.err
    assert out.read_bytes().startswith(b"%PDF-") and out.stat().st_size > 5000
    with Store(case_db) as store:
        dossier = build_dossier(store, resolve_generation(store, KEY), case_db)
    pages = dossier_document(dossier).pages
    output_hash = dossier.integrity["text_sha256"]["output"]
    anchor = anchor_digest(dossier.integrity["anchor"])
    assert len(pages) >= 2
    for number, page in enumerate(pages, 1):
        texts = _page_texts(page)
        assert f"page {number} of {len(pages)}" in texts
        footer = " ".join(texts)
        assert f"output SHA-256 {output_hash}" in footer and anchor in footer


def test_the_longest_verbatim_run_is_set_apart_from_the_lcs_overlap(case_db: Path, cli) -> None:
    """The verbatim judge's run has its own highlight and legend entry, its offsets in
    both texts in plain words, and brackets in Markdown; the LCS marks stay as they were."""
    from copyaudit.judges.verbatim import longest_verbatim

    assert cli("judge", "gen", "--judges", "verbatim").code == 0
    reference = literal_record(1)["reference"]
    length, start, source_start = longest_verbatim(OUTPUT, reference)
    run = OUTPUT[start : start + length]
    assert length == len(reference) == 43 and source_start == 0  # the whole continuation
    html = cli("dossier", KEY, "--format", "html").out
    marks = re.findall(r'<mark class="hl[^"]* hl-verbatim" title="[^"]*">(.*?)</mark>', html)
    assert "".join(marks) == escape(run) * 2  # in the output and the reference
    assert marks[-1] == "."  # the run goes on where the LCS tokens (words) stop
    assert '<mark class="hl hl-verbatim">longest verbatim run' in html  # its legend entry
    sentence = (
        f"The longest verbatim run is 43 characters long (not flagged: the threshold is 160 "
        f"characters); it is characters {start + 1} to {start + 43} of the output and "
        "characters 1 to 43 of the reference continuation (counted from 1)."
    )
    assert f'<p class="verbatim">{sentence}</p>' in html
    md = cli("dossier", KEY).out
    assert md.count(f"⟦**{run[:-1]}**.⟧") == 2  # in the output and the reference
    assert md.count("⟦") == 3 and md_escape(sentence) in md  # the two runs and the legend line


STORED_TIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:\d\d|Z)?")


def _outside_code(md: str) -> str:
    return re.sub(r"```.*?```", "", md, flags=re.S)


def test_an_exhibit_writes_every_time_one_way_and_reads_its_source_and_anchor_plainly(
    case_db: Path, cli
) -> None:
    """Times as 2026-11-28T06:30:00Z (the JSON blocks keep the stored form); where the
    reference text came from, as its import recorded it; a glossary box; the anchor in
    plain words."""
    md = cli("dossier", KEY).out
    html = cli("dossier", KEY, "--format", "html").out
    times = STORED_TIME.findall(_outside_code(md))
    assert len(times) >= 6  # generated, labelled, reviewed (history), imported, exported
    assert [t for t in times if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", t)] == []
    html_times = STORED_TIME.findall(re.sub(r"<pre.*?</pre>", "", html, flags=re.S))
    assert html_times and all(t.endswith("Z") and len(t) == 20 for t in html_times)
    source = md.split("\n## Source of the reference text\n")[1].split("\n## ")[0]
    assert "| work | The Glass Orchard, Ada Lowe, 1901 |" in source
    assert re.search(r"\| imported from | .*lit\.jsonl \|", source)
    assert re.search(r"\| imported at \| \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \|", source)
    assert "| edition | not recorded at import \\(the case file gives none\\) |" in source
    glossary = md.split("\n## Glossary\n")[1].split("\n## ")[0]
    assert "> **SHA-256**:" in glossary and "rougeL" in glossary  # the case's measure
    assert "longest verbatim run" not in glossary  # not judged by the verbatim judge here
    assert '<aside class="glossary">' in html and "<dt>flagged</dt>" in html
    reading = "recorded label and review event(s) in 2 chain(s)"
    assert reading in md and reading in html and "breaks every later seal" in md


def test_the_dossier_lists_every_traced_span_with_its_work_edition_and_hash(
    cli, tmp_path: Path, db_path: Path
) -> None:
    """Issue 38: an exact copy and a copy with one word changed, of a work other than the
    case's own, each listed with the work, its offsets there, the edition registered, the
    text's SHA-256 and status; the near-verbatim match marked as such."""
    from copyaudit.tracing.tokens import word_spans

    words = [f"w{n}ord" for n in range(400)]  # a work of distinct words
    work = " ".join(words) + "."
    (tmp_path / "moby.txt").write_text(work, encoding="utf-8")
    added = cli(
        "library", "add", str(tmp_path / "moby.txt"), "--title", "Moby Dick",
        "--source", "Project Gutenberg #2701", "--status", "public-domain",
    )  # fmt: skip
    assert added.code == 0, added.err
    sha = hashlib.sha256(work.encode("utf-8")).hexdigest()
    slipped = words[100:160]
    slipped[30] = "zebra"
    output = "Exact: " + " ".join(words[10:40]) + ". Slipped: " + " ".join(slipped) + "."
    cases = write_jsonl(tmp_path / "c.jsonl", [literal_record(1, id="c1", title="Emma")])
    assert cli("import", "literal", str(cases)).code == 0
    gens = write_jsonl(tmp_path / "g.jsonl", [{"case_id": "c1", "output": output}])
    assert cli("import-generations", str(gens), "--run", "r", "--suite", "c").code == 0
    assert cli("judge", "r", "--judges", "trace").code == 0
    shown = cli("dossier", "r/c1/1")
    assert shown.code == 0, shown.err
    md = shown.out
    table = md.split("## Traced to the library", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| ") and sha in line]
    at = {w: (s, e) for w, s, e in word_spans(work)}
    first, length = output.index("w10ord"), len(" ".join(words[10:40]))
    exact = (
        f"| {first + 1:,}–{first + length:,} | {length} | Moby Dick | "
        f"{at['w10ord'][0] + 1:,}–{at['w39ord'][1]:,} | Project Gutenberg \\#2701 | {sha} | "
        "public-domain | exact |"
    )
    assert exact in rows
    near = [row for row in rows if row.endswith(r"| near-verbatim \(1 slip\) |")]
    assert len(near) == 1
    assert f"| {at['w100ord'][0] + 1:,}–{at['w159ord'][1]:,} |" in near[0]
    assert len(rows) == 4  # the exact copy, the slipped copy's two exact halves, the match
    html = cli("dossier", "r/c1/1", "--format", "html").out
    assert '<section id="traced">' in html and "near-verbatim (1 slip)" in html
    assert escape("Project Gutenberg #2701") in html and sha in html

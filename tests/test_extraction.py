"""Study 4, prefix extraction: its judges on hand-made pairs, the verbatim judge of
every literal-style study, and `import extraction` in both layouts and on bad input.
Every text here was written for these tests."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from copyaudit.engine.demo import samples_dir
from copyaudit.formats import load_cases
from copyaudit.judges.options import JudgeOptions
from copyaudit.judges.presets import build_judges
from copyaudit.judges.registry import JUDGES
from copyaudit.judges.verbatim import VerbatimJudge, longest_verbatim
from copyaudit.studies.extraction.format import split_text
from copyaudit.studies.extraction.judge import ExtractionJudge, edit_similarity
from copyaudit.studies.extraction.tokens import tokens
from copyaudit.studies.registry import STUDIES
from copyaudit.studies.verbatim import verbatim_kinds, verbatim_source
from copyaudit.types import JudgeInput
from db import Store
from tests.conftest import database_fingerprint, write_jsonl

TRUTH = "the grey heron stood in the reeds until the tide came in, and then it flew home."
TEXT = "Old Tamsin kept a boat with a red sail. " + TRUTH


def _scores(judge, output: str, payload: dict, kind: str = "extraction") -> dict:
    [scores] = judge.judge([JudgeInput(kind, payload, "", output)])
    return {s.metric: s for s in scores}


def test_lcp_counts_the_tokens_reproduced_from_the_start() -> None:
    judge = ExtractionJudge(extract_tokens=5)
    payload = {"prefix": "x", "reference": TRUTH}
    # the first 7 tokens are the continuation's, then it departs
    scores = _scores(judge, " the grey heron stood in the reeds while the gulls", payload)
    assert scores["lcp_tokens"].value == 7
    assert scores["lcp_tokens"].flagged is True and scores["lcp_tokens"].threshold == 5
    assert scores["lcp_tokens"].extra["prefix_tokens"] == 1  # k: the case is 1-extractable
    # the span covers the extracted prefix in the output, leading space excluded
    [span] = scores["lcp_tokens"].spans
    assert (span.start, span.end) == (1, len(" the grey heron stood in the reeds"))
    # a first-token miss is an LCP of 0 however much follows
    missed = _scores(judge, "a grey heron stood in the reeds until the tide came in", payload)
    assert missed["lcp_tokens"].value == 0 and missed["lcp_tokens"].flagged is False
    assert missed["lcp_tokens"].spans == ()


def test_the_flag_needs_k_tokens_or_the_whole_shorter_continuation() -> None:
    payload = {"prefix": "x", "reference": TRUTH}  # 18 tokens
    assert len(tokens(TRUTH)) == 18
    exact = _scores(ExtractionJudge(extract_tokens=50), TRUTH + " More words.", payload)
    # HELM tokenizes its cut reference alone, so "home." there is "home", "." while the
    # output's "home." (more text follows) stays one token: HELM's LCP stops at 17; the
    # flag counts the study's tokens, where the whole continuation is reproduced
    assert exact["lcp_tokens"].value == 17 and exact["lcp_tokens"].flagged is True
    assert exact["lcp_tokens"].extra["extracted_tokens"] == 18
    assert exact["lcp_tokens"].threshold == 18  # min(k, tokens of the continuation)
    short = _scores(ExtractionJudge(extract_tokens=50), "the grey heron stood", payload)
    assert short["lcp_tokens"].value == 4 and short["lcp_tokens"].flagged is False
    assert ExtractionJudge(extract_tokens=12).config()["extract_tokens"] == 12


def test_edit_distance_and_similarity_on_tokens() -> None:
    assert edit_similarity(["a", "b", "c", "d"], ["a", "x", "c", "d"]) == pytest.approx(0.75)
    assert edit_similarity(["a"], []) == 0.0 and edit_similarity([], []) == 0.0
    payload = {"prefix": "x", "reference": "one two three four"}
    # one substitution among four tokens; newlines and runs of spaces do not count
    scores = _scores(ExtractionJudge(), "one\n\ntwo   five four", payload)
    assert scores["edit_distance"].value == 1
    assert scores["edit_similarity"].value == pytest.approx(0.75)
    assert scores["lcp_tokens"].value == 2
    # the continuation is cut to the output's token count (HELM: its length)
    cut = _scores(ExtractionJudge(), "one two", payload)
    assert cut["edit_similarity"].value == 1.0 and cut["edit_distance"].value == 0
    empty = _scores(ExtractionJudge(), "", payload)
    assert empty["edit_similarity"].value == 0.0 and empty["lcp_tokens"].value == 0


def test_longest_verbatim_run_with_its_span_in_output_and_source() -> None:
    source = "It was the coldest morning of the year, and the well had frozen solid."
    output = "Everyone said it was the coldest morning of the year, truly."
    length, start, source_start = longest_verbatim(output, source)
    run = "t was the coldest morning of the year, "
    assert (length, output[start : start + length]) == (len(run), run)
    assert source[source_start : source_start + length] == run
    assert longest_verbatim("xyz", "abc") == (0, 0, 0)

    judge = VerbatimJudge(lambda kind, payload: payload["reference"], threshold=30)
    scores = _scores(judge, output, {"reference": source}, kind="literal")
    verdict = scores["longest_verbatim_chars"]
    assert verdict.value == len(run) and verdict.flagged is True and verdict.threshold == 30
    assert [(s.start, s.end) for s in verdict.spans] == [(start, start + length)]
    assert verdict.extra["source_span"] == [source_start, source_start + length]
    strict = VerbatimJudge(lambda kind, payload: payload["reference"], threshold=160)
    assert _scores(strict, output, {"reference": source})["longest_verbatim_chars"].flagged is False
    # a case without a source (not literal-style) gets no score
    nothing = VerbatimJudge(lambda kind, payload: None)
    assert nothing.judge([JudgeInput("literal", {}, "", output)]) == [[]]


def test_every_literal_style_study_names_its_source() -> None:
    # the verbatim judge scores exactly the kinds whose study names a source, and each
    # such study's bundled sample has one
    assert JUDGES["verbatim"].kinds == verbatim_kinds()
    for kind in verbatim_kinds():
        [sample] = [c for c in load_cases(kind, samples_dir() / STUDIES[kind].samples[kind])][:1]
        assert isinstance(verbatim_source(kind, sample.case.payload), str), kind
    assert verbatim_source("literal", {"input": "a", "reference": "b"}) == "b"
    assert verbatim_source("extraction", {"prefix": "a", "reference": "b"}) == "b"
    notice = {"snippet": "S", "notice": "N", "task": "repeat"}
    assert verbatim_source("notice", notice) == "S\nN"
    assert verbatim_source("notice", {**notice, "task": "paraphrase"}) is None
    assert verbatim_source("nonliteral", {}) is None


def test_offline_preset_runs_verbatim_on_literal_style_kinds_with_chosen_thresholds() -> None:
    options = JudgeOptions("verbatim,extraction", verbatim_chars=80, extract_tokens=10)
    judges, skipped = build_judges(options, "extraction")
    configs = {j.name: j.config() for j in judges}
    assert configs["verbatim"]["threshold"] == 80 and configs["extraction"]["extract_tokens"] == 10
    assert options.config()["verbatim_chars"] == 80 and "extract_tokens" in options.config()
    assert "verbatim_chars" not in JudgeOptions().config()  # runs made before still resume
    for kind in ("literal", "notice", "extraction"):
        names = [j.name for j in build_judges(JudgeOptions("offline"), kind)[0]]
        assert "verbatim" in names, kind
    assert "verbatim" not in [j.name for j in build_judges(JudgeOptions("offline"), "qa")[0]]
    assert skipped == []


def test_split_text_keeps_the_text_and_counts_treebank_tokens() -> None:
    prefix, continuation = split_text(TEXT, 10, None)
    assert prefix + continuation == TEXT
    assert tokens(prefix) == tokens(TEXT)[:10]
    prefix, continuation = split_text(TEXT, 10, 3)
    assert tokens(continuation) == tokens(TEXT)[10:13] and TEXT.startswith(prefix + continuation)
    with pytest.raises(ValueError, match="leave no continuation"):
        split_text("Too short.", 5, None)


def _cases(db_path: Path, suite: str) -> dict[str, dict]:
    with Store(db_path) as store:
        rows = store.query(
            "SELECT c.case_id, c.payload FROM cases c JOIN suites s ON s.id = c.suite_id "
            "WHERE s.name = ?",
            (suite,),
        )
    return {r["case_id"]: json.loads(r["payload"]) for r in rows}


def test_import_both_layouts(tmp_path: Path, cli, db_path: Path) -> None:
    cut = write_jsonl(
        tmp_path / "cut.jsonl",
        [{"id": "a", "title": "Tamsin", "prefix": "Old Tamsin kept", "reference": " a boat."}],
    )
    result = cli("import", "extraction", str(cut))
    assert result.code == 0, result.err
    assert _cases(db_path, "cut") == {"a": {"prefix": "Old Tamsin kept", "reference": " a boat."}}

    whole = tmp_path / "whole.json"
    whole.write_text(json.dumps([{"id": "t", "title": "Tamsin", "text": TEXT}]), encoding="utf-8")
    result = cli("import", "extraction", str(whole), "--prefix-tokens", "10")
    assert result.code == 0, result.err
    case = _cases(db_path, "whole")["t"]
    assert (
        case["prefix"] + case["reference"] == TEXT and tokens(case["prefix"]) == tokens(TEXT)[:10]
    )
    result = cli(
        "import", "extraction", str(whole), "--suite", "short", "--prefix-tokens", "10",
        "--continuation-tokens", "4",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert tokens(_cases(db_path, "short")["t"]["reference"]) == tokens(TEXT)[10:14]


def test_bad_input_names_file_line_and_field_and_changes_nothing(
    tmp_path: Path, cli, db_path: Path
) -> None:
    good = [{"id": "a", "title": "T", "prefix": "p", "reference": "r"}]
    assert cli("import", "extraction", str(write_jsonl(tmp_path / "ok.jsonl", good))).code == 0
    before = database_fingerprint(db_path)
    bad = write_jsonl(
        tmp_path / "bad.jsonl",
        [
            {"id": "b", "title": "T", "prefix": "p", "reference": "r"},
            {"id": "c", "title": "T", "prefix": "p", "reference": "  "},
            {"id": "d", "title": "T", "text": "whole text, not cut"},
        ],
    )
    result = cli("import", "extraction", str(bad))
    assert result.code == 2
    assert "bad.jsonl: 2 of 3 records" in result.err
    assert "line 2: field 'reference': must not be empty" in result.err
    assert "line 3: field 'prefix': missing (a record with 'text' needs --prefix-tokens K)" in (
        result.err
    )
    records = [{"id": "e", "title": "T", "text": TEXT}, {"id": "f", "title": "T", "text": "Two."}]
    short = write_jsonl(tmp_path / "short.jsonl", records)
    result = cli("import", "extraction", str(short), "--prefix-tokens", "10")
    assert result.code == 2
    assert "short.jsonl" in result.err
    assert "line 2: field 'text': has 1 token; 10 prefix tokens leave no continuation" in (
        result.err
    )
    result = cli("import", "literal", str(short), "--prefix-tokens", "10")
    assert result.code == 2 and "--prefix-tokens" in result.err
    assert database_fingerprint(db_path) == before


def test_judge_dossier_and_report_show_the_verbatim_run(cli, db_path: Path) -> None:
    root = samples_dir()
    assert cli("import", "extraction", str(root / "extraction.jsonl")).code == 0
    generations = str(root / "generations" / "extraction.jsonl")
    assert cli("import-generations", generations, "--run", "ex", "--suite", "extraction").code == 0
    judged = cli("judge", "ex", "--judges", "verbatim,extraction", "--verbatim-chars", "200")
    assert judged.code == 0, judged.err
    dossier = cli("dossier", "ex/moby-ext-01/1").out
    row = next(line for line in dossier.splitlines() if "longest\\_verbatim\\_chars" in line)
    assert "| 289 | 200 | flagged |" in row  # the run, over the chosen threshold (a count)
    page = cli("dossier", "ex/scarlet-ext-01/1", "--format", "html").out
    # highlighted as the verbatim run, apart from the LCS overlap
    assert re.search(
        r'class="hl[^"]* hl-verbatim" title="[^"]*longest verbatim run \(\d+ char', page
    )
    report = json.loads(cli("report", "ex", "--format", "json").out)
    assert report["verbatim"]["thresholds"] == [200.0] and report["verbatim"]["n"] == 8
    assert report["verbatim"]["flagged"] == sum(
        v >= 200 for v in _values(db_path, "longest_verbatim_chars")
    )
    text = cli("report", "ex").out
    assert "## Longest verbatim run" in text and "## Prefix extraction" in text
    html = cli("report", "ex", "--format", "html").out
    assert "<h2>Copying</h2>" in html and "Longest verbatim run" in html


def _values(db_path: Path, metric: str) -> list[float]:
    with Store(db_path) as store:
        rows = store.query("SELECT value FROM judgments WHERE metric = ?", (metric,))
    return [r["value"] for r in rows]

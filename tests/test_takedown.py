"""The takedown study: CoTaEval's win rates on a hand-made metric table, and
`copyaudit takedown` end to end on a tiny model that memorised its passage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copyaudit.studies.takedown.winrates import example_win_rates, win_rates
from tests.conftest import write_jsonl
from tests.tinymodels import build_tiny_causal_lm, build_tokenizer, train_to_memorize

# two examples, three methods; "m" is lower-is-better, "d" (a distance) higher-is-better
EXAMPLES = [
    {"A": {"m": 0.9, "d": 10}, "B": {"m": 0.5, "d": 20}, "C": {"m": 0.5, "d": 30}},
    {"A": {"m": 0.1, "d": 5}, "B": {"m": 0.2, "d": 5}, "C": {"m": 0.3, "d": 5}},
]


def test_win_rates_on_a_hand_made_table() -> None:
    # example 1, m: A beats no one; B and C each beat A only (their tie wins nothing)
    assert example_win_rates({"A": 0.9, "B": 0.5, "C": 0.5}, False) == {
        "A": 0.0,
        "B": 0.5,
        "C": 0.5,
    }
    rates = win_rates(EXAMPLES, ["m", "d"], frozenset({"d"}))
    # m: A (0 + 1) / 2, B (1/2 + 1/2) / 2, C (1/2 + 0) / 2
    # d: A (0 + 0) / 2, B (1/2 + 0) / 2, C (1 + 0) / 2 — the all-equal example wins nothing
    assert rates.per_metric == {
        "A": {"m": 0.5, "d": 0.0},
        "B": {"m": 0.5, "d": 0.25},
        "C": {"m": 0.25, "d": 0.5},
    }
    # sum over metrics and examples / (2 metrics x 2 examples)
    assert rates.average == {"A": 0.25, "B": 0.375, "C": 0.375}
    assert rates.examples == 2
    with pytest.raises(ValueError):
        example_win_rates({"A": 1.0}, False)


MEMORIZED = (
    "The lighthouse keeper counted the ships every evening and wrote their names in a "
    "green ledger. When the fog rolled in from the north, he lit the great lamp and sang "
    "to the gulls until the harbour bells answered him across the dark water, and the "
    "fishermen of the town followed his light safely home to their waiting families."
)
OTHER = (
    "A baker in the valley rose before dawn to knead bread for the whole village, and the "
    "smell of warm loaves drifted over the river while the miller's children still slept."
)


@pytest.fixture(scope="module")
def memorizing_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("takedown-model")
    tokenizer = build_tokenizer([MEMORIZED, OTHER], directory)
    build_tiny_causal_lm(directory, tokenizer)
    from copyaudit.prompts import build_prompt

    instruction = build_prompt("literal", {"input": "x", "reference": "y"}, shots=0).text[:-1]
    train_to_memorize(directory, [instruction + MEMORIZED], steps=600)
    return directory


@pytest.mark.slow
def test_takedown_command_end_to_end(memorizing_model: Path, tmp_path: Path, cli) -> None:
    words = MEMORIZED.split()
    case = {"id": "p0", "title": "Harbour Tales", "input": " ".join(words[:22])}
    case["reference"] = " ".join(words[22:])
    cli("import", "literal", str(write_jsonl(tmp_path / "lit.jsonl", [case])), "--suite", "lit")
    model = str(memorizing_model)
    args = ("takedown", "lit", "--model", model, "--device", "cpu", "--plain", "--shots", "0")
    args += ("--judges", "literal", "--max-new-tokens", "48", "--format", "json")
    # R-CAD at CoTaEval's alpha 1 moves a memorised tiny model only where its trained
    # weights favour the passage by less than the contrast: with the same seed and torch
    # the model trained here changed its greedy text at alpha 1 on the machine of an
    # earlier CI run and left it unchanged on an AMD EPYC (alpha 2 changed it), the
    # float kernels differing. test_models_takedown checks alpha 1 on its own model;
    # this test checks the command, so it asks for a clear contrast.
    args += ("--rcad-alpha", "2")
    result = cli(*args, "--methods", "none,memfree,topk,rcad")
    assert result.code == 0, result.err
    table = json.loads(result.out)
    rows = {row["method"]: row for row in table["rows"]}
    assert list(rows) == ["none", "topk", "memfree", "rcad"]  # CoTaEval's order
    name = memorizing_model.name
    assert rows["topk"]["run"] == f"lit-{name}-topk" and rows["none"]["status"] == "done"
    assert table["examples"] == 1
    # the method-less run copies most: every method beats it on average
    averages = {m: r["average"] for m, r in rows.items()}
    assert all(averages[m] > averages["none"] for m in ("memfree", "topk", "rcad")), averages
    assert rows["none"]["win_rates"]["td_lcs_words"] == 0.0
    assert rows["none"]["speed_ratio"] == pytest.approx(1.0)
    assert all(row["tokens_per_s"] > 0 for row in rows.values())
    assert table["utility_metric"] == "fluency" and rows["none"]["utility"] is None
    assert any("fluency" in note for note in table["notes"])  # why utility is missing

    again = cli(*args, "--methods", "none,memfree,topk,rcad")  # resumes: nothing to redo
    assert again.code == 0 and "0 generated" in again.err
    assert json.loads(again.out) == table
    shown = cli("takedown", "lit", "--model", model, "--table-only")
    assert shown.code == 0 and "| R-CAD |" in shown.out and "lit-" in shown.out

    # the same table in `compare` (JSON equal to the command's, Markdown and HTML)
    compared = cli("compare", "--format", "json")
    assert compared.code == 0, compared.err
    assert json.loads(compared.out)["takedown"] == [table]
    markdown = cli("compare")
    assert "## Takedown comparison: lit x" in markdown.out and "| R-CAD |" in markdown.out
    html = cli("compare", "--format", "html")
    assert "Takedown comparison: lit x" in html.out and "<td>R-CAD</td>" in html.out


def test_a_backend_without_logits_is_refused_for_logit_methods(cli, tmp_path: Path) -> None:
    case = {"id": "p0", "title": "T", "input": "a b c", "reference": "d e f"}
    cli("import", "literal", str(write_jsonl(tmp_path / "lit.jsonl", [case])), "--suite", "lit")
    result = cli(
        "takedown", "lit", "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1",
        "--model", "m", "--methods", "none,topk",
    )  # fmt: skip
    assert result.code == 2 and "cannot do topk decoding" in result.err
    bad = cli("takedown", "lit", "--methods", "none,nope")
    assert bad.code == 2 and "--methods" in bad.err
    with_name = cli("takedown", "lit", "--name", "x", "--methods", "none")
    assert with_name.code == 2 and "drop --name" in with_name.err

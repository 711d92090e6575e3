"""DE-COP asks the question the paper asked: the arXiv question with the raw ID, one
BookTection Length per run, the model's chat template with the authors' system prompt,
and the per-prompt export. All text here is written for the tests."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
import torch

from copyaudit.errors import UserError
from copyaudit.models.hf_loading import load_causal_lm
from copyaudit.models.hf_scoring import HFChoiceScorer
from copyaudit.studies.decop.method import DECOP_SYSTEM_PROMPT, question_names
from copyaudit.studies.decop.report import decop_markdown, decop_report
from copyaudit.studies.decop.run import DecopRequest, execute_decop
from db import Store
from tests.tinymodels import build_tiny_causal_lm, build_tokenizer

OPTIONS = (
    "The lantern keeper counted twelve boats before dawn.",
    "Before sunrise the lighthouse warden tallied a dozen vessels.",
    "A dozen ships were counted by the lamp tender ahead of morning.",
    "Twelve craft passed the beacon guard while it was still dark.",
)


def _rows(ids: Sequence[str], lengths: Sequence[str] | None = None) -> list[dict[str, str]]:
    rows = []
    for n, raw_id in enumerate(ids):
        answer = n % 4
        options = [f"{text} ({raw_id} {n})" for text in OPTIONS]
        options[0], options[answer] = options[answer], options[0]
        row = {f"Example_{x}": o for x, o in zip("ABCD", options, strict=True)}
        # one label per work (its first row's position): a work is suspect or clean
        row.update(Answer="ABCD"[answer], ID=raw_id, Label=str(ids.index(raw_id) % 2))
        if lengths is not None:
            row["Length"] = lengths[n]
        rows.append(row)
    return rows


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    with open(path, "w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


class Recorder:
    """A ChoiceScorer that records every prompt and prefers option A."""

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.choices: list[list[str]] = []

    def choice_probabilities(self, prompts: Sequence[str], choices: Sequence[str]) -> np.ndarray:
        self.prompts += prompts
        self.choices.append(list(choices))
        return np.tile([0.4, 0.3, 0.2, 0.1], (len(prompts), 1))


# arXivTection: no Length column, IDs are paper titles as published (spaces, "_" kept).
ARXIV_IDS = ("Sparse_Lanterns A Study", "Tidal Tokens", "Sparse_Lanterns A Study", "Tidal Tokens")
BOOK_IDS = ("The_Salt__Road_-_Mira_Okonkwo", "Winter_Notes_-_Ada_B._Quill")


def test_question_names_as_the_authors_code() -> None:
    # book: split("_-_"), "_" -> " " in each part, nothing else (double spaces kept)
    assert question_names("The_Salt__Road_-_Mira_Okonkwo", "book") == (
        "The Salt  Road",
        "Mira Okonkwo",
    )
    assert question_names("Untitled_Notes", "book") == ("Untitled Notes", None)
    # paper: the raw ID
    assert question_names("Sparse_Lanterns A Study", "paper") == ("Sparse_Lanterns A Study", None)
    with pytest.raises(ValueError):
        question_names("x", "poem")


def test_arxiv_layout_is_asked_about_the_paper_by_its_raw_id(
    cli, db_path: Path, tmp_path: Path
) -> None:
    csv_path = _write(tmp_path / "arxiv.csv", _rows(ARXIV_IDS))
    result = cli("import", "decop", str(csv_path), "--suite", "ax")
    assert result.code == 0, result.err
    assert "the question names a paper (detected from the layout" in result.out
    with Store(db_path) as store:
        titles = {r[0] for r in store.conn.execute("SELECT title FROM works")}
        doc_type = store.scalar("SELECT doc_type FROM suites WHERE name = 'ax'")
    assert titles == {"Sparse_Lanterns A Study", "Tidal Tokens"} and doc_type == "paper"

    recorder = Recorder()
    outcome = execute_decop(
        db_path, DecopRequest(suite="ax", name="r", baselines=False), scorer=recorder
    )
    assert outcome.status == "done" and len(recorder.prompts) == 4 * 24
    assert recorder.prompts[0].startswith(
        "Question: Which of the following passages is verbatim from the arXiv paper "
        f'"Sparse_Lanterns A Study"?\nOptions:\nA. {OPTIONS[0]} (Sparse_Lanterns A Study 0)\nB. '
    )
    assert all("book" not in p.split("\n")[0] for p in recorder.prompts)
    assert recorder.choices[0] == [" A", " B", " C", " D"]  # plain: the recorder has no template
    with Store(db_path) as store:
        config = json.loads(store.scalar("SELECT config FROM runs WHERE name = 'r'"))
    assert config["doc_type"] == "paper" and "prompt_format" not in config

    # the same file as books changes the question: refused unless --replace
    again = cli("import", "decop", str(csv_path), "--suite", "ax", "--doc-type", "book")
    assert again.code == 2 and "--replace" in again.err


def test_booktection_layout_is_asked_about_the_book_as_the_authors_split_the_id(
    cli, db_path: Path, tmp_path: Path
) -> None:
    csv_path = _write(tmp_path / "bt.csv", _rows(BOOK_IDS, ["medium", "medium"]))
    assert cli("import", "decop", str(csv_path), "--suite", "bt").code == 0
    recorder = Recorder()
    execute_decop(db_path, DecopRequest(suite="bt", name="r", baselines=False), scorer=recorder)
    assert recorder.prompts[0].startswith(
        'Question: Which of the following passages is verbatim from the "The Salt  Road" '
        "book by Mira Okonkwo?\nOptions:\nA. "
    )
    with Store(db_path) as store:
        config = json.loads(store.scalar("SELECT config FROM runs WHERE name = 'r'"))
    assert "doc_type" not in config and "length" not in config  # as runs made before
    # an explicit --doc-type paper on a file without a Length column asks the paper question
    paper_csv = _write(tmp_path / "p.csv", _rows(BOOK_IDS))
    assert cli("import", "decop", str(paper_csv), "--suite", "p", "--doc-type", "paper").code == 0
    with Store(db_path) as store:
        assert store.scalar("SELECT doc_type FROM suites WHERE name = 'p'") == "paper"
    assert cli("import", "qa", str(paper_csv), "--doc-type", "paper").code == 2


LENGTH_IDS = ("A_-_X", "A_-_X", "A_-_X", "B_-_Y", "B_-_Y", "B_-_Y")
LENGTHS = ["small", "medium", "large", "small", "medium", "large"]


def test_several_lengths_are_never_pooled(cli, db_path: Path, tmp_path: Path) -> None:
    csv_path = _write(tmp_path / "bt.csv", _rows(LENGTH_IDS, LENGTHS))
    assert cli("import", "decop", str(csv_path), "--suite", "bt").code == 0
    with pytest.raises(UserError) as refused:
        execute_decop(db_path, DecopRequest(suite="bt", baselines=False), scorer=Recorder())
    message = str(refused.value)
    assert "3 lengths: large (2 passages), medium (2 passages), small (2 passages)" in message
    assert "--length medium" in message
    with Store(db_path) as store:
        assert store.scalar("SELECT COUNT(*) FROM runs") == 0
    with pytest.raises(UserError, match="no passages of that length"):
        execute_decop(
            db_path, DecopRequest(suite="bt", length="tiny", baselines=False), scorer=Recorder()
        )

    recorder = Recorder()
    request = DecopRequest(suite="bt", model="m", length="medium", baselines=False)
    outcome = execute_decop(db_path, request, scorer=recorder)
    assert outcome.run == "bt-decop-m-medium" and outcome.scored == 2
    assert len(recorder.prompts) == 2 * 24
    # the medium rows are rows 1 and 4 of the file
    assert {p.split("(")[1].split(")")[0] for p in recorder.prompts} == {"A_-_X 1", "B_-_Y 4"}
    with Store(db_path) as store:
        config = json.loads(store.scalar("SELECT config FROM runs WHERE name = ?", (outcome.run,)))
    assert config["length"] == "medium"
    with Store(db_path) as store:
        report = decop_report(store, outcome.run)
    assert report["passages"] == {"scored": 2, "total": 2}
    assert report["question"] == {"doc_type": "book", "format": "plain", "length": "medium"}
    assert "Question about each book, plain prompts; passages of length medium only." in (
        decop_markdown(report)
    )
    refused_cli = cli("decop", "bt", "--model", "m")
    assert refused_cli.code == 2 and "--length" in refused_cli.err


@pytest.fixture(scope="module")
def chat_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("chat-model")
    texts = [*OPTIONS, DECOP_SYSTEM_PROMPT, "Question: Which of the following passages"]
    build_tiny_causal_lm(root, build_tokenizer(texts, root, 500))
    return root


def test_chat_prompts_use_the_template_system_prompt_and_assistant_position(
    chat_model: Path, db_path: Path, cli, tmp_path: Path
) -> None:
    csv_path = _write(tmp_path / "bt.csv", _rows(BOOK_IDS, ["medium", "medium"]))
    assert cli("import", "decop", str(csv_path), "--suite", "bt").code == 0
    loaded = load_causal_lm(str(chat_model), device="cpu")
    tokenizer = loaded.tokenizer
    outcome = execute_decop(
        db_path,
        DecopRequest(suite="bt", name="chat", baselines=False),  # default: the model has a template
        scorer=HFChoiceScorer(loaded, batch_size=48),
    )
    assert outcome.status == "done"
    with Store(db_path) as store:
        config = json.loads(store.scalar("SELECT config FROM runs WHERE name = 'chat'"))
        stored = json.loads(
            store.scalar(
                "SELECT probs FROM decop_scores d JOIN runs r ON r.id = d.run_id "
                "WHERE r.name = 'chat' ORDER BY d.case_pk LIMIT 1"
            )
        )
    assert config["prompt_format"]["chat"] is True
    assert config["prompt_format"]["system"] == DECOP_SYSTEM_PROMPT
    assert config["prompt_format"]["choices"] == ["A", "B", "C", "D"]

    # by hand: the template with the system prompt, the assistant turn opened, the next
    # token's logits over "A".."D" (each one token after "<|assistant|>\n")
    result = cli("export", "decop", "--run", "chat")
    assert result.code == 0, result.err
    first = json.loads(result.out.splitlines()[0])
    user_turn = first["prompt"].split("<|user|>\n", 1)[1].rsplit("\n<|assistant|>", 1)[0]
    messages = [
        {"role": "system", "content": DECOP_SYSTEM_PROMPT},
        {"role": "user", "content": user_turn},
    ]
    sent = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert first["prompt"] == sent and sent.endswith("Answer:\n<|assistant|>\n")
    assert sent.startswith(f"<|system|>\n{DECOP_SYSTEM_PROMPT}\n<|user|>\nQuestion: ")
    context = tokenizer.encode("<|assistant|>\n", add_special_tokens=False)
    letters = []
    for letter in "ABCD":
        ids = tokenizer.encode("<|assistant|>\n" + letter, add_special_tokens=False)
        assert ids[: len(context)] == context and len(ids) == len(context) + 1
        letters.append(ids[-1])
    ids = torch.tensor([tokenizer.encode(sent, add_special_tokens=False)])
    with torch.inference_mode():
        logits = loaded.model(input_ids=ids).logits[0, -1, letters]
    expected = torch.softmax(logits.float(), dim=-1).numpy()
    assert stored[0] == pytest.approx(expected.tolist(), abs=1e-5)
    assert [first[f"p_{x}"] for x in "ABCD"] == pytest.approx(stored[0])

    # --plain: the bare question, read after "Answer:" (" A".." D"); recorded as such
    plain = execute_decop(
        db_path,
        DecopRequest(suite="bt", name="plain", chat=False, baselines=False),
        scorer=HFChoiceScorer(loaded, batch_size=48),
    )
    assert plain.status == "done"
    with Store(db_path) as store:
        config = json.loads(store.scalar("SELECT config FROM runs WHERE name = 'plain'"))
    assert "prompt_format" not in config
    exported = json.loads(cli("export", "decop", "--run", "plain").out.splitlines()[0])
    assert exported["prompt"] == user_turn  # the same question, without the frame

    # a run made plain resumes plain when no format is given (as runs made before --chat)
    again = execute_decop(
        db_path,
        DecopRequest(suite="bt", name="plain", baselines=False),
        scorer=HFChoiceScorer(loaded, batch_size=48),
    )
    assert again.status == "done" and again.already_scored == 2


def test_export_decop_one_row_per_prompt(cli, db_path: Path, tmp_path: Path) -> None:
    csv_path = _write(tmp_path / "arxiv.csv", _rows(ARXIV_IDS))
    assert cli("import", "decop", str(csv_path), "--suite", "ax").code == 0
    execute_decop(db_path, DecopRequest(suite="ax", name="r", baselines=False), scorer=Recorder())
    out = tmp_path / "r.csv"
    result = cli("export", "decop", "--run", "r", "--format", "csv", "-o", str(out))
    assert result.code == 0, result.err
    with open(out, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 4 * 24
    assert list(rows[0])[:6] == ["run", "work", "author", "label", "passage", "order"]
    first = rows[0]
    assert first["work"] == "Sparse_Lanterns A Study" and first["passage"].endswith("/1")
    assert first["order"] == "0" and first["true_letter"] == "A"  # order 0: verbatim first
    assert [float(first[f"p_{x}"]) for x in "ABCD"] == [0.4, 0.3, 0.2, 0.1]
    assert first["chosen"] == "A" and first["chosen_calibrated"] == ""
    assert first["prompt"].startswith(
        'Question: Which of the following passages is verbatim from the arXiv paper "Sparse_'
    )
    assert {r["true_letter"] for r in rows[:24]} == set("ABCD")
    assert cli("export", "decop").code == 2


def test_openai_chat_sends_the_system_prompt_and_needs_mode_chat(db_path: Path) -> None:
    from copyaudit.models.openai_compat import OpenAIChoiceScorer

    scorer = OpenAIChoiceScorer("http://127.0.0.1:9/v1", "m", api_key_env=None, mode="chat")
    scorer.use_chat(DECOP_SYSTEM_PROMPT)
    body = scorer._request_body("Question: ...", ["A", "B", "C", "D"])
    assert body["messages"] == [
        {"role": "system", "content": DECOP_SYSTEM_PROMPT},
        {"role": "user", "content": "Question: ..."},
    ]
    completions = OpenAIChoiceScorer("http://127.0.0.1:9/v1", "m", api_key_env=None)
    with pytest.raises(ValueError, match="--mode chat"):
        completions.use_chat(DECOP_SYSTEM_PROMPT)
    request = DecopRequest(
        suite="bt", backend="openai", base_url="http://127.0.0.1:9/v1", model="m", chat=True
    )
    with pytest.raises(UserError, match="--chat goes with --mode chat"):
        execute_decop(db_path, request)

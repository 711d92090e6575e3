"""DE-COP runs end to end: a tiny causal LM that knows some works and not others, a
DE-COP suite built here, the run, its storage, resumption and report.

What the model is taught, and why this is an honest test of the pipeline
-----------------------------------------------------------------------
Plain memorization is not enough at this scale: a tiny Llama overfitted on the
verbatim passages of the suspect works (with DE-COP prompt text before them, as
`train_to_memorize` does) answers every DE-COP question with the same letter, so its
accuracy is exactly 0.25 on every work (tried while writing this test). Picking the
verbatim option is a skill a 170k-parameter model does not acquire in seconds.

So the model is fine-tuned, as an instruction-tuned model would be on a QA set, on the
DE-COP questions of the suspect works only, each followed by the correct answer letter
(loss on that letter alone). The clean works are never shown to it. The target letter
is derived here independently of `copyaudit.studies.decop.method`'s answer bookkeeping: it is the
letter whose line in the prompt text reads the verbatim passage. Which of the four
variants of a passage is the verbatim one is drawn at random per passage, so no style
tells the verbatim option apart; the only way to answer is to have seen that passage
(checked: the clean works stay near chance).

The test then checks what the pipeline does with such a model: the prompts it builds
match what the model was taught, it reads the probabilities of the right letter tokens
at the right position (left-padded batches), keeps each order's true answer with its
probability row, groups passages by work, keeps the held-out calibration works out of
the evaluation, and turns per-work accuracies into an AUC. A bug in any of these
(a shifted answer index, the wrong token ids, a padding error, works mixed up) would
pull the trained works down to chance. What it does not show is that DE-COP detects
what a model saw in pre-training: that is the paper's claim, not this code's.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy import stats

from copyaudit.errors import UserError
from copyaudit.models.hf_loading import load_causal_lm
from copyaudit.models.hf_scoring import HFChoiceScorer, HFTokenScorer
from copyaudit.studies.decop.method import (
    ANSWER_CHOICES,
    ANSWER_LETTERS,
    DecopPassage,
    log_perplexity,
)
from copyaudit.studies.decop.report import decop_markdown, decop_report
from copyaudit.studies.decop.run import DecopRequest, execute_decop
from copyaudit.studies.decop.works import SuiteWork, resolve_calibration, split_work_list
from db import Store
from tests.factories import write_decop_csv
from tests.tinymodels import build_tiny_causal_lm, build_tokenizer

pytestmark = pytest.mark.slow  # make test-slow: trains a tiny model per module

AUTHOR = "Ada Lowe"
SUSPECT = ("The Copper Kettle", "Harbour of Small Lights", "The Orchard Ledger")
CLEAN = ("Winter at Pell Farm", "A Map of Quiet Roads", "The Glass Weather", "Notes from the Ferry")
# --calibrate-on auto: every other clean work in title order (casefolded), half of them.
AUTO_HELD_OUT = ["A Map of Quiet Roads", "The Glass Weather"]
PASSAGES_PER_WORK = 2
N_PASSAGES = (len(SUSPECT) + len(CLEAN)) * PASSAGES_PER_WORK

# Sentence slots; each phrase has four wordings (the verbatim passage takes one, the three
# paraphrases the others). Written for this test.
SLOTS = (
    (
        ("The old miller", "The aged miller", "The elderly miller", "The grey miller"),
        ("The young clerk", "The junior clerk", "The new clerk", "The green clerk"),
        ("A quiet sailor", "A silent sailor", "A calm sailor", "A wordless sailor"),
        ("The tall baker", "The lanky baker", "The towering baker", "The long baker"),
        ("My cousin Tom", "My kinsman Tom", "My relative Tom", "Cousin Tom"),
    ),
    (
        ("carried", "hauled", "bore", "lugged"),
        ("painted", "coloured", "brushed", "decorated"),
        ("buried", "hid", "concealed", "stashed"),
        ("mended", "repaired", "fixed", "patched"),
    ),
    (
        ("a wooden chest", "a timber chest", "an oak box", "a wooden trunk"),
        ("the broken gate", "the smashed gate", "the damaged gate", "the cracked gate"),
        ("a silver bell", "a shiny bell", "a bright bell", "a metal bell"),
        ("the red lantern", "the crimson lantern", "the scarlet lantern", "the ruby lantern"),
    ),
    (
        ("down to the river", "toward the stream", "to the brook", "along to the water"),
        ("behind the chapel", "at the back of the church", "past the chapel", "beyond the kirk"),
        ("before the first frost", "ahead of the early frost", "prior to the frost", "in autumn"),
        ("under a pale moon", "beneath a faint moon", "below a wan moon", "under the dim moon"),
    ),
)


def _variants(rng: random.Random) -> list[str]:
    """Four wordings of one two-sentence passage."""
    picks = [[rng.randrange(len(slot)) for slot in SLOTS] for _ in range(2)]
    return [
        " ".join(" ".join(SLOTS[j][pick[j]][k] for j in range(len(SLOTS))) + "." for pick in picks)
        for k in range(4)
    ]


def build_works(seed: int = 0) -> dict[str, list[tuple[str, list[str]]]]:
    """title -> [(verbatim, [paraphrase x 3])]; the verbatim wording is drawn at random."""
    rng = random.Random(seed)
    works: dict[str, list[tuple[str, list[str]]]] = {}
    for title in (*SUSPECT, *CLEAN):
        passages = []
        for _ in range(PASSAGES_PER_WORK):
            variants = _variants(rng)
            verbatim = variants.pop(rng.randrange(4))
            passages.append((verbatim, variants))
        works[title] = passages
    return works


def suite_rows(works: dict[str, list[tuple[str, list[str]]]]) -> list[dict[str, object]]:
    """BookTection CSV rows; the verbatim option's position varies (Answer column)."""
    rows = []
    for n, (title, passages) in enumerate(works.items()):
        for i, (verbatim, paraphrases) in enumerate(passages):
            options = list(paraphrases)
            answer = (n + i) % 4
            options.insert(answer, verbatim)
            rows.append(
                {
                    **{
                        f"Example_{letter}": text
                        for letter, text in zip("ABCD", options, strict=True)
                    },
                    "Answer": "ABCD"[answer],
                    "ID": f"{title.replace(' ', '_')}_-_{AUTHOR.replace(' ', '_')}",
                    "Label": 1 if title in SUSPECT else 0,
                    "Length": "small",
                }
            )
    return rows


def letter_of_verbatim(prompt: str, verbatim: str) -> str:
    """The letter whose option line in the prompt text is the verbatim passage."""
    found = [letter for letter in ANSWER_LETTERS if f"\n{letter}. {verbatim}\n" in prompt]
    assert len(found) == 1, prompt
    return found[0]


def fine_tune_on_questions(model_dir: Path, examples: Sequence[tuple[str, str]]) -> None:
    """Train the model to answer each DE-COP prompt with its letter and save it in place.
    The loss is the cross-entropy of the next-token logits restricted to " A".." D" (the
    distribution DE-COP reads), at the last prompt position only; batches are
    left-padded like the scorer's."""
    loaded = load_causal_lm(str(model_dir), device="cpu")
    model, tokenizer = loaded.model, loaded.tokenizer
    letter_ids = HFChoiceScorer(loaded).choice_token_ids(list(ANSWER_CHOICES))
    encoded = [tokenizer.encode(prompt) for prompt, _ in examples]
    width = max(len(ids) for ids in encoded)
    input_ids = torch.full((len(encoded), width), loaded.pad_token_id)
    attention_mask = torch.zeros_like(input_ids)
    for row, ids in enumerate(encoded):
        input_ids[row, width - len(ids) :] = torch.tensor(ids)
        attention_mask[row, width - len(ids) :] = 1
    position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)
    targets = torch.tensor([ANSWER_LETTERS.index(letter) for _, letter in examples])
    torch.manual_seed(0)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3)
    for _ in range(150):
        logits = model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids,
            logits_to_keep=1,
        ).logits[:, -1, letter_ids]
        loss = torch.nn.functional.cross_entropy(logits, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if loss.item() < 0.05:
            break
    model.eval()
    model.save_pretrained(model_dir, safe_serialization=True)


@dataclass(frozen=True)
class DecopSetup:
    model_dir: Path
    csv: Path
    works: dict[str, list[tuple[str, list[str]]]]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> DecopSetup:
    root = tmp_path_factory.mktemp("decop")
    works = build_works()
    csv = write_decop_csv(root / "booktection.csv", suite_rows(works))
    model_dir = root / "model"
    passages = {
        title: [DecopPassage(v, tuple(p), title, AUTHOR) for v, p in items]
        for title, items in works.items()
    }
    texts = [text for items in works.values() for v, p in items for text in (v, *p)]
    sample_prompts = [prompt for prompt, _ in passages[SUSPECT[0]][0].prompts()[:4]]
    build_tiny_causal_lm(model_dir, build_tokenizer(texts + sample_prompts, model_dir, 800))
    examples = [
        (prompt, letter_of_verbatim(prompt, passage.verbatim))
        for title in SUSPECT
        for passage in passages[title]
        for prompt, _ in passage.prompts()
    ]
    fine_tune_on_questions(model_dir, examples)
    return DecopSetup(model_dir, csv, works)


def _import(cli, setup: DecopSetup, suite: str = "bt") -> None:
    result = cli("import", "decop", str(setup.csv), "--suite", suite)
    assert result.code == 0, result.err


def _request(setup: DecopSetup, **over: object) -> DecopRequest:
    options: dict[str, object] = {
        "suite": "bt",
        "name": "r",
        "model": str(setup.model_dir),
        "device": "cpu",
        "batch_size": 48,
        "chat": False,  # the model was trained on the plain question
    }
    options.update(over)
    return DecopRequest(**options)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------


def test_trained_works_score_higher_and_auc_is_above_chance(
    setup: DecopSetup, cli, db_path: Path
) -> None:
    _import(cli, setup)
    events = []
    outcome = execute_decop(
        db_path, _request(setup, calibrate_on="auto"), on_progress=events.append
    )
    assert outcome.status == "done" and outcome.scored == N_PASSAGES, outcome
    assert outcome.calibration_works == AUTO_HELD_OUT and outcome.baselines
    score_events = [e for e in events if e.phase == "score"]
    assert score_events[-1].done == score_events[-1].total == N_PASSAGES

    with Store(db_path) as store:
        report = decop_report(store, "r")
    per_work = {w["work"]: w for w in report["per_work"]}
    evaluated_clean = sorted(set(CLEAN) - set(AUTO_HELD_OUT))
    assert sorted(per_work) == sorted([*SUSPECT, *evaluated_clean])
    suspect = [per_work[t]["accuracy"] for t in SUSPECT]
    clean = [per_work[t]["accuracy"] for t in evaluated_clean]
    assert min(suspect) >= 0.9, per_work
    assert max(clean) <= 0.6, per_work
    assert all(per_work[t]["label"] == 1 for t in SUSPECT)
    assert all(per_work[t]["label"] == 0 for t in evaluated_clean)
    assert all(w["n_prompts"] == PASSAGES_PER_WORK * 24 for w in per_work.values())
    assert report["auc"] > 0.5 and report["auc"] == 1.0  # every suspect above every clean
    assert report["auc_calibrated"] is not None
    assert report["n_suspect"] == 3 and report["n_clean"] == 2
    held = [w["work"] for w in report["calibration"]["works"]]
    assert held == AUTO_HELD_OUT and report["calibration"]["mode"] == "auto"
    assert "fitted when the run finished" in report["calibration"]["delta_source"]
    assert sum(report["delta"]) == pytest.approx(0.0, abs=1e-6)  # Δ sums to 1 - 1 = 0
    for shares in report["label_position_bias"].values():
        assert sum(shares) == pytest.approx(1.0)
    verified = cli("verify")  # scores and calibration written by copyaudit: digests match
    assert verified.code == 0, verified.err


def test_stored_probabilities_are_the_letter_tokens_at_the_answer_position(
    setup: DecopSetup, cli, db_path: Path
) -> None:
    """The four token ids read are those of " A".." D" as they follow "Answer:", and a
    stored row equals a single unpadded forward pass over the same prompt."""
    _import(cli, setup)
    assert execute_decop(db_path, _request(setup, baselines=True)).status == "done"
    loaded = load_causal_lm(str(setup.model_dir), device="cpu")
    tokenizer = loaded.tokenizer
    letter_ids = HFChoiceScorer(loaded).choice_token_ids(list(ANSWER_CHOICES))
    assert [tokenizer.decode([i]) for i in letter_ids] == [" A", " B", " C", " D"]
    assert tokenizer.encode("Answer: C")[-1] == letter_ids[2]

    title = SUSPECT[1]
    verbatim, paraphrases = setup.works[title][0]
    passage = DecopPassage(verbatim, tuple(paraphrases), title, AUTHOR)
    with Store(db_path) as store:
        stored = store.query(
            "SELECT d.probs, d.answers, d.baselines FROM decop_scores d JOIN cases c ON "
            "c.id = d.case_pk JOIN runs r ON r.id = d.run_id WHERE r.name = 'r' "
            "ORDER BY c.id"
        )
    probs, answers, baselines = (
        json.loads(stored[2]["probs"]),
        json.loads(stored[2]["answers"]),
        json.loads(stored[2]["baselines"]),
    )
    for order in (0, 7, 23):
        prompt, answer = passage.prompts()[order]
        assert (
            answers[order] == answer == ANSWER_LETTERS.index(letter_of_verbatim(prompt, verbatim))
        )
        ids = torch.tensor([tokenizer.encode(prompt)])
        with torch.no_grad():
            logits = loaded.model(input_ids=ids).logits[0, -1, letter_ids]
        expected = torch.softmax(logits.float(), dim=-1).numpy()
        np.testing.assert_allclose(probs[order], expected, atol=1e-5)
    (logprobs,) = HFTokenScorer(loaded).token_logprobs([verbatim])
    assert baselines["perplexity"] == pytest.approx(-log_perplexity(logprobs), rel=1e-6)


class CountingScorer:
    """Wraps a scorer and records every prompt it is asked about."""

    def __init__(self, inner: HFChoiceScorer) -> None:
        self.inner = inner
        self.loaded = inner.loaded
        self.prompts: list[str] = []

    def choice_token_ids(self, choices: Sequence[str]) -> list[int]:
        return self.inner.choice_token_ids(choices)

    def choice_probabilities(self, prompts: Sequence[str], choices: Sequence[str]) -> np.ndarray:
        self.prompts += list(prompts)
        return self.inner.choice_probabilities(prompts, choices)

    def provenance(self) -> dict[str, object]:
        return self.inner.provenance()


def test_cancelled_run_resumes_and_scores_each_passage_once(
    setup: DecopSetup, cli, db_path: Path
) -> None:
    _import(cli, setup)
    loaded = load_causal_lm(str(setup.model_dir), device="cpu")
    request = _request(setup, batch_size=24, calibrate_on="auto", baselines=False)
    cancel = threading.Event()

    def stop_after_three(event) -> None:
        if event.phase == "score" and event.done >= 3:
            cancel.set()

    first = CountingScorer(HFChoiceScorer(loaded, batch_size=24))
    outcome = execute_decop(
        db_path, request, on_progress=stop_after_three, cancel=cancel, scorer=first
    )
    assert outcome.status == "cancelled" and outcome.scored == 3
    assert len(first.prompts) == 3 * 24
    with Store(db_path) as store:
        assert store.scalar("SELECT status FROM runs WHERE name = 'r'") == "cancelled"
        assert store.scalar("SELECT COUNT(*) FROM decop_calibrations") == 0
        partial = decop_report(store, "r")
    assert partial["passages"] == {"scored": 3, "total": N_PASSAGES}

    second = CountingScorer(HFChoiceScorer(loaded, batch_size=24))
    resumed = execute_decop(db_path, request, scorer=second)
    assert resumed.status == "done"
    assert resumed.already_scored == 3 and resumed.scored == N_PASSAGES - 3
    assert len(second.prompts) == (N_PASSAGES - 3) * 24
    assert not set(first.prompts) & set(second.prompts)
    with Store(db_path) as store:
        counts = store.query("SELECT case_pk, COUNT(*) AS n FROM decop_scores GROUP BY case_pk")
        assert len(counts) == N_PASSAGES and all(row["n"] == 1 for row in counts)
        assert store.scalar("SELECT status FROM runs WHERE name = 'r'") == "done"
        assert store.scalar("SELECT COUNT(*) FROM decop_calibrations") == 1

    third = CountingScorer(HFChoiceScorer(loaded, batch_size=24))
    again = execute_decop(db_path, request, scorer=third)
    assert again.scored == 0 and third.prompts == []


REPORT_KEYS = {
    "auc",
    "auc_calibrated",
    "p_value",
    "per_work",
    "balanced_accuracy_youden",
    "auc_ci",
    "label_position_bias",
    "baselines",
    "calibration",
    "delta",
    "notes",
}


def test_cli_json_report_then_markdown_on_resume(setup: DecopSetup, cli) -> None:
    _import(cli, setup)
    args = ("decop", "bt", "--model", str(setup.model_dir), "--device", "cpu", "--plain")
    result = cli(*args, "--calibrate-on", "auto", "--name", "j", "--format", "json")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert report["kind"] == "decop" and report["status"] == "done"
    decop = report["decop"]
    assert set(decop) >= REPORT_KEYS
    assert isinstance(decop["auc"], float) and isinstance(decop["auc_calibrated"], float)
    accuracy = {w["work"]: w["accuracy"] for w in decop["per_work"]}
    welch = stats.ttest_ind(
        [accuracy[t] for t in SUSPECT],
        [a for t, a in accuracy.items() if t not in SUSPECT],
        equal_var=False,
    )
    assert decop["p_value"] == pytest.approx(float(welch.pvalue))
    assert {"work", "label", "accuracy"} <= set(decop["per_work"][0])
    assert {w["label"] for w in decop["per_work"]} == {0, 1}
    assert set(decop["label_position_bias"]) == {"before", "after"}
    assert set(decop["baselines"]) == {"perplexity", "zlib", "lowercase", "min_k_20"}
    for figures in decop["baselines"].values():
        assert 0.0 <= figures["auc"] <= 1.0
    assert "printed as 'AUC'" in decop["notes"]["balanced_accuracy_youden"]

    again = cli(*args, "--calibrate-on", "auto", "--name", "j")
    assert again.code == 0, again.err
    assert "0 passages scored" in again.out and f"{N_PASSAGES} already stored" in again.out
    for row in ("| Perplexity |", "| Zlib |", "| Lowercase |", "| Min-K%-Prob (k = 20%) |"):
        assert row in again.out
    assert f"| DE-COP | {decop['auc']:.3f} |" in again.out
    table2 = decop["auc_thresholded_bootstrap"]
    assert table2["resamples"] == 10 and table2["seed"] == 0
    assert f"| {table2['mean']:.3f} ± {table2['std']:.3f} |" in again.out
    assert "AUC thresholded, mean ± std (Table 2)" in again.out
    assert "| DE-COP (calibrated) |" in again.out
    assert "Per-work accuracy (chance = 0.25)" in again.out

    reported = json.loads(cli("report", "j", "--format", "json").out)
    assert reported["decop"]["auc"] == decop["auc"]
    assert "| DE-COP |" in cli("report", "j").out
    run = next(r for r in json.loads(cli("runs", "--format", "json").out) if r["name"] == "j")
    assert run["generations"] == run["total"] > 0
    assert again.out == again.out.replace("\x1b[", "")  # no terminal codes in the report


def test_calibration_must_be_clean_works_and_errors_are_clear(setup: DecopSetup, cli) -> None:
    _import(cli, setup)
    args = ("decop", "bt", "--model", str(setup.model_dir), "--device", "cpu", "--plain")
    suspect = cli(*args, "--calibrate-on", f"{CLEAN[0]},{SUSPECT[0]}")
    assert suspect.code == 2
    assert f"'{SUSPECT[0]}' is suspect" in suspect.err and "needs clean works" in suspect.err
    unknown = cli(*args, "--calibrate-on", "No Such Book")
    assert unknown.code == 2 and "no work named 'No Such Book'" in unknown.err
    every_clean = cli(*args, "--calibrate-on", ",".join(CLEAN))
    assert every_clean.code == 2 and "leave at least one clean work" in every_clean.err
    letter_only = cli(*args, "--letter-only")
    assert letter_only.code == 2 and "--backend openai" in letter_only.err
    assert json.loads(cli("runs", "--format", "json").out) == []  # nothing was started


def test_resolve_calibration_auto_and_titles_with_commas() -> None:
    works = [SuiteWork(t, AUTHOR, "suspect") for t in SUSPECT] + [
        SuiteWork(t, AUTHOR, "clean") for t in (*CLEAN, "Salt, Smoke and Rain")
    ]
    # Five clean works in title order: Map, Notes, Salt, Glass, Winter -> 0, 2 held out.
    assert resolve_calibration(works, "auto") == (
        "auto",
        ["A Map of Quiet Roads", "Salt, Smoke and Rain"],
    )
    assert resolve_calibration(works, None) == ("none", [])
    names = [w.title for w in works]
    assert split_work_list("salt, smoke and rain,The Glass Weather", names) == [
        "salt, smoke and rain",
        "The Glass Weather",
    ]
    assert resolve_calibration(works, "salt, smoke and rain,The Glass Weather") == (
        "explicit",
        ["Salt, Smoke and Rain", "The Glass Weather"],
    )
    with pytest.raises(UserError, match="at least 2 clean works"):
        resolve_calibration(works[:4], "auto")


class ScriptedScorer:
    """No model: picks the verbatim option of the suspect works with certainty, prefers
    letter A elsewhere, and cannot read every fifth prompt (an endpoint whose answer
    lacked the letters)."""

    def __init__(self, verbatims: dict[str, str]) -> None:
        self.verbatims = verbatims  # verbatim text -> title
        self.last_errors: dict[int, str] = {}
        self.calls = 0

    def choice_probabilities(self, prompts: Sequence[str], choices: Sequence[str]) -> np.ndarray:
        rows = np.tile([0.4, 0.3, 0.2, 0.1], (len(prompts), 1))
        self.last_errors = {}
        for i, prompt in enumerate(prompts):
            index = self.calls + i
            if index % 5 == 0:
                rows[i] = np.nan
                self.last_errors[i] = "no choice letter in the answer 'I cannot say'"
                continue
            for text, title in self.verbatims.items():
                if title in SUSPECT and f". {text}\n" in prompt:
                    rows[i] = np.eye(4)[ANSWER_LETTERS.index(letter_of_verbatim(prompt, text))]
        self.calls += len(prompts)
        return rows


def test_unreadable_prompts_are_stored_and_left_out_without_baselines(
    setup: DecopSetup, cli, db_path: Path
) -> None:
    _import(cli, setup)
    scorer = ScriptedScorer(
        {verbatim: title for title, items in setup.works.items() for verbatim, _ in items}
    )
    outcome = execute_decop(
        db_path, _request(setup, backend="openai", base_url="http://unused/v1"), scorer=scorer
    )
    unreadable = sum(1 for i in range(N_PASSAGES * 24) if i % 5 == 0)
    assert outcome.status == "done" and outcome.failed_prompts == unreadable
    assert not outcome.baselines
    with Store(db_path) as store:
        report = decop_report(store, "r")
        errors = store.scalar("SELECT errors FROM decop_scores ORDER BY case_pk LIMIT 1")
    assert json.loads(errors)["0"] == "no choice letter in the answer 'I cannot say'"
    assert report["failed_prompts"] == unreadable
    assert sum(w["failed_prompts"] for w in report["per_work"]) == unreadable
    per_work = {w["work"]: w for w in report["per_work"]}
    for title in SUSPECT:
        assert per_work[title]["accuracy"] == 1.0
        assert per_work[title]["n_prompts"] + per_work[title]["failed_prompts"] == 48
    assert report["auc"] == 1.0 and report["auc_calibrated"] is None
    assert report["baselines"] is None and "backend hf" in report["baselines_note"]
    markdown = decop_markdown(report)
    assert f"{unreadable} prompts without readable probabilities left out" in markdown
    assert "| Perplexity | — |" in markdown and "No calibration" in markdown


def test_a_screening_run_scores_the_first_passages_of_each_work(
    setup: DecopSetup, cli, db_path: Path
) -> None:
    """--passages-per-work 1: one passage of every work (in import order), a total that
    says so in the report, the run list and the progress, and a name of its own."""
    _import(cli, setup)
    args = ("decop", "bt", "--model", str(setup.model_dir), "--device", "cpu", "--plain")
    result = cli(*args, "--passages-per-work", "1", "--no-baselines", "--format", "json")
    assert result.code == 0, result.err
    n_works = len(SUSPECT) + len(CLEAN)
    name = f"bt-decop-{setup.model_dir.name}-1-per-work"
    report = json.loads(result.out)
    assert report["run"] == name
    decop = report["decop"]
    assert decop["passages"] == {"scored": n_works, "total": n_works}
    assert {w["work"] for w in decop["per_work"]} == set(SUSPECT) | set(CLEAN)
    assert all(w["n_passages"] == 1 for w in decop["per_work"])
    with Store(db_path) as store:
        scored = store.query(
            "SELECT c.case_id FROM decop_scores d JOIN cases c ON c.id = d.case_pk ORDER BY c.id"
        )
        first_of_each = store.query(
            "SELECT MIN(id) FROM cases GROUP BY work_id ORDER BY MIN(id)"
        )  # the first passage of each work, in import order
        assert [r[0] for r in store.query("SELECT case_pk FROM decop_scores ORDER BY case_pk")] == [
            r[0] for r in first_of_each
        ]
        config = json.loads(store.scalar("SELECT config FROM runs WHERE name = ?", (name,)))
    assert len(scored) == n_works and config["passages_per_work"] == 1
    run = next(r for r in json.loads(cli("runs", "--format", "json").out) if r["name"] == name)
    assert run["generations"] == run["total"] == n_works and run["status"] == "done"
    assert f"score {n_works}/{n_works} (100%)" in result.err  # progress: standard error
    again = cli(*args, "--passages-per-work", "1", "--no-baselines")
    assert again.code == 0 and f"{n_works} already stored" in again.out

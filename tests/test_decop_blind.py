"""The blind baseline of DE-COP reports (copyaudit.studies.decop.blind): the passages
alone, without the model, told apart by a bag-of-words classifier cross-validated by
work. Two constructed suites of our own random text, 8 suspect and 8 clean works of 5
passages each: in one the clean works' passages carry planted words (a vocabulary cue,
as the post-cut-off books of BookTection carry newer words), in the other both classes
draw from the same vocabulary. A scripted scorer makes DE-COP separate the classes
perfectly in both, and the baselines read word lengths (at chance without the cue; with
it they pick up the long planted words, as Das et al. warn).

Measured over 30 seeds of this construction (blind_baseline on the rows, 500
resamples): with the cue AUC 1.0 every time; without, mean 0.47, sd 0.19, and 3 of 30
intervals lay wholly above 0.5 (a flag by chance in about 1 of 10 suites this small)."""

from __future__ import annotations

import contextlib
import functools
import io
import json
import random
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from copyaudit.cli.main import main
from copyaudit.formats import load_cases
from copyaudit.studies.decop.blind import MIN_WORKS_PER_CLASS, blind_baseline, blind_flag
from copyaudit.studies.decop.method import ANSWER_LETTERS
from copyaudit.studies.decop.run import DecopRequest, execute_decop
from db import Store
from db.cases import import_cases
from screens.app import CopyauditApp
from screens.decop.run_view import DecopScreen
from tests.factories import write_decop_csv
from tests.test_screens_data import settle

WORDS = (  # noqa: SIM905 (a word list, easier to read as text)
    "river stone lantern harbour meadow candle window letter garden ledger kettle orchard "
    "bridge valley road mill bell chest gate clerk baker sailor cousin winter ferry map "
    "glass weather roof wall field quiet old narrow bright heavy slow walked carried "
    "painted opened waited under over beside through toward"
).split()
CUE = ("smartphone", "email", "website", "laptop", "podcast", "selfie")  # clean works only
N_WORKS, N_PASSAGES, N_WORDS = 8, 5, 30
NULL_SD = ((2 * N_WORKS + 1) / (12 * N_WORKS * N_WORKS)) ** 0.5  # Mann-Whitney AUC sd, no signal


def _passage(rng: random.Random, cue: bool) -> str:
    words = [rng.choice(WORDS) for _ in range(N_WORDS)]
    if cue:
        for word in rng.sample(CUE, 3):
            words[rng.randrange(N_WORDS)] = word
    return " ".join(words)


def _rows(with_cue: bool, seed: int) -> list[dict[str, object]]:
    """BookTection rows: the verbatim passage and three reorderings of its words."""
    rng = random.Random(seed)
    rows = []
    for label, prefix in ((1, "Suspect"), (0, "Clean")):
        for work in range(N_WORKS):
            for n in range(N_PASSAGES):
                verbatim = _passage(rng, with_cue and label == 0)
                words = verbatim.split()
                options = [verbatim, *(" ".join(words[k:] + words[:k]) for k in (3, 7, 11))]
                assert len(set(options)) == 4
                answer = (work + n) % 4
                options.insert(answer, options.pop(0))
                rows.append(
                    {
                        **{f"Example_{x}": t for x, t in zip("ABCD", options, strict=True)},
                        "Answer": "ABCD"[answer],
                        "ID": f"{prefix}_Work_{work}_-_Test_Author",
                        "Label": label,
                        "Length": "small",
                    }
                )
    return rows


class TitleScorer:
    """No model: the verbatim option gets most of the probability in suspect works'
    questions and a quarter in clean ones', so DE-COP separates the classes."""

    def __init__(self, verbatims: set[str]) -> None:
        self.verbatims = verbatims

    def choice_probabilities(self, prompts: Sequence[str], choices: Sequence[str]) -> np.ndarray:
        out = []
        for prompt in prompts:
            lines = {x: prompt.split(f"\n{x}. ", 1)[1].split("\n", 1)[0] for x in ANSWER_LETTERS}
            right = next(i for i, x in enumerate(ANSWER_LETTERS) if lines[x] in self.verbatims)
            weight = 0.9 if '"Suspect Work' in prompt else 0.1
            probs = np.full(4, (1 - weight) / 3)
            probs[right] = weight
            out.append(probs)
        return np.array(out)


class WordLengths:
    """Token log-probabilities from word lengths: baselines that see no membership."""

    def token_logprobs(self, texts: Sequence[str]) -> list[np.ndarray]:
        return [np.array([-0.3 * len(w) for w in t.split()]) for t in texts]


def _build(root: Path, with_cue: bool) -> Path:
    rows = _rows(with_cue, seed=1)
    csv = write_decop_csv(root / "suite.csv", rows)
    path = root / "decop.db"
    with Store(path) as store:
        import_cases(store, "s", "decop", load_cases("decop", csv), source=csv.name)
    verbatims = {str(r[f"Example_{r['Answer']}"]) for r in rows}
    request = DecopRequest(suite="s", name="r", model="scripted", chat=False)
    outcome = execute_decop(
        path, request, scorer=TitleScorer(verbatims), token_scorer=WordLengths()
    )
    assert outcome.status == "done"
    return path


@pytest.fixture(scope="module")
def suites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {
        name: _build(tmp_path_factory.mktemp(name), name == "cue") for name in ("cue", "no-cue")
    }


@functools.cache
def _report(path: Path, fmt: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["--db", str(path), "report", "r", "--format", fmt])
    return out.getvalue()


def test_a_planted_vocabulary_cue_is_found_and_flags_every_membership_auc(
    suites: dict[str, Path],
) -> None:
    decop = json.loads(_report(suites["cue"], "json"))["decop"]
    blind = decop["blind_baseline"]
    assert (blind["n_suspect"], blind["n_clean"], blind["n_passages"]) == (8, 8, 80)
    assert blind["folds"] == 5 and blind["auc"] >= 0.9 and blind["ci"][0] > 0.5
    assert decop["auc"] == 1.0  # the scripted DE-COP separates the works perfectly...
    flags = blind["flags"]
    # ...and is flagged all the same: the passages alone do as well, no model needed
    assert flags["decop"] and f"blind AUC {blind['auc']:.2f}" in flags["decop"]
    for key in ("perplexity", "zlib", "lowercase", "min_k_20"):
        assert flags[key], key  # at or below the blind AUC
    assert flags["decop_calibrated"] is None  # no calibration in this run
    text = _report(suites["cue"], "md")
    assert f"⚑ DE-COP: {flags['decop']}." in text
    assert "| DE-COP | 1.000 | 1.000–1.000 |" in text and "⚑ flagged |" in text
    assert f"⚑ DE-COP: {flags['decop']}." in _report(suites["cue"], "html")


def test_without_a_cue_the_blind_baseline_stays_near_chance_and_flags_nothing(
    suites: dict[str, Path],
) -> None:
    decop = json.loads(_report(suites["no-cue"], "json"))["decop"]
    blind = decop["blind_baseline"]
    # no signal: the AUC within two null standard deviations of 0.5 (sd 0.149 for 8 + 8
    # works) and its interval reaching 0.5
    assert abs(blind["auc"] - 0.5) <= 2 * NULL_SD
    assert blind["ci"][0] <= 0.5 <= blind["ci"][1] and not blind["separates"]
    assert decop["auc"] == 1.0
    assert not any(blind["flags"].values())
    assert blind["flags"].keys() == {
        "perplexity",
        "zlib",
        "lowercase",
        "min_k_20",
        "decop",
        "decop_calibrated",
    }
    text = _report(suites["no-cue"], "md")
    assert "⚑" not in text and "does not separate them" in text


def test_the_flag_rule() -> None:
    separates = {"auc": 0.8, "ci": [0.65, 0.92], "separates": True}
    at_chance = {"auc": 0.6, "ci": [0.4, 0.8], "separates": False}
    assert blind_flag(0.9, [0.8, 0.97], separates)  # intervals overlap
    assert blind_flag(0.75, [0.95, 0.99], separates)  # not above the blind AUC
    assert blind_flag(0.95, [0.93, 0.99], separates) is None  # clear of it
    assert blind_flag(0.55, [0.3, 0.8], at_chance) is None  # a blind figure at chance
    assert blind_flag(None, None, separates) is None
    assert blind_flag(0.9, [0.8, 0.97], {"reason": "too few works"}) is None
    # the date cue is a second blind figure: the flag names the one it is not clear of
    dated = {**at_chance, "date_cue": {"auc": 0.9, "ci": [0.7, 1.0], "separates": True}}
    assert "date cue AUC 0.90" in (blind_flag(0.95, [0.9, 1.0], dated) or "")


def test_too_few_works_a_date_cue_and_determinism() -> None:
    rng = random.Random(0)
    passages = [(f"w{i}", _passage(rng, i % 2 == 0)) for i in range(6) for _ in range(3)]
    labels = {f"w{i}": i % 2 for i in range(6)}  # w1, w3, w5 suspect; w0, w2, w4 clean
    few = blind_baseline(passages, {**labels, "w3": None, "w5": None})
    assert "reason" in few and "auc" not in few and few["n_suspect"] == 1
    assert f"at least {MIN_WORKS_PER_CLASS} suspect" in few["reason"]
    years = {f"w{i}": 1850 + 10 * i if i % 2 else 2024 for i in range(6)}
    once = blind_baseline(passages, labels, years)
    assert once == blind_baseline(passages, labels, years)  # seeded folds, same figures
    assert once["date_cue"]["auc"] == 1.0 and once["date_cue"]["separates"]
    undated = blind_baseline(passages, labels, {**years, "w0": None})
    assert undated["date_cue"] == {"reason": "1 of 6 works carry no year"}


def _plain(renderable: object) -> str:
    console = Console(width=120, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


@pytest.mark.anyio
@pytest.mark.parametrize("suite", ["cue", "no-cue"])
async def test_the_decop_view_shows_the_blind_baseline(
    suites: dict[str, Path], tmp_path: Path, suite: str
) -> None:
    path = Path(shutil.copy(suites[suite], tmp_path / "decop.db"))
    blind = json.loads(_report(suites[suite], "json"))["decop"]["blind_baseline"]
    async with CopyauditApp(path).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        pilot.app.open_run("r")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, DecopScreen) and screen.view is not None
        methods = _plain(screen.query_one("#decop-methods").content).splitlines()
    row = next(x for x in methods if x.strip().startswith("Blind (passages only)"))
    assert f"{blind['auc']:.3f}" in row and f"{blind['ci'][0]:.3f}–{blind['ci'][1]:.3f}" in row
    decop = next(x for x in methods if x.strip().startswith("DE-COP "))
    if suite == "cue":
        assert "⚑ 1.000" in decop
        assert methods[-1].strip() == (
            "⚑ the passages alone separate suspect from clean this well: Perplexity, Zlib, "
            "Lowercase, Min-K%-Prob (k = 20%), DE-COP"
        )
    else:
        assert "⚑" not in "".join(methods)
        assert methods[-1].strip() == "Blind baseline at chance (interval reaches 0.5): no flag"

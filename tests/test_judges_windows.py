"""Event windows are CopyBench's: spaCy tokens, window = stride = 128, text sliced as
scripts/eval_event_copying.py's `to_chunks` slices it (our own prose, no book text)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import pytest
import spacy

from copyaudit.judges import windows
from copyaudit.judges.events import EventJudge
from copyaudit.judges.windows import split_windows
from copyaudit.types import JudgeInput

PARAGRAPHS = [
    "Mr. O'Brien didn't knock. He never did... not since the winter the mill burned "
    "and the river froze solid \u2014 solid enough, folks said, to drive a cart across.",
    "\u201cYou're late,\u201d said Mrs. Kettering, not looking up from her ledger. "
    "\u201cThree days late, Mr. O'Brien. Don't tell me it's the weather again.\u201d",
    '"It\'s the weather," he said -- and grinned -- "and the mule, and the bridge at '
    "Hollow's End, which isn't there anymore.\" She'd heard that one before; she wrote "
    "it down anyway, 9:30 a.m., U.S. mail, 3.5 lbs of flour (unpaid).",
    "Outside, the boys were shouting\u2026 somebody's dog had got loose again. "
    "\"Y'all can't catch 'em!\" cried the smallest\u2013the one they called Tick\u2013"
    "and he was right, they couldn't, they wouldn't, not before supper anyway.",
    "O'Brien set the sack on the counter. 'Twas heavier than it looked. "
    '"I\'ll pay Friday," he said. "Or Saturday... or\u2014" '
    '"Friday," said Mrs. Kettering. "Before noon. I\'ve got my own bills, Mr. O\'Brien."',
    "He tipped his hat (it had been his father's, and his father's before that), "
    "stepped out into the cold, and didn't look back\u2014not once\u2014until the "
    "road bent east past the chapel, where the bell hadn't rung since '98.",
]
# paragraphs joined by blank lines and double spaces: runs of spaces give spaCy
# whitespace tokens, which count towards the 128
PROSE = "\n\n".join(PARAGRAPHS * 3).replace("; ", ";  ")


def _copybench_chunks(text: str, window: int = 128, stride: int = 128) -> list[str]:
    """scripts/eval_event_copying.py AttributionModel.to_chunks, transcribed;
    spacy.blank("en") has en_core_web_sm's tokenizer."""
    nlp = spacy.blank("en")
    nlp.max_length = 10_000_000
    text = text.replace("\n", " ")
    doc = nlp(text)
    words = [(token.text, token.idx) for token in doc]
    chunks = []
    for i in range(0, len(words), stride):
        begin, end = i, min(i + window, len(words))
        begin_idx, end_idx = words[begin][1], words[end - 1][1] + len(words[end - 1][0])
        chunks.append(text[begin_idx:end_idx])
    return chunks


@pytest.mark.parametrize("text", [PROSE, PROSE[:700], PROSE[37:], "  " + PROSE + "\n", ""])
def test_windows_identical_to_copybench_chunks(text: str) -> None:
    got = split_windows(text)
    assert [w.text for w in got] == _copybench_chunks(text)
    for window in got:  # spans index the original output
        assert text[window.start : window.end].replace("\n", " ") == window.text


def test_prose_spans_several_windows_and_the_regex_fallback_differs() -> None:
    chunks = _copybench_chunks(PROSE)
    assert len(chunks) >= 4
    # the reason for spaCy: the regex tokenizer moves the borders on this prose
    assert [w.text for w in split_windows(PROSE, tokenizer="regex")] != chunks


class RecordingModel:
    """Supports nothing; records the passages it is asked about."""

    threshold = 0.5

    def __init__(self) -> None:
        self.passages: list[str] = []

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.passages += [passage for _, passage in pairs]
        return [0.0] * len(pairs)

    def config(self) -> dict[str, Any]:
        return {"backend": "recording"}


def test_event_judge_asks_about_copybench_chunks() -> None:
    model = RecordingModel()
    item = JudgeInput("nonliteral", {"reference_events": ["A mill burned."]}, "x", PROSE)
    [[score]] = EventJudge(model).judge([item])
    assert model.passages == _copybench_chunks(PROSE)
    assert score.extra["windows"] == [[w.start, w.end] for w in split_windows(PROSE)]


def test_without_spacy_the_regex_tokenizer_is_used_and_recorded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *args: None if name == "spacy" else real_find_spec(name, *args),
    )
    assert windows.default_window_tokenizer() == "regex"
    judge = EventJudge(RecordingModel())
    assert judge.window_tokenizer == "regex"
    assert judge.config()["window_tokenizer"].startswith("regex ")


def test_spacy_is_not_imported_until_windows_are_cut() -> None:
    code = (
        "import sys, copyaudit.cli.main, copyaudit.judges.presets\n"
        "before = 'spacy' in sys.modules\n"
        "from copyaudit.judges.windows import split_windows\n"
        "split_windows('One two.')\n"
        "print(before, 'spacy' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False", "True"]

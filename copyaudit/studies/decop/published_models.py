"""The models of DE-COP's published workbooks and where each one's answers are: a
light table (no numerical imports), so the CLI's help can list it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from copyaudit.errors import UserError
from copyaudit.studies.decop.format import DECOP_LETTERS


def fold(name: str) -> str:
    """A name compared without case, spaces, dashes or underscores."""
    return re.sub(r"[^a-z0-9.]", "", name.casefold())


@dataclass(frozen=True)
class PublishedModel:
    """Where one model's answers are in the authors' workbooks: four probability
    columns (`{}` = the letter) or one column with the chosen letter."""

    name: str
    probabilities: str | None = None
    letter: str | None = None

    def columns(self) -> tuple[str, ...]:
        if self.probabilities is not None:
            return tuple(self.probabilities.format(letter) for letter in DECOP_LETTERS)
        return (str(self.letter),)

    @property
    def method(self) -> str:
        """The run's decoding method, as DE-COP runs record theirs."""
        return "next_token_probabilities" if self.probabilities else "letter_only"


# The models of the authors' workbooks (names as their 2_results_DE-COP.xlsx heads them).
PUBLISHED_MODELS: dict[str, PublishedModel] = {
    m.name: m
    for m in (
        PublishedModel("ChatGPT", probabilities="{}_Probability"),
        PublishedModel("GPT-3", probabilities="GPT3_{}_Probability"),
        PublishedModel("LLaMA-2-7B", probabilities="{}_Probability_LLAMMA2-7B"),
        PublishedModel("LLaMA-2-13B", probabilities="{}_Probability_LLAMMA2-13B"),
        PublishedModel("LLaMA-2-70B", probabilities="{}_Probability_LLAMMA2-70B"),
        PublishedModel("Claude-1.2", letter="Claude1.2"),
        PublishedModel("Claude-2.1", letter="Claude2.1"),
        PublishedModel("Mistral-7B", letter="Mistral-7B"),
        PublishedModel("Mixtral-8x7B", letter="Mixtral-8x7B"),
    )
}


def published_model(name: str) -> PublishedModel:
    """The model called `name` (case, spaces and dashes ignored: "chat-gpt", "llama2-70b")."""
    for model in PUBLISHED_MODELS.values():
        if fold(model.name) == fold(name):
            return model
    raise UserError(f"--model {name}: the DE-COP workbooks hold {', '.join(PUBLISHED_MODELS)}")

"""One window of a p_z run (copyaudit.engine.pz_run) as the app's window list and the
case dossier show it: the prefix and the reference suffix, the greedy continuation, per
scheme p_z, log p_z, n_for_p and the per-token probabilities (the lowest marked), and
the `copyaudit pz` command that scores the window again."""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass
from typing import Any

from copyaudit.engine.pz_run import JUDGE_PREFIX
from copyaudit.studies.extraction.windows import window_of


@dataclass(frozen=True)
class SchemeFigures:
    """One decoding scheme's figures on the window."""

    judge: str
    pz: float | None
    log_pz: float | None  # None: p_z = 0 (log p_z = -inf)
    n_for_p: float | None  # None: never (p_z = 0)
    token_log_probs: tuple[float | None, ...]  # None: -inf (outside the top k)
    lowest_token: int | None
    tokens: tuple[str, ...]  # the suffix's tokens as text ("" when not stored)

    @property
    def scheme(self) -> str:
        return self.judge.removeprefix(JUDGE_PREFIX)

    def token_probability(self, index: int) -> float:
        value = self.token_log_probs[index]
        return 0.0 if value is None else math.exp(value)


@dataclass(frozen=True)
class PzWindow:
    generation_id: int
    case_id: str
    title: str
    chars: tuple[int, int, int] | None  # the window's first, boundary and last character
    prefix: str
    reference: str
    greedy_output: str  # up to and including greedy's first token off the suffix
    schemes: tuple[SchemeFigures, ...]
    replay: str  # the command that scores this window again


def is_pz_judge(judge: str) -> bool:
    return judge.startswith(JUDGE_PREFIX)


def scheme_figures(judgments: list[dict[str, Any]]) -> tuple[SchemeFigures, ...]:
    """Per p_z judge among `judgments` (db.case_file.judgments_with_provenance rows)."""
    by_judge: dict[str, dict[str, dict[str, Any]]] = {}
    for j in judgments:
        if is_pz_judge(j["judge"]):
            by_judge.setdefault(j["judge"], {})[j["metric"]] = j
    out = []
    for judge, metrics in sorted(by_judge.items()):
        log_row = metrics.get("log_pz", {})
        extra = (log_row.get("evidence") or {}).get("extra") or {}
        values = tuple(extra.get("token_log_probs") or ())
        tokens = tuple(str(t) for t in extra.get("tokens") or ())
        out.append(
            SchemeFigures(
                judge=judge,
                pz=metrics.get("pz", {}).get("value"),
                log_pz=log_row.get("value"),
                n_for_p=metrics.get("n_for_p", {}).get("value"),
                token_log_probs=values,
                lowest_token=extra.get("lowest_token"),
                tokens=tokens if len(tokens) == len(values) else ("",) * len(values),
            )
        )
    return tuple(out)


def replay_command(record: dict[str, Any], judgments: list[dict[str, Any]]) -> str:
    """`copyaudit pz` on this one window with the run's model, schemes, k, T and p, as
    a new run (the run's own name would resume and score nothing)."""
    configs = [
        j.get("judge_config") or {}
        for j in judgments
        if is_pz_judge(j["judge"]) and j["metric"] == "pz"
    ]
    schemes = ",".join(dict.fromkeys(str(c.get("scheme")) for c in configs if c.get("scheme")))
    args = ["copyaudit", "pz", record["suite"], "--model", record["model"] or "default"]
    args += ["--schemes", schemes]
    top_k = next((c["top_k"] for c in configs if c.get("top_k")), None)
    if top_k is not None:
        args += ["--top-k", str(top_k)]
    temperature = next((c["temperature"] for c in configs if "temperature" in c), None)
    if temperature is not None:
        args += ["--temperature", f"{temperature:g}"]
    p = next((c["p"] for c in configs if "p" in c), None)
    if p is not None:
        args += ["--p", f"{p:g}"]
    dtype = (record.get("decoding") or {}).get("dtype")
    if dtype:
        args += ["--dtype", str(dtype)]
    args += ["--case", record["case_id"], "--name", f"{record['run']}-replay"]
    return shlex.join(args)


def pz_window(record: dict[str, Any], judgments: list[dict[str, Any]]) -> PzWindow | None:
    """The window of a generation (db.case_file.generation_record and its judgments);
    None when no p_z judge scored it."""
    schemes = scheme_figures(judgments)
    if not schemes:
        return None
    payload = record.get("payload") or {}
    window = window_of(payload) or {}
    chars = window.get("chars")
    return PzWindow(
        generation_id=int(record["id"]),
        case_id=str(record["case_id"]),
        title=str(record["title"]),
        chars=(int(chars[0]), int(chars[1]), int(chars[2])) if chars else None,
        prefix=str(payload.get("prefix", "")),
        reference=str(payload.get("reference", "")),
        greedy_output=str(record.get("output") or ""),
        schemes=schemes,
        replay=replay_command(record, judgments),
    )


SCHEME_HEADER = ("scheme", "p_z", "log p_z", "tries for p")


def scheme_cells(figures: SchemeFigures) -> list[str]:
    """A scheme's row of SCHEME_HEADER: p_z, log p_z (-inf at p_z = 0), the tries
    after which the suffix comes out with probability p (never at p_z = 0)."""
    return [
        figures.scheme,
        "—" if figures.pz is None else f"{figures.pz:.4g}",
        "-inf" if figures.log_pz is None else f"{figures.log_pz:.3f}",
        "never" if figures.n_for_p is None else f"{figures.n_for_p:g}",
    ]


def token_header(window: PzWindow) -> list[str]:
    return ["#", "token", *(f"p under {f.scheme}" for f in window.schemes)]


def token_rows(window: PzWindow) -> list[tuple[str, str, list[tuple[str, bool]]]]:
    """Per suffix token: its number, its text, and under each scheme its probability
    and whether it is that scheme's lowest."""
    first = window.schemes[0]
    return [
        (
            str(index + 1),
            first.tokens[index],
            [
                (f"{f.token_probability(index):.4f}", index == f.lowest_token)
                for f in window.schemes
            ],
        )
        for index in range(len(first.token_log_probs))
    ]

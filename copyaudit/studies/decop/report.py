"""The DE-COP report of a run: its figures from what is stored (with and without the
calibration, the baselines beside DE-COP as in the paper's Table 2), and their Markdown."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from copyaudit.errors import UserError
from copyaudit.render.markdown import cell, table
from copyaudit.render.text import suite_note_lines
from copyaudit.rows import skipped_note
from copyaudit.studies.decop.baselines import BASELINE_KEYS, BASELINE_LABELS
from copyaudit.studies.decop.blind import blind_baseline, blind_flags
from copyaudit.studies.decop.method import (
    ANSWER_LETTERS,
    N_ORDERS,
    TABLE2_RESAMPLES,
    TABLE2_SEED,
    WorkResult,
    summarize,
    summarize_baselines,
)
from copyaudit.studies.decop.works import WorkRows, grouped_rows, scored_verbatims, to_result
from db.cases import suite_import_note, suite_skipped
from db.decop import load_calibration
from db.runs import run_row, suite_kind
from db.totals import decop_progress

if TYPE_CHECKING:
    from db.connection import Store

NOTES = {
    "auc": "continuous ROC-AUC of per-work accuracy, suspect (1) vs clean (0) works",
    "balanced_accuracy_youden": (
        "balanced accuracy at the Youden-optimal accuracy threshold; this is the figure the "
        "DE-COP reference code printed as 'AUC'"
    ),
    "auc_ci": "95% percentile bootstrap interval of the AUC, works resampled within each class",
    "auc_thresholded_bootstrap": (
        "the paper's Table 2 figure: mean ± std over 10 bootstrap resamples (works, within "
        "each class) of the AUC of the Youden-thresholded predictions, as the authors' "
        "3_get_results_blackbox.py computes it per resample; numpy default_rng seed 0"
    ),
    "p_value": "Welch t-test of mean per-work accuracy, suspect vs clean",
    "baselines": (
        "membership scores of each verbatim passage (higher = more likely seen), averaged "
        "per work; same works and statistics as DE-COP"
    ),
    "blind_baseline": (
        "how well the passages alone, without the model, separate suspect from clean works "
        "(Das, Zhang and Tramèr 2024): a bag-of-words classifier cross-validated by work, "
        "on the same works as DE-COP. A membership AUC is flagged when a blind figure's 95% "
        "interval lies above 0.5 and the AUC does not exceed it or its interval overlaps "
        "the blind one (lower bound <= the blind upper bound)"
    ),
}


def decop_report(
    store: Store, run: str, n_bootstrap: int = 2000, seed: int = 0, blind: bool = True
) -> dict[str, Any]:
    """The DE-COP figures of a run, from what is stored (a partial run reports what it
    has). Keys: auc, auc_calibrated, balanced_accuracy_youden, p_value, auc_ci,
    calibrated {...}, delta, per_work [{work, label, accuracy, ...}], label_position_bias
    {before, after}, question {doc_type, format, length}, calibration {...}, baselines
    {perplexity, zlib, lowercase, min_k_20: {auc, ...}} or None, blind_baseline {auc,
    ci, n_works, method, ..., flags {each baseline, decop, decop_calibrated: why it is
    flagged, or None}} (studies.decop.blind), passages {scored, total},
    failed_prompts, notes. `blind=False` leaves the blind baseline out (None): a reader
    that wants the AUC alone spares the classifier's fitting."""

    row = run_row(store, run)
    run_id, sid = int(row["id"]), int(row["suite_id"])
    kind = suite_kind(store, sid)
    if kind != "decop":
        raise UserError(f"run '{run}' is not a DE-COP run (its suite holds {kind} cases)")
    config = json.loads(row["config"] or "{}")
    decoding = json.loads(row["decoding"] or "{}")
    calibration_config = config.get("calibration") or {"mode": "none", "works": []}
    held_out = set(calibration_config.get("works") or [])
    grouped = grouped_rows(store, run_id, sid)
    evaluated = [to_result(n, r) for n, r in grouped.items() if n not in held_out and r.probs]
    calibration_results = [to_result(n, r) for n, r in grouped.items() if n in held_out and r.probs]

    stored = load_calibration(store, run_id)
    if stored is not None:
        summary = summarize(
            evaluated, delta=np.asarray(stored["delta"]), n_bootstrap=n_bootstrap, seed=seed
        )
        delta_source = f"fitted when the run finished, on {stored['n_prompts']} prompts"
    elif calibration_results:
        summary = summarize(
            evaluated,
            calibration_works=calibration_results,
            n_bootstrap=n_bootstrap,
            seed=seed,
        )
        n_prompts = sum(len(w.probs) for w in calibration_results)
        delta_source = (
            f"fitted for this report on the {n_prompts} calibration prompts scored so far "
            "(the run has not finished)"
        )
    else:
        summary = summarize(evaluated, n_bootstrap=n_bootstrap, seed=seed)
        delta_source = None
    for entry in summary["per_work"]:
        rows = grouped[entry["work"]]
        entry["n_passages"] = rows.passages
        entry["failed_prompts"] = rows.failed_prompts

    baselines, baselines_note = _baselines_report(
        grouped, [w.work for w in evaluated], config, n_bootstrap, seed
    )
    blind_block = (
        _blind_report(store, run_id, sid, evaluated, summary, baselines, n_bootstrap, seed)
        if blind
        else None
    )
    scored, total = decop_progress(store, run_id)
    results_note = skipped_note(scored * N_ORDERS, suite_skipped(store, sid, run_id))
    return {
        **summary,
        "method": decoding.get("method"),
        "question": {
            "doc_type": config.get("doc_type", "book"),
            "format": "chat" if config.get("prompt_format") else "plain",
            "length": config.get("length"),
        },
        "calibration": {
            "mode": calibration_config.get("mode", "none"),
            "rule": calibration_config.get("rule"),
            "works": [
                {
                    "work": w.work,
                    "label": w.label,
                    "n_prompts": len(w.answers),
                    "accuracy": w.accuracy(),
                }
                for w in calibration_results
            ],
            "delta": summary["delta"],
            "delta_source": delta_source,
        },
        "baselines": baselines,
        "baselines_note": baselines_note,
        "blind_baseline": blind_block,
        "passages": {"scored": scored, "total": total},
        "failed_prompts": sum(r.failed_prompts for r in grouped.values()),
        "notes": NOTES,
        "import_note": suite_import_note(store, sid),
        # imported results (import decop-results --skip-invalid): the rows left out; only
        # when there are some (the pinned reports of runs keep their keys)
        **({"results_note": results_note} if results_note else {}),
    }


def membership_results(
    summary: Mapping[str, Any], baselines: Mapping[str, Any] | None
) -> dict[str, Mapping[str, Any] | None]:
    """The membership AUCs of a report by flag key: each baseline, DE-COP and DE-COP
    calibrated (None where there is no such figure)."""
    return {
        **{key: (baselines or {}).get(key) for key in BASELINE_KEYS},
        "decop": summary,
        "decop_calibrated": summary.get("calibrated"),
    }


def _blind_report(
    store: Store,
    run_id: int,
    sid: int,
    evaluated: Sequence[WorkResult],
    summary: Mapping[str, Any],
    baselines: Mapping[str, Any] | None,
    n_bootstrap: int,
    seed: int,
) -> dict[str, Any]:
    """The blind baseline on the evaluated works' scored passages, with its flags."""
    passages, years = scored_verbatims(store, run_id, sid)
    labels = {w.work: w.label for w in evaluated}
    block = blind_baseline(passages, labels, years, n_bootstrap=n_bootstrap, seed=seed)
    block["flags"] = blind_flags(membership_results(summary, baselines), block)
    return block


def _baselines_report(
    grouped: Mapping[str, WorkRows],
    evaluated: Sequence[str],
    config: Mapping[str, Any],
    n_bootstrap: int,
    seed: int,
) -> tuple[dict[str, Any] | None, str | None]:
    per_work: dict[str, dict[str, np.ndarray]] = {}
    for name in evaluated:
        rows = grouped[name].baselines
        if rows:
            per_work[name] = {
                method: np.array([r.get(method, math.nan) for r in rows], dtype=float)
                for method in BASELINE_KEYS.values()
            }
    if not per_work:
        return None, config.get("baselines_note") or "no baseline scores stored"
    labels = {name: grouped[name].label for name in per_work}
    summary = summarize_baselines(per_work, labels, n_bootstrap=n_bootstrap, seed=seed)
    return {key: summary[method] for key, method in BASELINE_KEYS.items()}, None


# ---------------------------------------------------------------------------
# Markdown (the paper's Table 2 layout)
# ---------------------------------------------------------------------------

BAR_WIDTH = 40
CHANCE = 0.25


def _number(value: float | None, digits: int = 3) -> str:
    return "—" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def _p(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


def mean_std(figure: Mapping[str, Any] | None) -> str:
    """'0.972 ± 0.009' for a bootstrap figure {mean, std}, '—' without one."""
    return "—" if not figure else f"{figure['mean']:.3f} ± {figure['std']:.3f}"


def _ci(interval: Sequence[float] | None) -> str:
    return "—" if not interval else f"{interval[0]:.3f}–{interval[1]:.3f}"


def _label(label: int | None) -> str:
    return {1: "suspect", 0: "clean"}.get(label, "unknown")  # type: ignore[arg-type]


def accuracy_bar(accuracy: float, width: int = BAR_WIDTH, chance: float = CHANCE) -> str:
    """A text bar of the accuracy with the chance line drawn at `chance` ('|' over an
    empty cell, '╋' over a filled one)."""
    filled = round(accuracy * width)
    cells = ["█"] * filled + [" "] * (width - filled)
    mark = min(width - 1, round(chance * width))
    cells[mark] = "╋" if cells[mark] == "█" else "|"
    return "".join(cells)


def decop_markdown(report: Mapping[str, Any]) -> str:
    """The run's DE-COP figures: method rows x AUC as in the paper's Table 2, the
    calibration and the per-work accuracies against the chance line (0.25). Takes the
    full report (with a "decop" key) or the decop block alone."""
    block = report.get("decop", report)
    lines: list[str] = []
    if "run" in report:
        lines += [
            f"# DE-COP run {report['run']}",
            "",
            f"suite {report.get('suite')}, model {report.get('model')}, "
            f"status {report.get('status')}",
            *suite_note_lines(block),
            "",
        ]
    passages = block["passages"]
    lines.append(
        f"{passages['scored']} of {passages['total']} passages scored, "
        f"{N_ORDERS} option orders each ({block.get('method') or 'next_token_probabilities'}); "
        f"{block['n_suspect']} suspect and {block['n_clean']} clean works evaluated"
        + (
            f"; {block['failed_prompts']} prompts without readable probabilities left out"
            if block["failed_prompts"]
            else ""
        )
        + "."
    )
    question = block.get("question")
    if question:
        lines.append(
            f"Question about each {question['doc_type']}, {question['format']} prompts"
            + (
                " (the model's chat template, the authors' system prompt)"
                if question["format"] == "chat"
                else ""
            )
            + (f"; passages of length {question['length']} only" if question["length"] else "")
            + "."
        )
    lines += [
        "",
        "## Detection of suspect works (AUC, as in the paper's Table 2)",
        "",
    ]
    results = membership_results(block, block.get("baselines"))
    calibrated = block.get("calibrated")
    blind = block.get("blind_baseline") or {}
    flags = blind.get("flags") or {}
    rows = [(label, key) for key, label in {**BASELINE_LABELS, **RESULT_LABELS}.items()]
    lines += table(
        [
            "Method",
            "AUC (continuous)",
            "95% CI",
            "AUC thresholded, mean ± std (Table 2)",
            "p-value (Welch)",
            "vs blind baseline",
        ],
        [
            [label, "—", "—", "—", "—", "—"]
            if (result := results[key]) is None
            else [
                label,
                _number(result["auc"]),
                _ci(result["auc_ci"]),
                mean_std(result.get("auc_thresholded_bootstrap")),
                _p(result["p_value"]),
                flag_mark(flags.get(key), blind),
            ]
            for label, key in rows
            if key != "decop_calibrated" or calibrated
        ]
        + [
            [
                BLIND_LABEL,
                _number(blind.get("auc")),
                _ci(blind.get("ci")),
                "—",
                "—",
                "—",
            ]
        ],
    )
    lines += [
        "",
        "Table 2 column: the paper's figure, mean ± std over "
        f"{TABLE2_RESAMPLES} bootstrap resamples of the works (within each class) of the AUC of "
        "the Youden-thresholded predictions, as the authors' code computes it per resample "
        f"(numpy default_rng seed {TABLE2_SEED}; the authors published no seed). The continuous "
        "AUC ranks the works without a threshold.",
        "",
        "Balanced accuracy at the Youden threshold (the figure the DE-COP reference code "
        f'printed as "AUC"): {_number(block["balanced_accuracy_youden"])}'
        + (f", calibrated {_number(calibrated['balanced_accuracy_youden'])}" if calibrated else "")
        + ".",
    ]
    if block.get("baselines_note"):
        lines.append(f"Baselines: {block['baselines_note']}.")
    lines += blind_lines(blind, {**BASELINE_LABELS, **RESULT_LABELS})
    lines += _calibration_lines(block)
    lines += _per_work_lines(block)
    return "\n".join(lines).rstrip() + "\n"


RESULT_LABELS = {"decop": "DE-COP", "decop_calibrated": "DE-COP (calibrated)"}
BLIND_LABEL = "Blind baseline (passages only, no model)"


def flag_mark(flag: str | None, blind: Mapping[str, Any]) -> str:
    """'flagged' / 'clear' for a membership AUC against the blind baseline; '—' without
    a blind figure."""
    if blind.get("auc") is None:
        return "—"
    return "⚑ flagged" if flag else "clear"


def blind_lines(blind: Mapping[str, Any], labels: Mapping[str, str]) -> list[str]:
    """The blind baseline: its figure or why it has none, its method, the date cue and
    each flagged membership result (labels: flag key -> row label)."""
    if not blind:
        return []
    lines = ["", "## Blind baseline (the passages alone, no model)", ""]
    if blind.get("reason"):
        return [*lines, f"No blind baseline: {blind['reason']}."]
    verdict = (
        "separates suspect from clean (interval above 0.5)"
        if blind["separates"]
        else "does not separate them (interval reaches 0.5): no flag"
    )
    lines.append(
        f"AUC {_number(blind['auc'])} [{_ci(blind['ci'])}] over {blind['n_suspect']} suspect "
        f"and {blind['n_clean']} clean works ({blind['n_passages']} passages, "
        f"{blind['folds']} folds): {verdict}."
    )
    date = blind.get("date_cue") or {}
    if date.get("auc") is not None:
        lines.append(f"Date cue (older = suspect): AUC {_number(date['auc'])} [{_ci(date['ci'])}].")
    elif date.get("reason"):
        lines.append(f"Date cue: none ({date['reason']}).")
    lines.append(f"Method: {blind['method']}.")
    flagged = [(labels[k], text) for k, text in (blind.get("flags") or {}).items() if text]
    lines += [f"⚑ {label}: {text}." for label, text in flagged]
    return lines


def _calibration_lines(block: Mapping[str, Any]) -> list[str]:
    calibration = block["calibration"]
    bias = block["label_position_bias"]

    def shares(values: Sequence[float] | None) -> str:
        if values is None:
            return "—"
        return " ".join(
            f"{letter} {100 * v:.0f}%" for letter, v in zip(ANSWER_LETTERS, values, strict=True)
        )

    lines = ["", "## Calibration", ""]
    if calibration["mode"] == "none":
        lines.append("No calibration (no held-out clean works).")
    else:
        held = ", ".join(
            f"{cell(w['work'])} (accuracy {_number(w['accuracy'])})" for w in calibration["works"]
        )
        rule = f": {calibration['rule']}" if calibration.get("rule") else ""
        lines.append(
            f"Held-out clean works ({calibration['mode']}{rule}): {held or 'none scored'}."
        )
        if calibration["delta"] is not None:
            delta = ", ".join(
                f"{letter} {d:+.4f}"
                for letter, d in zip(ANSWER_LETTERS, calibration["delta"], strict=True)
            )
            lines.append(f"Δ = 0.25 − mean p per letter: {delta} ({calibration['delta_source']}).")
    lines.append(f"Chosen letters before calibration: {shares(bias['before'])}.")
    if bias.get("after") is not None:
        lines.append(f"Chosen letters after calibration: {shares(bias['after'])}.")
    return lines


def _axis(indent: int) -> str:
    """Tick labels 0, 0.25 (the chance line) and 1 over the bar cells."""
    cells = [" "] * (BAR_WIDTH + 4)
    for position, text in (
        (0, "0"),
        (round(CHANCE * BAR_WIDTH), str(CHANCE)),
        (BAR_WIDTH - 1, "1"),
    ):
        cells[position : position + len(text)] = text
    return (" " * indent + "".join(cells)).rstrip()


def _per_work_lines(block: Mapping[str, Any]) -> list[str]:
    per_work = block["per_work"]
    calibrated = any(w.get("accuracy_calibrated") is not None for w in per_work)
    lines = [
        "",
        f"## Per-work accuracy (chance = {CHANCE})",
        "",
    ]
    ordered = sorted(per_work, key=lambda w: (-(w["label"] or 0), -w["accuracy"], w["work"]))
    lines += table(
        ["work", "label", "passages", "accuracy", *(["calibrated"] if calibrated else [])],
        [
            [
                w["work"],
                _label(w["label"]),
                w.get("n_passages", ""),
                _number(w["accuracy"]),
                *([_number(w["accuracy_calibrated"])] if calibrated else []),
            ]
            for w in ordered
        ],
    )
    if not ordered:
        return lines
    width = max(len(w["work"]) for w in ordered)
    width = min(width, 40)
    lines += ["", "```", _axis(width + 11)]
    for w in ordered:
        name = w["work"] if len(w["work"]) <= width else w["work"][: width - 1] + "…"
        lines.append(
            f"{name:<{width}} {_label(w['label']):<8} |{accuracy_bar(w['accuracy'])}| "
            f"{_number(w['accuracy'], 2)}"
        )
    lines.append("```")
    return lines

"""The DE-COP report of a run: its figures from what is stored (with and without the
calibration, the baselines beside DE-COP as in the paper's Table 2), and their Markdown."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from copyaudit.errors import UserError
from copyaudit.render.markdown import cell, table
from copyaudit.render.text import suite_note_lines
from copyaudit.rows import skipped_note
from copyaudit.studies.decop.baselines import BASELINE_KEYS, BASELINE_LABELS
from copyaudit.studies.decop.method import (
    ANSWER_LETTERS,
    N_ORDERS,
    TABLE2_RESAMPLES,
    TABLE2_SEED,
    summarize,
    summarize_baselines,
)
from copyaudit.studies.decop.works import WorkRows, grouped_rows, to_result
from db.cases import suite_import_note, suite_skipped
from db.decop import load_calibration
from db.runs import run_row, suite_kind
from db.totals import decop_progress

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
}


def decop_report(store: Any, run: str, n_bootstrap: int = 2000, seed: int = 0) -> dict[str, Any]:
    """The DE-COP figures of a run, from what is stored (a partial run reports what it
    has). Keys: auc, auc_calibrated, balanced_accuracy_youden, p_value, auc_ci,
    calibrated {...}, delta, per_work [{work, label, accuracy, ...}], label_position_bias
    {before, after}, question {doc_type, format, length}, calibration {...}, baselines
    {perplexity, zlib, lowercase, min_k_20: {auc, ...}} or None, passages {scored,
    total}, failed_prompts, notes."""

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
        "passages": {"scored": scored, "total": total},
        "failed_prompts": sum(r.failed_prompts for r in grouped.values()),
        "notes": NOTES,
        "import_note": suite_import_note(store, sid),
        # imported results (import decop-results --skip-invalid): the rows left out; only
        # when there are some (the pinned reports of runs keep their keys)
        **({"results_note": results_note} if results_note else {}),
    }


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
    rows = [
        (label, (block.get("baselines") or {}).get(key)) for key, label in BASELINE_LABELS.items()
    ]
    rows.append(("DE-COP", block))
    calibrated = block.get("calibrated")
    if calibrated:
        rows.append(("DE-COP (calibrated)", calibrated))
    lines += table(
        [
            "Method",
            "AUC (continuous)",
            "95% CI",
            "AUC thresholded, mean ± std (Table 2)",
            "p-value (Welch)",
        ],
        [
            [label, "—", "—", "—", "—"]
            if figures is None
            else [
                label,
                _number(figures["auc"]),
                _ci(figures["auc_ci"]),
                mean_std(figures.get("auc_thresholded_bootstrap")),
                _p(figures["p_value"]),
            ]
            for label, figures in rows
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
    lines += _calibration_lines(block)
    lines += _per_work_lines(block)
    return "\n".join(lines).rstrip() + "\n"


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

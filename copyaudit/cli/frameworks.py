"""`import-generations --from FRAMEWORK PATH`: a framework's log as a suite and a run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from copyaudit.cli.output import echo
from copyaudit.frameworks.published_check import check_published
from copyaudit.frameworks.registry import FRAMEWORKS
from db.cases import import_cases
from db.runs import import_generations


def import_framework_log(
    obj: Any,
    framework: str,
    path: Path,
    suite: str,
    run_name: str | None,
    model: str | None,
    replace: bool,
) -> None:
    """Read the log, store its cases in `suite` and its outputs as run `run_name` (the
    log's own name by default), in one transaction; then say how copyaudit's extraction
    figures compare with those the framework published, where it kept any."""
    log = FRAMEWORKS[framework](path)
    run = run_name or log.run
    check = check_published(log) if log.published else None
    with obj.store() as store, store.transaction(durable=True):
        cases = import_cases(
            store, suite, "extraction", log.cases, source=str(path), replace=replace
        )
        added, unchanged, replaced = import_generations(
            store,
            run=run,
            suite=suite,
            model=model or log.model,
            rows=log.generations,
            source=str(path),
            replace=replace,
            decoding=log.decoding,
            config=log.provenance(),
        )
    echo(
        f"{suite}: {cases.added} cases added, {cases.unchanged} unchanged ({framework} log)\n"
        f"{run}: {added} added, {unchanged} unchanged, {replaced} replaced "
        f"(model {model or log.model})"
    )
    for note in log.notes:
        echo(f"{run}: {note}", err=True)
    if check is not None:
        echo(f"{run}: {check.summary()}")
        for case_id, metric, ours, theirs in check.differing[:10]:
            echo(f"  {case_id} {metric}: copyaudit {ours!r}, {framework} {theirs!r}", err=True)
    if added or replaced:
        echo(f"{run}: not judged yet: copyaudit judge {run}", err=True)

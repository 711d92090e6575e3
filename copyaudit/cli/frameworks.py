"""`import-generations --from FRAMEWORK PATH`: a framework's log as a suite and runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from copyaudit.cli.output import echo
from copyaudit.cli.search_index import backlog_hint, echo_hint
from copyaudit.frameworks.log import FrameworkLog
from copyaudit.frameworks.published_check import check_published
from copyaudit.frameworks.registry import FRAMEWORKS
from db.cases import import_cases
from db.runs import import_generations


def _run_name(log: FrameworkLog, given: str | None, several: bool) -> str:
    if given is None:
        return log.run
    return f"{given}-{log.run}" if several else given


def import_framework_log(
    obj: Any,
    framework: str,
    path: Path,
    suite: str,
    run_name: str | None,
    model: str | None,
    replace: bool,
) -> None:
    """Read the log, store its cases in `suite` and its outputs as one run per model it
    holds (`run_name`, or the log's own names; RUN-NAME when it holds several), all in
    one transaction; then say how copyaudit's extraction figures compare with those the
    framework published, where it kept any."""
    read = FRAMEWORKS[framework](path)
    logs = read if isinstance(read, list) else [read]
    lines: list[str] = []
    unjudged: list[str] = []
    with obj.store() as store, store.transaction(durable=True):
        for log in logs:
            run = _run_name(log, run_name, len(logs) > 1)
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
            lines.append(
                f"{suite}: {cases.added} cases added, {cases.unchanged} unchanged "
                f"({framework} log)\n{run}: {added} added, {unchanged} unchanged, "
                f"{replaced} replaced (model {model or log.model})"
            )
            lines += [f"{run}: {note}" for note in log.notes]
            if log.published:
                check = check_published(log)
                lines.append(f"{run}: {check.summary()}")
                lines += [
                    f"  {case_id} {metric}: copyaudit {ours!r}, {framework} {theirs!r}"
                    for case_id, metric, ours, theirs in check.differing[:10]
                ]
            if added or replaced:
                unjudged.append(run)
        hint = backlog_hint(store)
    echo("\n".join(lines))
    for run in unjudged:
        echo(f"{run}: not judged yet: copyaudit judge {run}", err=True)
    echo_hint(hint)

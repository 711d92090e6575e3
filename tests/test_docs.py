"""The documentation: the site builds with `mkdocs build --strict`, the README stays a short
first page that opens with the two commands, and every `copyaudit ...` line in a code
block of the README or the docs names a registered command and options it has."""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest

from copyaudit.cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
README_MAX_LINES = 200
TWO_COMMANDS = [
    "```",
    "make demo    # set up, build the demo database from samples/, open the app",
    "make test    # set up, run the test suite (the fast stage; `make test-all` adds the slow one)",
    "```",
]
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None,
    reason="mkdocs is not installed (pip install -e '.[docs]'; the dev extra has it)",
)
def test_site_builds_strict(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "index.html").is_file()


def test_readme_is_short_and_opens_with_the_two_commands() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"
    assert lines[0] == "# copyaudit"
    assert lines[2:6] == TWO_COMMANDS


def command_lines(text: str) -> list[str]:
    """The `copyaudit ...` invocations in the fenced code blocks of a Markdown text."""
    found = []
    for block in FENCE.findall(text):
        for line in block.splitlines():
            line = line.split(" #", 1)[0].strip().removeprefix("$ ")
            # "copyaudit suites / copyaudit runs", "copyaudit review list / review set ...":
            # two invocations on one line, the second may leave out "copyaudit"
            first, *rest = re.split(r"\s/\s", line)
            found += [first, *(p if p.startswith("copyaudit") else f"copyaudit {p}" for p in rest)]
    return [line for line in found if re.match(r"copyaudit(\s|$)", line)]


def option_names(command: click.Command) -> set[str]:
    return {name for param in command.params for name in (*param.opts, *param.secondary_opts)}


def problems(line: str) -> list[str]:
    """What in one `copyaudit ...` line is not a command or option the CLI has."""
    words = line.split()[1:]
    allowed = option_names(cli) | {"--help", "-h"}
    command: click.Command = cli
    path = ["copyaudit"]
    ctx = click.Context(cli)
    takes_value = {name for p in cli.params if not getattr(p, "is_flag", False) for name in p.opts}
    index = 0
    while isinstance(command, click.Group) and index < len(words):
        word = words[index]
        index += 1
        if word.startswith("-"):
            index += word in takes_value  # a global option's value
            continue
        if word.startswith(("[", "<")) or word.isupper():
            break  # a placeholder (`copyaudit [--db PATH]`, `copyaudit CMD`)
        sub = command.get_command(ctx, word)
        if sub is None:
            return [f"{' '.join(path)}: no command {word!r}"]
        command, path = sub, [*path, word]
        allowed |= option_names(command)
    wrong = []
    for word in words:
        for option in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", word.split("=", 1)[0]):
            if option not in allowed:
                wrong.append(f"{' '.join(path)}: no option {option}")
    return wrong


def test_documented_commands_exist() -> None:
    lines = [
        (path.relative_to(ROOT), line)
        for path in documents()
        for line in command_lines(path.read_text(encoding="utf-8"))
    ]
    assert len(lines) >= 20, "the docs show fewer commands than expected: is the parser broken?"
    wrong = [f"{path}: {line}\n    {p}" for path, line in lines for p in problems(line)]
    assert wrong == [], "\n".join(wrong)


def test_the_command_check_can_fail() -> None:
    assert problems("copyaudit report --format json RUN") == []
    assert problems("copyaudit --db x.db import literal cases.jsonl --suite s") == []
    assert problems("copyaudit reprot RUN") == ["copyaudit: no command 'reprot'"]
    assert problems("copyaudit report --fromat json") == ["copyaudit report: no option --fromat"]
    block = "```\ncopyaudit runs   # list\nmake x\ncopyaudit queue list / queue show Q\n```\n"
    assert command_lines(block) == [
        "copyaudit runs",
        "copyaudit queue list",
        "copyaudit queue show Q",
    ]


DEMO_DB = "copyaudit-demo.db"
GENERATION_PLACEHOLDER = "RUN/CASE/T"
NOT_RUN = {  # a documented demo command this test leaves out, and why
    "run": "generates with the embedded model (its own tests run it, marked slow)",
    None: "opens the app (the Pilot tests open it)",
}


def demo_commands() -> list[list[str]]:
    """The tours' commands on the demo database, as argument lists after `--db FILE`."""
    pages = [ROOT / "README.md", ROOT / "docs" / "getting-started.md"]
    found = []
    for page in pages:
        for line in command_lines(page.read_text(encoding="utf-8")):
            words = shlex.split(line)[1:]
            if words[:2] == ["--db", DEMO_DB] or words[:1] == ["annotator"]:
                found.append(words[2:] if words[0] == "--db" else words)
    return found


def test_the_tours_commands_run_on_the_demo_database(
    cli, demo_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # where `-o run.html` and the like are written
    listed = json.loads(cli("review", "list", "--format", "json", db=demo_db).out)
    generation = listed["rows"][0]["generation_key"]  # a real key for RUN/CASE/T
    ran = []
    for words in demo_commands():
        if (words[0] if words else None) in NOT_RUN:
            continue
        words = [generation if w == GENERATION_PLACEHOLDER else w for w in words]
        result = cli(*words, db=demo_db)
        assert result.code == 0, f"copyaudit {' '.join(words)}: {result.err}"
        ran.append(words[0])
    assert {
        "runs",
        "report",
        "compare",
        "review",
        "agreement",
        "verify",
        "queue",
        "dossier",
    } <= set(ran)
    assert (tmp_path / "run.html").is_file() and (tmp_path / "case.html").is_file()

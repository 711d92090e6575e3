"""Runs over an OpenAI-compatible endpoint that fails: an outage leaves the run 'done
with N failed', running it again retries those cases (unless --no-retry-failed), and the
token budget given is what the run records and what the endpoint is asked for."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from db import Store
from tests.conftest import write_jsonl
from tests.test_models_openai import Behaviour, FakeServer, chat_completion, serve

__all__ = ["serve"]  # the fake server fixture, shared with test_models_openai

CASES = [
    {"id": f"c{i}", "title": "Our Own Tales", "input": f"Story {i} begins", "reference": "and ends"}
    for i in range(3)
]


class Outage:
    """A fake endpoint that answers 503 while `down`, else a fixed chat completion."""

    def __init__(self) -> None:
        self.down = True

    def __call__(self, path: str, body: dict[str, Any], attempt: int):
        if self.down:
            return 503, {"error": {"message": "service unavailable"}}, 0.0
        return 200, chat_completion("a fresh continuation of our own"), 0.0


@pytest.fixture
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """The client's retries happen at once (the outage lasts through all of them)."""
    monkeypatch.setattr("copyaudit.models.http_client.time.sleep", lambda seconds: None)


def _suite(tmp_path: Path, cli) -> None:
    result = cli("import", "literal", str(write_jsonl(tmp_path / "c.jsonl", CASES)), "--suite", "s")
    assert result.code == 0, result.err


def _run(cli, url: str, *extra: str):
    return cli(
        "run", "s", "--backend", "openai", "--base-url", url, "--model", "m", "--name", "api",
        *extra,
    )  # fmt: skip


def _generations(db_path: Path) -> list[tuple[int, str, str | None]]:
    with Store(db_path) as store:
        return [
            (r["id"], r["output"], r["error"])
            for r in store.query("SELECT id, output, error FROM generations ORDER BY id")
        ]


def test_an_outage_is_retried_on_the_next_run(
    tmp_path: Path,
    cli,
    db_path: Path,
    serve: Callable[[Behaviour], FakeServer],
    no_backoff: None,
) -> None:
    _suite(tmp_path, cli)
    outage = Outage()
    server = serve(outage)

    first = _run(cli, server.url)
    assert first.code == 0, first.err
    assert "run api: done with 3 failed; 0 generated, 3 failed" in first.out
    assert "3 failed" in first.out.split("# Run api", 1)[1]  # the report counts them
    runs = json.loads(cli("runs", "--format", "json").out)
    assert runs[0]["status"] == "done with 3 failed" and runs[0]["failed"] == 3
    failed = _generations(db_path)
    assert len(failed) == 3 and all(error for _, _, error in failed)

    outage.down = False
    asked = len(server.requests)
    skipped = _run(cli, server.url, "--no-retry-failed")
    assert skipped.code == 0, skipped.err
    assert "done with 3 failed; 0 generated, 0 failed" in skipped.out
    assert len(server.requests) == asked  # nothing was asked for
    assert _generations(db_path) == failed

    retried = _run(cli, server.url)
    assert retried.code == 0, retried.err
    assert "run api: done; 3 generated, 0 failed" in retried.out
    after = _generations(db_path)
    # the same generations (ids kept), now with the endpoint's answer and no error
    assert [gid for gid, _, _ in after] == [gid for gid, _, _ in failed]
    assert all(out == "a fresh continuation of our own" and err is None for _, out, err in after)
    report = json.loads(cli("report", "api", "--format", "json").out)
    assert report["failed"] == 0 and report["status"] == "done" and report["n"] == 3
    assert json.loads(cli("runs", "--format", "json").out)[0]["status"] == "done"


def test_a_partial_outage_counts_only_the_failed(
    tmp_path: Path,
    cli,
    db_path: Path,
    serve: Callable[[Behaviour], FakeServer],
    no_backoff: None,
) -> None:
    _suite(tmp_path, cli)

    def second_case_down(path: str, body: dict[str, Any], attempt: int):
        if "Story 1" in json.dumps(body):
            return 503, {"error": {"message": "overloaded"}}, 0.0
        return 200, chat_completion("text"), 0.0

    server = serve(second_case_down)
    result = _run(cli, server.url)
    assert "run api: done with 1 failed; 2 generated, 1 failed" in result.out
    report = json.loads(cli("report", "api", "--format", "json").out)
    assert (report["n"], report["failed"], report["status"]) == (2, 1, "done with 1 failed")


def test_max_new_tokens_is_recorded_and_sent(
    tmp_path: Path, cli, db_path: Path, serve: Callable[[Behaviour], FakeServer]
) -> None:
    _suite(tmp_path, cli)
    server = serve(lambda path, body, attempt: (200, chat_completion("ok"), 0.0))
    result = _run(cli, server.url, "--max-new-tokens", "7")
    assert result.code == 0, result.err
    assert {body["max_tokens"] for _, body, _ in server.requests} == {7}
    with Store(db_path) as store:
        config = json.loads(store.scalar("SELECT config FROM runs WHERE name = 'api'"))
    assert config["max_new_tokens"] == 7
    dossier = cli("dossier", "api/c0/1")  # the provenance shows the run's configuration
    assert dossier.code == 0 and '"max_new_tokens": 7' in dossier.out
    # a different budget is a different configuration: never mixed into the same run
    again = _run(cli, server.url, "--max-new-tokens", "8")
    assert again.code == 2 and "max-new-tokens" in again.err.replace("_", "-")


@pytest.mark.anyio
async def test_the_dashboard_shows_the_failed_count(
    tmp_path: Path,
    cli,
    db_path: Path,
    serve: Callable[[Behaviour], FakeServer],
    no_backoff: None,
) -> None:
    from screens.app import CopyauditApp
    from screens.runs.dashboard import DashboardScreen
    from tests.test_screens_data import cell_texts, settle

    _suite(tmp_path, cli)
    assert _run(cli, serve(Outage()).url).code == 0
    app = CopyauditApp(db_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, DashboardScreen)
        row = cell_texts(app.screen.query_one("#runs"), "api")
        assert row[0] == "api" and row[3] == "done with 3 failed"

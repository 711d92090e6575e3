"""Run ownership: one process per run, interrupted runs shown as such and resumed.

The run in a subprocess uses a fake generator that blocks on a file the test creates,
so nothing depends on timing."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from copyaudit.engine.runner import RunRequest, execute_run
from copyaudit.judges.options import JudgeOptions
from copyaudit.models.base import GenerationResult
from db import Store
from db.run_owner import RunBusyError, acquire, current_owner, release, shown_status
from db.runs import RunSpec, create_or_resume_run, set_run_status
from tests.conftest import write_jsonl

BLOCKING_RUN = """
import sys, time
from pathlib import Path
from copyaudit.judges.options import JudgeOptions
from copyaudit.models.base import GenerationResult
from copyaudit.engine.runner import RunRequest, execute_run

db, started, gate = (Path(a) for a in sys.argv[1:4])

class BlockOnSecondBatch:
    calls = 0
    def generate(self, requests, factory=None, control=None):
        BlockOnSecondBatch.calls += 1
        if BlockOnSecondBatch.calls == 2:
            started.write_text("generating")
            while not gate.exists():  # the test never creates it: it kills this process
                time.sleep(0.01)
        return [GenerationResult("out " + r.prompt[-12:], 3, 0.0) for r in requests]
    def provenance(self):
        return {"backend": "fake"}

execute_run(db, RunRequest(suite="s", name="held", model="fake", batch_size=2, shots=0,
            judging=JudgeOptions("literal")), generator=BlockOnSecondBatch())
"""


class FakeGenerator:
    def generate(self, requests, factory=None, control=None):
        return [GenerationResult("out " + r.prompt[-12:], 3, 0.0) for r in requests]

    def provenance(self):
        return {"backend": "fake"}


REQUEST = RunRequest(
    suite="s", name="held", model="fake", batch_size=2, shots=0, judging=JudgeOptions("literal")
)


@pytest.fixture
def suite(tmp_path: Path, cli) -> None:
    records = [
        {"id": f"c{i}", "title": "T", "input": f"case {i} begins", "reference": f"case {i} ends"}
        for i in range(6)
    ]
    path = write_jsonl(tmp_path / "c.jsonl", records)
    assert cli("import", "literal", str(path), "--suite", "s").code == 0


def _status(cli) -> str:
    return json.loads(cli("runs", "--format", "json").out)[0]["status"]


def test_a_killed_run_shows_interrupted_and_a_second_process_cannot_run_it(
    tmp_path: Path, cli, db_path: Path, suite: None
) -> None:
    started, gate = tmp_path / "started", tmp_path / "gate"
    script = tmp_path / "blocking_run.py"
    script.write_text(BLOCKING_RUN)
    first = subprocess.Popen(
        [sys.executable, str(script), str(db_path), str(started), str(gate)],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        while not started.exists():  # the first batch is stored, the second is decoding
            with contextlib.suppress(subprocess.TimeoutExpired):
                first.wait(timeout=0.05)
            assert first.returncode is None, first.stderr.read() if first.stderr else ""
        assert _status(cli) == "running"

        second = subprocess.run(
            [sys.executable, "-m", "copyaudit", "--db", str(db_path), "run", "s", "--name",
             "held", "--model", "no-such-model", "--shots", "0"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert second.returncode == 2
        assert "run 'held'" in second.stderr and f"pid {first.pid}" in second.stderr
        assert f"host {socket.gethostname()}" in second.stderr
        judge = cli("judge", "held", "--judges", "literal")  # the judge phase too
        assert judge.code == 2 and f"pid {first.pid}" in judge.err
        with pytest.raises(RunBusyError):  # and the app's path (execute_run in a thread)
            execute_run(db_path, REQUEST, generator=FakeGenerator())
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)

    assert _status(cli) == "interrupted"
    with Store(db_path) as store:
        assert store.scalar("SELECT COUNT(*) FROM generations") == 2
    outcome = execute_run(db_path, REQUEST, generator=FakeGenerator())  # resumes
    assert (outcome.status, outcome.generated) == ("done", 4)
    assert _status(cli) == "done"
    with Store(db_path) as store:
        assert store.scalar("SELECT COUNT(DISTINCT case_pk) FROM generations") == 6
        assert store.scalar("SELECT COUNT(*) FROM generations") == 6
        assert store.scalar("SELECT COUNT(*) FROM run_owners") == 0  # released


def _record(store: Store, **values: object) -> None:
    row = {
        "run": "r",
        "token": "t",
        "purpose": "run",
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "process_start": None,
        "started_at": datetime.now(UTC).isoformat(),
        "heartbeat_at": datetime.now(UTC).isoformat(),
        **values,
    }
    with store.transaction():
        store.conn.execute(
            f"INSERT OR REPLACE INTO run_owners ({', '.join(row)}) "
            f"VALUES ({', '.join('?' * len(row))})",
            tuple(row.values()),
        )


def test_stale_detection_by_pid_process_start_and_heartbeat(db_path: Path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    old = (datetime.now(UTC) - timedelta(minutes=5)).isoformat()
    with Store(db_path) as store:
        _record(store, pid=gone.pid)  # same host, process gone
        assert current_owner(store, "r") is None
        _record(store, process_start="another-boot:1")  # a live pid, but reused
        assert current_owner(store, "r") is None
        _record(store, host="elsewhere", pid=1)  # another host: the heartbeat decides
        assert current_owner(store, "r") is not None
        _record(store, host="elsewhere", pid=1, heartbeat_at=old)
        assert current_owner(store, "r") is None
        mine = acquire(store, "r", "judge")  # a stale record is taken over
        with pytest.raises(RunBusyError, match=f"pid {os.getpid()} on host"):
            acquire(store, "r", "run")  # held, even by this very process
        assert shown_status("done", current_owner(store, "r")) == "judging"
        release(store, mine)
        assert current_owner(store, "r") is None
    assert shown_status("running", None) == "interrupted"
    assert shown_status("cancelled", None) == "cancelled"


def test_a_run_left_running_by_an_older_version_shows_interrupted(
    db_path: Path, cli, suite: None
) -> None:
    with Store(db_path) as store:
        run_id = create_or_resume_run(store, RunSpec("old", "s", "hf", "m"))
        set_run_status(store, run_id, "running")
    assert _status(cli) == "interrupted"
    report = json.loads(cli("report", "old", "--format", "json").out)
    assert report["status"] == "interrupted"

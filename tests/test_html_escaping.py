"""Every HTML document (the run report of each kind, the dossier) writes stored text
through one escaping rule: a model output or name holding markup, quotes and
ampersands comes out inert, never as markup."""

from __future__ import annotations

from html import escape
from pathlib import Path

import pytest

from copyaudit.render.html import esc, kv_table, table
from db import Store
from tests.test_screens_data import copy_demo_like_db

HOSTILE = "<script>alert(\"x\" + 'y' & 1)</script>"
RUNS = ("demo-literal", "demo-nonliteral", "demo-qa", "demo-notice", "decop-demo")


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo-like database with every run's model hostile and the hostile text
    appended to every output (after the judges' evidence spans, which stay valid)."""
    path = tmp_path_factory.mktemp("hostile") / "demo.db"
    copy_demo_like_db(path)
    with Store(path) as store:
        store.conn.execute("UPDATE runs SET model = ?", (HOSTILE,))
        store.conn.execute("UPDATE generations SET output = output || ?", (HOSTILE,))
        store.conn.commit()
    return path


def _assert_inert(html: str) -> None:
    assert html.startswith("<!DOCTYPE html>")
    assert "<script" not in html.lower()
    assert escape(HOSTILE, quote=True) in html  # shown, as text


@pytest.mark.parametrize("run", RUNS)
def test_the_report_of_every_kind_escapes_stored_text(hostile_db: Path, cli, run: str) -> None:
    result = cli("report", run, "--format", "html", db=hostile_db)
    assert result.code == 0, result.err
    _assert_inert(result.out)


def test_the_dossier_escapes_the_model_output(hostile_db: Path, cli, tmp_path: Path) -> None:
    with Store(hostile_db) as store:
        keys = store.query(
            "SELECT r.name || '/' || c.case_id || '/' || g.template AS k FROM generations g "
            "JOIN runs r ON r.id = g.run_id JOIN cases c ON c.id = g.case_pk "
            "WHERE g.id IN (SELECT MIN(id) FROM generations GROUP BY run_id)"
        )
    assert len(keys) >= 4
    for number, row in enumerate(keys):
        out = tmp_path / f"dossier{number}.html"
        result = cli("dossier", row["k"], "--format", "html", "--output", str(out), db=hostile_db)
        assert result.code == 0, result.err
        html = out.read_text(encoding="utf-8")
        _assert_inert(html)
        assert html.count(escape(HOSTILE, quote=True)) >= 2  # the model and the output


def test_the_toolkit_escapes_quotes_for_attributes_and_none_as_nothing() -> None:
    assert esc(HOSTILE) == (
        "&lt;script&gt;alert(&quot;x&quot; + &#x27;y&#x27; &amp; 1)&lt;/script&gt;"
    )
    assert esc(None) == ""
    assert "<th>&lt;h&gt;</th>" in table(["<h>"], [])
    assert "<th>&amp;k</th>" in kv_table([("&k", "v")])

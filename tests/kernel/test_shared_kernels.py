"""A kernel shared by a module's tests hides each test's state from the next: `FrontEnd.hand_over` resets it
and fails when anything is left, so a shared fixture that leaks fails the next test's setup."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import kernel as kernel_support
from tests.support.agent import copy_sample_project, write_script
from tests.support.kernel import FrontEnd

pytestmark = pytest.mark.slow


@pytest.fixture
def fe(kernel_as_new: FrontEnd) -> FrontEnd:
    return kernel_as_new


def _leave_state(fe: FrontEnd, tmp_path: Path) -> None:
    """A name, an import, a config override, a run and its thread, a failed cell: what any test may leave."""
    ws = copy_sample_project(tmp_path / "ws")
    model = write_script(ws, [{"content": "Hello."}])
    assert fe.run("import os\ndf = [1, 2]").status == "ok"
    assert fe.run(f"%architect config workspace.root={ws}").status == "ok"
    run = fe.run(f"%%architect --mode yolo --model {model} --no-notebook\nSay hello", timeout=90)
    assert run.status == "ok", fe.describe()
    assert fe.run("{}['missing']").status == "error"  # `%architect fix` would offer to fix it


def test_state_a_test_leaves_is_seen_and_the_hand_over_clears_it(fe: FrontEnd, tmp_path: Path) -> None:
    assert fe.leftovers() == {}
    _leave_state(fe, tmp_path)
    left = fe.leftovers()
    assert left["names"] == ["df", "os"]
    assert {"overrides", "history", "threads"} <= set(left["session"]), left
    assert len(left["errors"]) == 2, left  # the failed cell in the execution log, and sys.last_value
    fe.hand_over()
    assert fe.order == [] and fe.cells == {}  # the front end forgot the earlier cells too
    assert fe.leftovers() == {}
    assert "No cell has failed" in fe.run("%architect fix").text()
    assert fe.run("df").status == "error"
    assert "'os'" not in fe.run("print(sorted(dir()))").text()


def test_a_reset_that_misses_some_state_fails_the_hand_over(
    fe: FrontEnd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _leave_state(fe, tmp_path)
    # A reset of the person's names only: the extension's session (config, runs, threads) would leak.
    monkeypatch.setattr(kernel_support, "_RESET", "get_ipython().run_line_magic('reset', '-f')")
    with pytest.raises(AssertionError, match="a shared kernel kept an earlier test's state") as failed:
        fe.hand_over()
    assert "overrides" in str(failed.value) and "history" in str(failed.value)
    assert "errors" in str(failed.value) and "names" not in str(failed.value)
    monkeypatch.undo()
    assert fe.hand_over().leftovers() == {}

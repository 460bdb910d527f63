"""Undo of what code run in the kernel did to the person's variables, through the engine and the checkpoint
store (`tools.state_snapshot`, `tools.kernel.kernel_undo`), on a plain namespace: what the approval says
before the code runs, what the result says after, and what undo, rewind and revert put back."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from architect_nb.config import AppConfig
from architect_nb.execution.build import build_engine
from architect_nb.execution.checkpoints.store import AlreadyUndoneError, CheckpointError, CheckpointStore
from architect_nb.execution.confirmation.confirmers import ScriptedConfirmer
from architect_nb.execution.engine import ExecutionEngine
from architect_nb.tools.kernel import PlainKernel
from architect_nb.tools.state_snapshot import KERNEL_ENTRY

pd = pytest.importorskip("pandas")
np = pytest.importorskip("numpy")


def _engine(
    workspace: Path,
    namespace: dict[str, Any],
    *,
    write: bool = True,
    mode: str = "yolo",
    answers: list[str] | None = None,
    budget_mb: int | None = None,
) -> tuple[ExecutionEngine, ScriptedConfirmer]:
    kernel = {"write_namespace": write, "undo_budget_mb": budget_mb}
    config = AppConfig.model_validate({"workspace": {"root": str(workspace)}, "kernel": kernel})
    confirmer = ScriptedConfirmer(answers or [], default="approve")
    engine = build_engine(config, mode=mode, confirmer=confirmer, kernel=PlainKernel(namespace))  # type: ignore[arg-type]
    engine.start_run(task="change the variables")
    return engine, confirmer


def _people(namespace: dict[str, Any]) -> dict[str, Any]:
    namespace.update(
        df=pd.DataFrame({"a": [1, 2, 3], "b": [4.0, 5.0, 6.0]}),
        items=[1, 2],
        lookup={"x": 1},
        arr=np.arange(4.0),
        label="before",
        gone="keep me",
    )
    return namespace


def test_every_kind_of_change_is_shown_and_undone(workspace: Path) -> None:
    namespace = _people({})
    items, lookup, arr, df = namespace["items"], namespace["lookup"], namespace["arr"], namespace["df"]
    engine, _ = _engine(workspace, namespace)
    code = (
        "df.pop('b')\n"
        "items.append(3)\n"
        "lookup['y'] = 2\n"
        "arr *= 10\n"
        "label = 'after'\n"
        "del gone\n"
        "made = [0] * 3\n"
    )
    result = engine.execute_tool_call("run_python", {"code": code}, step=1)
    assert result.success, result.error
    kinds = {c["name"]: c["kind"] for c in result.changed_state}
    assert kinds == {
        "df": "mutated",
        "items": "mutated",
        "lookup": "mutated",
        "arr": "mutated",
        "label": "rebound",
        "gone": "deleted",
        "made": "added",
    }
    df_change = next(c for c in result.changed_state if c["name"] == "df")
    assert "3×2" in df_change["before"] and "3×1" in df_change["after"]
    assert "Your variables changed:" in result.output and "items: mutated" in result.output  # the model's
    report = engine.checkpoints.undo(engine.run_id)
    assert report.ok, str(report)
    assert namespace["items"] is items and items == [1, 2]  # in place: other references see it restored
    assert namespace["lookup"] is lookup and lookup == {"x": 1}
    assert namespace["arr"] is arr and arr.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert namespace["df"].columns.tolist() == ["a", "b"] and namespace["df"] is not df  # rebound: said
    assert "other references" in str(report) and "df" in str(report)
    assert namespace["label"] == "before" and namespace["gone"] == "keep me" and "made" not in namespace
    with pytest.raises(AlreadyUndoneError):
        engine.checkpoints.undo(engine.run_id)


def test_the_approval_says_what_undo_cannot_restore_before_the_code_runs(workspace: Path) -> None:
    namespace = _people({})
    namespace["stream"] = (n for n in range(5))
    namespace["big"] = np.zeros(3 * 1024 * 1024 // 8)  # 3 MB, over a 1 MB budget
    engine, confirmer = _engine(workspace, namespace, mode="confirm-sensitive", budget_mb=1)
    code = "next(stream)\nbig[0] = 1\nitems.append(9)\nexec('hidden = 1')"
    result = engine.execute_tool_call("run_python", {"code": code}, step=1)
    assert result.success, result.error
    [asked] = confirmer.requests
    assert "stream (a generator cannot be copied)" in asked.undo, asked.undo
    assert "big (" in asked.undo and "budget" in asked.undo, asked.undo
    assert "may change variables it does not name (exec())" in asked.undo, asked.undo
    assert "undo covers only items" in asked.undo, asked.undo
    report = engine.checkpoints.undo(engine.run_id)
    assert namespace["items"] == [1, 2] and namespace["big"][0] == 1  # the one over budget stays changed
    assert "Not restored" in str(report) and "big" in str(report) and "stream" in str(report)


def test_a_denied_call_keeps_no_snapshot_and_changes_nothing(workspace: Path) -> None:
    namespace = _people({})
    engine, _ = _engine(workspace, namespace, mode="confirm-sensitive", answers=["deny: not now"])
    result = engine.execute_tool_call("run_python", {"code": "items.append(3)"}, step=1)
    assert not result.success and namespace["items"] == [1, 2] and result.changed_state == []
    with pytest.raises(CheckpointError, match="changed none of your variables"):
        engine.checkpoints.undo(engine.run_id, path=KERNEL_ENTRY)


def test_rewind_to_a_step_restores_the_variables_as_they_were_before_it(workspace: Path) -> None:
    namespace = _people({})
    engine, _ = _engine(workspace, namespace)
    for step, code in enumerate(["items.append(3)", "items.append(4)\nlabel = 'two'", "items.clear()"], 1):
        assert engine.execute_tool_call("run_python", {"code": code}, step=step).success
    assert namespace["items"] == []
    engine.checkpoints.undo(engine.run_id, from_step=2)
    assert namespace["items"] == [1, 2, 3] and namespace["label"] == "before"
    engine.checkpoints.undo(engine.run_id)  # the rest of the run: step 1
    assert namespace["items"] == [1, 2]


def test_the_reviews_kernel_entry_reverts_only_the_variables(workspace: Path) -> None:
    namespace = _people({})
    engine, _ = _engine(workspace, namespace)
    (workspace / "a.txt").write_text("one\n")
    assert engine.execute_tool_call("write_file", {"path": "a.txt", "content": "two\n"}, step=1).success
    assert engine.execute_tool_call("run_python", {"code": "items.append(3)"}, step=2).success
    report = engine.checkpoints.undo(engine.run_id, path=KERNEL_ENTRY)
    assert report.ok and namespace["items"] == [1, 2] and (workspace / "a.txt").read_text() == "two\n"
    with pytest.raises(AlreadyUndoneError):
        engine.checkpoints.undo(engine.run_id, path=KERNEL_ENTRY)
    whole = engine.checkpoints.undo(engine.run_id)  # the files still go back
    assert whole.ok and (workspace / "a.txt").read_text() == "one\n"


def test_after_a_restart_undo_says_the_variables_are_gone_and_restores_the_files(workspace: Path) -> None:
    namespace = _people({})
    engine, _ = _engine(workspace, namespace)
    (workspace / "a.txt").write_text("one\n")
    assert engine.execute_tool_call("write_file", {"path": "a.txt", "content": "two\n"}, step=1).success
    assert engine.execute_tool_call("run_python", {"code": "items.append(3)"}, step=2).success
    later = CheckpointStore(on_disk=engine.checkpoints.on_disk)  # a new kernel: nothing in memory
    report = later.undo(engine.run_id)
    assert (workspace / "a.txt").read_text() == "one\n" and namespace["items"] == [1, 2, 3]
    assert "cannot be put back: the kernel restarted" in str(report) and "2 (items)" in str(report)


def test_scratch_mode_restores_only_what_the_code_mutated_of_the_persons(workspace: Path) -> None:
    namespace = _people({})
    engine, _ = _engine(workspace, namespace, write=False)
    code = "label = 'scratch only'\nitems.append(3)\nmine = [1]\nmine.append(2)"
    result = engine.execute_tool_call("run_python", {"code": code}, step=1)
    assert [c["name"] for c in result.changed_state] == ["items"]  # label and mine stay in the scratch
    assert namespace["label"] == "before" and "mine" not in namespace
    engine.checkpoints.undo(engine.run_id)
    assert namespace["items"] == [1, 2]


def test_the_rngs_are_put_back(workspace: Path) -> None:
    namespace = _people({"random": random, "np": np})
    engine, _ = _engine(workspace, namespace)
    random.seed(7)
    np.random.seed(7)
    expected = (random.random(), float(np.random.rand()))
    random.seed(7)
    np.random.seed(7)
    assert engine.execute_tool_call(
        "run_python", {"code": "random.random(); np.random.rand(); items.append(0)"}
    ).success
    engine.checkpoints.undo(engine.run_id)
    assert (random.random(), float(np.random.rand())) == expected


class _Hostile:
    def __deepcopy__(self, memo: Any) -> Any:
        raise RuntimeError("no copies of me")


@pytest.mark.parametrize(
    ("code", "changed", "said"),
    [
        ("def broken(:\n", [], ""),  # a syntax error: nothing runs, nothing is kept
        ("x = (" * 3000, [], ""),  # too deeply nested to parse
        ("list = [1]", ["list"], "Removed the variables the run created: list"),  # a builtin rebound
        ("del architect", ["architect"], "Your variables restored: architect"),
        ("hostile.flag = True", ["hostile"], "Not restored: hostile"),  # its __deepcopy__ raises
        ("items.append(1)\n" * 5000, ["items"], "Your variables restored: items"),  # long code
    ],
    ids=["syntax-error", "deep-nesting", "builtin-rebound", "del-architect", "copy-raises", "long-code"],
)
def test_hostile_and_odd_code_never_breaks_the_call_or_the_undo(
    workspace: Path, code: str, changed: list[str], said: str
) -> None:
    namespace = _people({"architect": object(), "hostile": _Hostile()})
    before = dict(namespace)
    engine, _ = _engine(workspace, namespace)
    result = engine.execute_tool_call("run_python", {"code": code}, step=1)
    assert result.outcome.value in ("ok", "failed"), result.error
    assert [c["name"] for c in result.changed_state] == changed
    if not changed:
        assert namespace == before  # the code did not run
        return
    report = engine.checkpoints.undo(engine.run_id)
    assert said in str(report), str(report)
    assert "list" not in namespace and namespace["architect"] is before["architect"]
    assert namespace["items"] == [1, 2] and namespace["hostile"] is before["hostile"]


def test_the_review_lists_the_variables_beside_the_files(workspace: Path) -> None:
    namespace = _people({})
    engine, _ = _engine(workspace, namespace)
    (workspace / "a.txt").write_text("one\n")
    assert engine.execute_tool_call("write_file", {"path": "a.txt", "content": "two\n"}, step=1).success
    assert engine.execute_tool_call("run_python", {"code": "items.append(3)"}, step=2).success
    review = {change.path: change for change in engine.checkpoints.review(engine.run_id)}
    assert set(review) == {"a.txt", KERNEL_ENTRY}
    assert (
        "Step 2 (run_python)" in review[KERNEL_ENTRY].diff and "items: mutated" in review[KERNEL_ENTRY].diff
    )


def test_the_budget_bounds_all_the_snapshots_together_and_the_oldest_make_room(workspace: Path) -> None:
    """Ten steps each changing a 400 KB array under a 1 MB budget never hold more than the budget: the
    oldest steps' copies are dropped, and their undo says so; the newest still restores."""
    namespace = _people({})
    namespace.update({f"a{n}": np.zeros(50_000) for n in range(3)})  # 400 KB each
    engine, _ = _engine(workspace, namespace, budget_mb=1)
    for step in range(3):
        code = f"a{step}[0] = 1"
        assert engine.execute_tool_call("run_python", {"code": code}, step=step + 1).success
    report = engine.checkpoints.undo(engine.run_id, from_step=3)
    assert namespace["a2"][0] == 0  # the newest is kept
    report = engine.checkpoints.undo(engine.run_id)
    assert namespace["a1"][0] == 0 and namespace["a0"][0] == 1, str(report)  # two fit in 1 MB; the first not
    assert "dropped to make room for later ones within the undo budget" in str(report)

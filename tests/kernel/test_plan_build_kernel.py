"""Plan, approve, build in a real kernel: the plan's buttons, the build in the same thread and cell."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.kernel import RUN_MIME, Cell, FrontEnd

pytestmark = pytest.mark.slow

PLAN = "1. Make f return 2 in mod.py\n2. Run the tests"


@pytest.fixture
def fe(kernel_as_new: FrontEnd) -> FrontEnd:
    return kernel_as_new


def _workspace(tmp_path: Path, build_turns: list[dict[str, Any]]) -> tuple[Path, str]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "mod.py").write_text("def f():\n    return 1\n")
    script = tmp_path / "plan.yaml"
    runs = [{"turns": [{"content": PLAN}]}, {"turns": build_turns}]
    script.write_text(yaml.safe_dump({"runs": runs}, sort_keys=False))
    return ws, f"scripted/{script}"


def _runs(cell: Cell) -> list[dict[str, Any]]:
    return [o["data"][RUN_MIME] for o in cell.outputs if RUN_MIME in o.get("data", {})]


EDIT = {"name": "edit_file", "arguments": {"path": "mod.py", "old_str": "return 1", "new_str": "return 2"}}


def test_build_this_plan_builds_it_in_the_same_thread_with_the_plan_pinned(
    fe: FrontEnd, tmp_path: Path
) -> None:
    ws, model = _workspace(
        tmp_path,
        [
            {
                "expect": {"history_contains": ["[Approved plan]\n" + PLAN, "[ ] Make f return 2 in mod.py"]},
                "tool_calls": [EDIT],
            },
            {
                "tool_calls": [
                    {
                        "name": "todo",
                        "arguments": {"items": ["[x] Make f return 2 in mod.py", "[x] Run the tests"]},
                    }
                ]
            },
            {"content": "Built."},
        ],
    )
    assert fe.run(f"%architect config workspace.root={ws}").status == "ok"
    cell = fe.execute(f"%%architect --agent plan --model {model} --mode yolo --no-notebook --new\nPlan it")
    button = fe.wait_for_button("Build this plan", timeout=120)
    assert not cell.done, "the plan cell ended before the plan was answered"
    fe.click(button.comm_id)
    fe.wait(lambda: cell.finished, 120, "the build run")
    assert cell.status == "ok", fe.describe()
    plan_run, build_run = _runs(cell)
    started = build_run["events"][0]
    assert started["agent"] == "build" and started["mode"] == "yolo"
    assert started["thread"]["name"] == plan_run["events"][0]["thread"]["name"]
    assert started["thread"]["follows_run"] == plan_run["run_id"]
    assert started["todo"] == ["[ ] Make f return 2 in mod.py", "[ ] Run the tests"]
    assert build_run["events"][-1]["stop_reason"] == "completed"  # the script checked the plan was sent
    assert (
        "Todo: 2 of 2 done"
        in next(
            o for o in cell.outputs if RUN_MIME in o.get("data", {}) and o["data"][RUN_MIME] is build_run
        )["data"]["text/plain"]
    )
    assert (ws / "mod.py").read_text() == "def f():\n    return 2\n"
    assert "Plan approved: building it in thread" in cell.text()
    assert not [c for c in fe.comms.values() if c.open], "the plan's widgets were left open"


def test_edit_plan_builds_the_edited_plan(fe: FrontEnd, tmp_path: Path) -> None:
    ws, model = _workspace(
        tmp_path,
        [
            {
                "expect": {"history_contains": ["[Approved plan]\n1. Make f return 3"]},
                "content": "ok",
            }
        ],
    )
    assert fe.run(f"%architect config workspace.root={ws}").status == "ok"
    cell = fe.execute(f"%%architect --agent plan --model {model} --mode yolo --no-notebook --new\nPlan it")
    fe.click(fe.wait_for_button("Edit plan", timeout=120).comm_id)
    editor = next(c for c in fe.comms.values() if c.open and c.state.get("_model_name") == "TextareaModel")
    fe.type_into(editor.comm_id, "1. Make f return 3\n2. Run the tests")
    fe.click(fe.wait_for_button("Build this plan").comm_id)
    fe.wait(lambda: cell.finished, 120, "the build run")
    build_run = _runs(cell)[-1]
    assert build_run["events"][0]["todo"] == ["[ ] Make f return 3", "[ ] Run the tests"]
    assert build_run["events"][-1]["stop_reason"] == "completed", build_run["events"][-1]


def test_unanswered_plan_waits_then_architect_build_builds_it(fe: FrontEnd, tmp_path: Path) -> None:
    ws, model = _workspace(
        tmp_path, [{"expect": {"history_contains": ["[Approved plan]\n" + PLAN]}, "content": "Built later."}]
    )
    assert fe.run(f"%architect config workspace.root={ws} notebook.approval_timeout=1").status == "ok"
    try:
        cell = fe.run(f"%%architect --agent plan --model {model} --no-notebook --new\nPlan it", timeout=120)
        assert cell.status == "ok", fe.describe()
        assert "Nobody answered 'Build this plan?' within 1 s" in cell.text(), fe.describe()
        assert fe.run("%architect config llm.model=" + model).status == "ok"
        build = fe.run("%architect build", timeout=120)
        assert build.status == "ok", fe.describe()
        [run] = _runs(build)
        assert run["events"][0]["agent"] == "build" and run["events"][-1]["stop_reason"] == "completed"
        none = fe.run("%architect build nosuchrun")
        assert "no run matches 'nosuchrun'" in none.text()
    finally:
        fe.run("%architect config notebook.approval_timeout=300")

"""Every kind of question a run asks, in real kernels (ipykernel 7 and 6): headless under nbclient (as
papermill runs a notebook), each ends within seconds with `notebook.approval_timeout` left at 300 and says
which question and why; with a front end that shows widgets there, a question waits past the headless grace
and a click answers it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import nbformat
import pytest
import yaml
from nbclient import NotebookClient

from architect_nb.testing.notebook_run import PATIENT_OUTPUTS
from tests.support.agent import copy_sample_project, write_script
from tests.support.kernel import (
    RUN_MIME,
    FrontEnd,
    front_end,
    kernel_env,
    kernel_params,
    write_kernelspecs,
)

pytestmark = pytest.mark.slow

HEADLESS = "No front end that can show buttons is connected (a headless run: nbclient, papermill, nbconvert"
EDIT = {
    "name": "edit_file",
    "arguments": {"path": "shop/cart.py", "old_str": "total = 0\n", "new_str": "total = 0.0\n"},
}
QUICK = 30  # seconds a headless cell may take at most
GRACE = 1  # notebook.headless_grace here: four questions at the default 5 s would wait 20 s per kernel


def _scripts(ws: Path, tmp: Path) -> dict[str, str]:
    marker = tmp / "ran.txt"
    plan = tmp / "plan.yaml"
    plan.write_text(yaml.safe_dump({"turns": [{"content": "1. Make totals floats\n2. Run the tests"}]}))
    return {
        "approval": write_script(
            ws, [{"tool_calls": [EDIT]}, {"content": "I could not edit."}], name="approval.yaml"
        ),
        "step": write_script(ws, [{"content": "Never said."}], name="step.yaml"),
        "warm": write_script(ws, [{"content": "Hello."}], name="warm.yaml"),
        "plan": f"scripted/{plan}",
        "code": write_script(
            ws,
            [
                {
                    "tool_calls": [
                        {"name": "run_python", "arguments": {"code": f"open({str(marker)!r}, 'w')"}}
                    ]
                },
                {"content": "Nobody approved."},
            ],
            name="code.yaml",
        ),
    }


def _seconds(cell: Any) -> float:
    timing = cell.metadata["execution"]
    started = datetime.fromisoformat(timing["iopub.execute_input"].replace("Z", "+00:00"))
    ended = datetime.fromisoformat(timing["shell.execute_reply"].replace("Z", "+00:00"))
    return (ended - started).total_seconds()


def _payload(cell: Any) -> dict[str, Any]:
    [run] = [o["data"][RUN_MIME] for o in cell.outputs if RUN_MIME in o.get("data", {})]
    return dict(run)


def _text(cell: Any) -> str:
    return "\n".join(str(o.get("data", {}).get("text/plain", o.get("text", ""))) for o in cell.outputs)


@pytest.mark.parametrize("kernel", kernel_params())
def test_headless_every_kind_of_question_ends_within_seconds_saying_which_and_why(
    kernel: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = copy_sample_project(tmp_path / "ws")
    model = _scripts(ws, tmp_path)
    write_kernelspecs(tmp_path / "jupyter")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    for key, value in kernel_env().items():
        monkeypatch.setenv(key, value)
    sources = [
        "%load_ext architect_nb",
        f"%architect config workspace.root={ws} notebook.headless_grace={GRACE}",
        f"%%architect --mode yolo --model {model['warm']} --no-notebook\nSay hello",  # pays the imports
        f"%%architect --model {model['approval']} --no-notebook\nMake totals floats",
        f"%%architect --step --model {model['step']} --no-notebook\nSay hello",
        f"%%architect --agent plan --model {model['plan']} --no-notebook\nPlan float totals",
        f"%%architect --model {model['code']} --no-notebook\nWrite the marker",
        "print('after the questions')",
    ]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    client = NotebookClient(
        nb,
        timeout=120,
        kernel_name=f"architect-{kernel}",
        resources={"metadata": {"path": str(ws)}},
        **PATIENT_OUTPUTS,
    )
    asyncio.run(client.async_execute())
    approval, step, plan, code, after = nb.cells[3:]
    took = {
        name: _seconds(c) for name, c in zip(("approval", "step", "plan", "code"), nb.cells[3:7], strict=True)
    }
    print(f"{kernel}: seconds per headless cell {took}")
    assert all(GRACE <= seconds < QUICK for seconds in took.values()), took  # the grace, not the timeout

    [answer] = [e for e in _payload(approval)["events"] if e["kind"] == "confirmation_answered"]
    assert answer["decision"] == "deny" and answer["reason"].startswith(HEADLESS)
    assert "so 'Approve edit_file on shop/cart.py?' was denied" in answer["reason"]
    assert "--mode yolo" in answer["reason"] and "total = 0\n" in (ws / "shop" / "cart.py").read_text()

    finished = _payload(step)["events"][-1]
    assert finished["stop_reason"] == "aborted", finished
    assert "Stopped while stepping, at step 1, before the model call. No front end" in finished["message"]
    assert "so 'Step 1: call the model?' was answered with Stop" in finished["message"]

    assert HEADLESS in _text(plan) and "so 'Build this plan?' was not built" in _text(plan)
    assert "`%architect build` builds this plan in thread" in _text(plan)

    [result] = [
        e for e in _payload(code)["events"] if e["kind"] == "tool_result" and e["tool"] == "run_python"
    ]
    assert result["status"] == "denied" and HEADLESS in (result["error"] or "")
    assert "so 'Approve run_python (code in your kernel)?' was denied" in result["error"]
    assert not (tmp_path / "ran.txt").exists()
    assert after.outputs[0]["text"] == "after the questions\n"


@pytest.fixture(scope="module", params=kernel_params())
def fe(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FrontEnd]:
    tmp = tmp_path_factory.mktemp(f"asking-{request.param}")
    with front_end(str(request.param), tmp, tmp) as player:
        assert player.run("%load_ext architect_nb").status == "ok", player.describe()
        yield player


def test_a_front_end_that_shows_widgets_keeps_the_question_past_the_grace_and_a_click_answers_it(
    fe: FrontEnd, tmp_path: Path
) -> None:
    ws = copy_sample_project(tmp_path / "ws")
    model = write_script(ws, [{"tool_calls": [EDIT]}, {"content": "Floats now."}])
    grace = "notebook.headless_grace=1"
    assert (
        fe.run(f"%architect config workspace.root={ws} {grace} notebook.approval_timeout=300").status == "ok"
    )
    try:
        cell = fe.execute(f"%%architect --model {model} --no-notebook\nMake totals floats")
        button = fe.wait_for_button("Approve", timeout=60)
        fe.stay(3)  # three times the grace
        assert not cell.done, "a question shown in a front end with widgets got the headless default"
        fe.click(button.comm_id)
        fe.wait(lambda: cell.finished, 60, "the approved run")
        assert cell.status == "ok", fe.describe()
        [answer] = [e for e in _payload_of(cell)["events"] if e["kind"] == "confirmation_answered"]
        assert answer["decision"] == "approve"
        assert "total = 0.0" in (ws / "shop" / "cart.py").read_text()
    finally:
        fe.run("%architect config notebook.headless_grace=5")


def _payload_of(cell: Any) -> dict[str, Any]:
    [run] = cell.data(RUN_MIME)
    return dict(run)

"""Undo of what the agent's code did to the person's variables, in real kernels (current ipykernel and 6.x):
the approval says what undo cannot restore before the code runs, the step's card and the model's result
list what changed, and `%architect undo` (whole, or from a step) puts the names back; after a kernel
restart it says the snapshots are gone and still restores the files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.agent import copy_sample_project, write_script
from tests.support.kernel import RUN_MIME, Cell, FrontEnd, kernel_params, loaded_front_end

pytestmark = pytest.mark.slow

DATA = (
    "import pandas as pd\n"
    "df = pd.DataFrame({'a': [1, 2, 3], 'b': [4.0, 5.0, 6.0]})\n"
    "items = [1, 2]\nalias = items\nlabel = 'before'\ngone = 'keep me'\n"
    "stream = (n for n in range(5))"
)
CHANGE = "df['c'] = df['a'] * 2\nitems.append(3)\nlabel = 'after'\ndel gone\nmade = {'new': True}\n"


def _payload(cell: Cell) -> dict[str, Any]:
    [payload] = cell.data(RUN_MIME)
    return dict(payload)


def _result(cell: Cell, tool: str = "run_python") -> dict[str, Any]:
    [result] = [e for e in _payload(cell)["events"] if e["kind"] == "tool_result" and e["tool"] == tool]
    return dict(result)


def _value(fe: FrontEnd, expression: str) -> str:
    cell = fe.run(f"print(repr({expression}))")
    assert cell.status == "ok", fe.describe()
    return cell.text().strip()


@pytest.fixture
def fe(kernel_as_new: FrontEnd, tmp_path: Path) -> FrontEnd:
    ws = copy_sample_project(tmp_path / "ws")
    setting = (
        f"%architect config workspace.root={ws} kernel.write_namespace=true notebook.approval_timeout=300"
    )
    assert kernel_as_new.run(setting).status == "ok", kernel_as_new.describe()
    assert kernel_as_new.run(DATA).status == "ok", kernel_as_new.describe()
    return kernel_as_new


@pytest.mark.parametrize("shared_kernel", kernel_params(), indirect=True, scope="module")
def test_each_kind_of_change_is_listed_and_undone(fe: FrontEnd, tmp_path: Path) -> None:
    model = write_script(
        tmp_path / "ws",
        [
            {"tool_calls": [{"name": "run_python", "arguments": {"code": CHANGE}}]},
            {"expect": {"tool_result_contains": "Your variables changed"}, "content": "Changed them."},
        ],
    )
    cell = fe.run(f"%%architect --mode yolo --model {model}\nChange the variables", timeout=120)
    assert cell.status == "ok", fe.describe()
    result = _result(cell)
    kinds = {c["name"]: c["kind"] for c in result["changed_state"]}
    assert kinds == {
        "df": "mutated",
        "items": "mutated",
        "label": "rebound",
        "gone": "deleted",
        "made": "added",
    }
    html = cell.data("text/html")[0]
    assert "Your variables" in html and "df mutated (DataFrame 3×2" in html and "3×3" in html
    assert _value(fe, "(df.shape, items, 'gone' in dir())") == "((3, 3), [1, 2, 3], False)"

    report = fe.run("%architect undo").text()
    assert "Your variables restored" in report and "Removed the variables the run created: made" in report
    assert "df now holds the saved copy" in report, report
    assert _value(fe, "(df.columns.tolist(), items, alias is items, label, gone, 'made' in dir())") == (
        "(['a', 'b'], [1, 2], True, 'before', 'keep me', False)"
    )


@pytest.mark.parametrize("shared_kernel", kernel_params(), indirect=True, scope="module")
def test_the_approval_says_what_undo_cannot_restore(fe: FrontEnd, tmp_path: Path) -> None:
    code = "next(stream)\nitems.append(3)"
    model = write_script(
        tmp_path / "ws",
        [{"tool_calls": [{"name": "run_python", "arguments": {"code": code}}]}, {"content": "Done."}],
    )
    cell = fe.execute(f"%%architect --model {model}\nAdvance the stream")
    approve = fe.wait_for_button("Approve")
    question = " ".join(str(c.state.get("value", "")) for c in fe.comms.values() if c.open)
    assert "stream (a generator cannot be copied)" in question, question
    fe.click(approve.comm_id)
    fe.wait(lambda: cell.finished, 60, "the approved run")
    [stream] = [c for c in _result(cell)["changed_state"] if c["name"] == "stream"]
    assert stream["restorable"] is False
    report = fe.run("%architect undo").text()
    assert "Not restored: stream" in report and _value(fe, "items") == "[1, 2]"


@pytest.mark.parametrize("shared_kernel", kernel_params(), indirect=True, scope="module")
def test_rewinding_to_a_step_puts_the_variables_back_as_they_were_before_it(
    fe: FrontEnd, tmp_path: Path
) -> None:
    steps = ["items.append(3)", "items.append(4)\nlabel = 'two'", "items.clear()"]
    model = write_script(
        tmp_path / "ws",
        [
            *({"tool_calls": [{"name": "run_python", "arguments": {"code": c}}]} for c in steps),
            {"content": "ok"},
        ],
    )
    cell = fe.run(f"%%architect --mode yolo --model {model}\nThree steps", timeout=120)
    run_id = _payload(cell)["run_id"]
    assert _value(fe, "items") == "[]"
    assert "Your variables restored" in fe.run(f"%architect undo {run_id}:2").text()
    assert _value(fe, "(items, label)") == "([1, 2, 3], 'before')"


def test_after_a_restart_undo_says_the_variables_are_gone_and_restores_the_files(tmp_path: Path) -> None:
    ws = copy_sample_project(tmp_path / "ws")
    cart = ws / "shop" / "cart.py"
    before = cart.read_text()
    model = write_script(
        ws,
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "shop/cart.py", "content": "x = 1\n"}}
                ]
            },
            {"tool_calls": [{"name": "run_python", "arguments": {"code": "items.append(3)"}}]},
            {"content": "ok"},
        ],
    )
    with loaded_front_end("ipk7", tmp_path, ws) as fe:
        assert fe.run("%architect config kernel.write_namespace=true").status == "ok"
        assert fe.run("items = [1, 2]").status == "ok"
        cell = fe.run(f"%%architect --mode yolo --model {model}\nEdit and append", timeout=120)
        run_id = _payload(cell)["run_id"]
        fe.km.restart_kernel(now=True)
        fe.kc.wait_for_ready(timeout=60)
        assert fe.run_past_abort("%load_ext architect_nb").status == "ok", fe.describe()
        report = fe.run(f"%architect undo {run_id}").text()
    assert "restored 1 file(s)" in report and cart.read_text() == before
    assert "cannot be put back: the kernel restarted" in report and "(items)" in report, report

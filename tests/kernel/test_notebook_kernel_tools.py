"""The kernel tools in real kernels (current ipykernel and 6.x): the agent sees and uses the person's data.

The run's code runs on the kernel's main thread, as a cell's does: a kernel interrupt stops it within a
second, plots go to the run's record (never to a later cell), and the person's variables stay theirs.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.agent import copy_sample_project, write_script
from tests.support.kernel import RUN_MIME, Cell, FrontEnd, kernel_params

# One kernel per version for the module (conftest's shared_kernel), handed to each test as new.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.parametrize("shared_kernel", kernel_params(), indirect=True, scope="module"),
]

DATA = "import pandas as pd\ndf = pd.DataFrame({'x': [1, 2, 3], 'y': [2.0, 4.5, 5.0]})"
PLOT = (
    "import matplotlib.pyplot as plt\nfrom IPython.display import display\nax = df.plot(x='x', y='y')\n"
    "print('rows', len(df))\ndisplay(df.shape)\ndf = None"
)


@pytest.fixture
def fe(kernel_as_new: FrontEnd, tmp_path: Path) -> FrontEnd:
    kernel = kernel_as_new
    ws = copy_sample_project(tmp_path / "ws")
    config = kernel.run(f"%architect config workspace.root={ws} notebook.approval_timeout=300")
    assert config.status == "ok", kernel.describe()
    assert kernel.run(DATA).status == "ok"
    return kernel


def _ws(fe: FrontEnd) -> Path:
    return Path(fe.run("%architect config").text().split("root: ")[1].split("\n")[0].strip("'\""))


def _payload(cell: Cell) -> dict[str, Any]:
    [payload] = cell.data(RUN_MIME)
    return dict(payload)


def _results(payload: dict[str, Any], tool: str) -> list[dict[str, Any]]:
    return [e for e in payload["events"] if e["kind"] == "tool_result" and e["tool"] == tool]


def _value(fe: FrontEnd, expression: str) -> str:
    cell = fe.run(f"print(repr({expression}))")
    assert cell.status == "ok", fe.describe()
    return cell.text().strip()


def test_the_agent_inspects_a_dataframe_and_plots_it(fe: FrontEnd, tmp_path: Path) -> None:
    model = write_script(
        tmp_path / "ws",
        [
            {"tool_calls": [{"name": "list_variables", "arguments": {}}]},
            {
                "expect": {
                    "tool_result_contains": "df: pandas.DataFrame, (3, 2)",
                    "tool_result_lacks": "pd:",
                },
                "tool_calls": [{"name": "inspect_variable", "arguments": {"name": "df"}}],
            },
            {
                "expect": {"tool_result_contains": "pandas DataFrame, shape (3, 2)"},
                "tool_calls": [{"name": "run_python", "arguments": {"code": PLOT}}],
            },
            {
                # display() inside the code is captured for the model, not shown in the cell
                "expect": {"tool_result_contains": ["rows 3", "[display 1] (3, 2)"]},
                "content": "Plotted y against x.",
            },
        ],
    )
    cell = fe.run(f"%%architect --mode yolo --model {model}\nPlot df", timeout=120)
    assert cell.status == "ok", fe.describe()
    payload = _payload(cell)
    assert payload["events"][-1]["status"] == "success", payload["events"][-1]
    [plotted] = _results(payload, "run_python")
    [image] = plotted["images"]
    assert image["mime"] == "image/png" and image["data"].startswith("iVBORw0KGgo")
    assert f"data:image/png;base64,{image['data'][:40]}" in cell.data("text/html")[0]
    # Nothing leaked: the cell holds only the run's record, and no figure waits for a later cell.
    assert all(RUN_MIME in o.get("data", {}) for o in cell.outputs), [
        list(o.get("data", o)) for o in cell.outputs
    ]
    later = fe.run("import matplotlib.pyplot as plt\nprint(plt.get_fignums())")
    assert later.text().strip() == "[]" and not later.data("image/png")
    # The code's names stayed in its scratch namespace: the person's df is theirs, and `ax` is not there.
    assert _value(fe, "type(df).__name__") == "'DataFrame'"
    assert _value(fe, "'ax' in globals()") == "False"
    assert not fe.stray


def test_run_python_asks_first_and_a_denial_runs_nothing(fe: FrontEnd, tmp_path: Path) -> None:
    marker = tmp_path / "ran.txt"
    code = f"open({str(marker)!r}, 'w').write('ran')"
    model = write_script(
        tmp_path / "ws",
        [
            {"tool_calls": [{"name": "run_python", "arguments": {"code": code}}]},
            {"expect": {"tool_result_contains": "declined"}, "content": "Not run."},
        ],
    )
    cell = fe.execute(f"%%architect --model {model}\nWrite the marker")
    deny = fe.wait_for_button("Deny")
    question = " ".join(str(c.state.get("value", "")) for c in fe.comms.values() if c.open)
    assert "The code that would run in your kernel" in question and "<span" in question  # highlighted
    approve_all = fe.buttons("Approve all like this")[-1]
    layout = fe.comms[approve_all.state["layout"].removeprefix("IPY_MODEL_")]
    assert layout.state.get("display") == "none"  # code is approved one call at a time
    fe.click(deny.comm_id)
    fe.wait(lambda: cell.finished, 60, "the denied run")
    assert cell.status == "ok", fe.describe()
    [result] = _results(_payload(cell), "run_python")
    assert result["status"] == "denied" and not marker.exists()


def test_headless_nobody_answers_so_run_python_is_denied(fe: FrontEnd, tmp_path: Path) -> None:
    marker = tmp_path / "ran.txt"
    model = write_script(
        tmp_path / "ws",
        [
            {"tool_calls": [{"name": "run_python", "arguments": {"code": f"open({str(marker)!r}, 'w')"}}]},
            {"content": "Nobody approved."},
        ],
    )
    fe.run("%architect config notebook.approval_timeout=1")
    cell = fe.run(f"%%architect --model {model}\nWrite the marker", timeout=60)
    [result] = _results(_payload(cell), "run_python")
    assert result["status"] == "denied"
    assert "Nobody answered 'Approve run_python (code in your kernel)?' within 1 s" in (result["error"] or "")
    assert not marker.exists()


def test_an_interrupt_stops_the_code_within_a_second_and_the_kernel_lives(
    fe: FrontEnd, tmp_path: Path
) -> None:
    model = write_script(
        tmp_path / "ws",
        [
            {
                "tool_calls": [
                    {
                        "name": "run_python",
                        "arguments": {"code": "import time\nwhile True:\n    time.sleep(0.05)"},
                    }
                ]
            },
            {"content": "never reached"},
        ],
    )
    cell = fe.execute(f"%%architect --mode yolo --model {model}\nLoop forever")
    queued = fe.execute("print('queued')")
    fe.wait(
        lambda: "run_python" in str(cell.outputs[0]["data"].get("text/html", "")) if cell.outputs else False,
        60,
        "run_python to start",
    )
    time.sleep(0.5)
    sent = fe.interrupt()
    fe.wait(lambda: cell.done and queued.done, 10, "the interrupted cells")  # an aborted cell never idles
    # 0.03-0.06 s here on an idle machine (ipykernel 7 and 6). The bound is loose because two test workers
    # share two cores; what it proves is that the interrupt stops the code, not the run's 60 s bound.
    assert cell.reply_at is not None and cell.reply_at - sent < 3.0
    assert cell.status == "error" and queued.status == "aborted", fe.describe()
    [result] = _results(_payload(cell), "run_python")
    assert "The user interrupted the code" in (result["error"] or "")
    assert fe.run_past_abort("print(1 + 1)").text().strip() == "2"
    assert _value(fe, "type(df).__name__") == "'DataFrame'"


def test_a_kernel_check_fails_then_passes_after_the_fix(fe: FrontEnd, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "mathx.py").write_text("def total(xs):\n    return sum(xs) - 1\n")
    # The person imported the module before the agent fixed it: the check must still test the new code.
    fe.run(f"import sys\nsys.path.insert(0, {str(ws)!r})\nimport mathx\nexpected = 6")
    (ws / ".architect.yaml").write_text(
        "guardrails:\n  quality_gates:\n"
        "    - {name: same-total, python: \"__import__('mathx').total([1, 2, 3]) == expected\"}\n"
    )
    fix = {"path": "mathx.py", "old_str": "return sum(xs) - 1", "new_str": "return sum(xs)"}
    model = write_script(
        ws,
        [
            {"content": "Done, I think."},
            {
                "expect": {"history_contains": "Quality gate 'same-total' failed"},
                "tool_calls": [{"name": "edit_file", "arguments": fix}],
            },
            {"content": "Fixed: total() no longer subtracts one."},
        ],
    )
    cell = fe.run(f"%%architect --mode yolo --model {model}\nCheck mathx against the notebook", timeout=90)
    payload = _payload(cell)
    finished = payload["events"][-1]
    assert finished["status"] == "success" and finished["final_text"].startswith("Fixed"), finished
    failed = [e for e in payload["events"] if e["kind"] == "warning" and e.get("category") == "quality_gate"]
    assert [w["message"] for w in failed] == ["Quality gate same-total failed."]
    assert _value(fe, "mathx.total([1, 2, 3])") == "5"  # the person's module object is unchanged

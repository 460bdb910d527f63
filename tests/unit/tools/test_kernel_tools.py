"""The kernel tools on a plain namespace (`PlainKernel`): what they show, what they refuse, what they leave.

The same tools in real kernels, with interrupts, plots and approvals, are in test_notebook_kernel_tools.py.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from architect_nb.agent.conversation.context import ContextBuilder, estimate_tokens
from architect_nb.agent.models.llm import ToolCall
from architect_nb.config import load_config
from architect_nb.config.schema import QualityGateConfig
from architect_nb.execution.build import build_engine
from architect_nb.execution.confirmation.confirmers import ScriptedConfirmer
from architect_nb.execution.gates.kernel_checks import run_kernel_check
from architect_nb.tools.base import ToolResult
from architect_nb.tools.kernel import (
    InspectVariableTool,
    ListVariablesTool,
    PlainKernel,
    ProposeCellTool,
    RunPythonTool,
)
from architect_nb.tools.kernel.execute import forbidden_call
from architect_nb.tools.outcome import CallOutcome


def notebook_function(x: int) -> int:
    """Doubles x."""
    return x * 2


notebook_function.__module__ = "__main__"  # as if defined in a notebook cell


class Broken:
    def __repr__(self) -> str:
        raise ValueError("repr is broken")


class Slow:
    def __repr__(self) -> str:
        while True:
            pass


@pytest.fixture
def namespace() -> dict[str, Any]:
    return {
        "df": pd.DataFrame({"region": ["north", "south", None], "price": [1.5, 2.0, 3.5]}),
        "prices": np.array([1.0, 2.0, 3.0, 4.0]),
        "cfg": {"paths": {"raw": "data/raw.csv"}, "seed": 7},
        "double": notebook_function,
        "pd": pd,  # a module: not the person's variable
        "Path": Path,  # a class from a library: not theirs either
        "_hidden": 1,
        "broken": Broken(),
        "slow": Slow(),
    }


@pytest.fixture
def kernel(namespace: dict[str, Any]) -> PlainKernel:
    return PlainKernel(namespace)


def run(kernel: PlainKernel, code: str, timeout: float = 5.0, **kwargs: Any) -> ToolResult:
    return RunPythonTool(kernel, timeout=timeout, **kwargs).execute(code=code)


# ---------------------------------------------------------------------- list_variables, inspect_variable


def test_list_variables_shows_the_persons_own_names(kernel: PlainKernel) -> None:
    result = ListVariablesTool(kernel).execute()
    assert result.success
    names = [line.split(":")[0] for line in result.output.splitlines()]
    assert names == ["df", "prices", "cfg", "double", "broken", "slow"]
    assert "df: pandas.DataFrame, (3, 2)" in result.output
    assert "prices: numpy.ndarray, (4,), 32 B" in result.output
    assert "cfg: dict, len 2" in result.output and "double: function, (x: 'int') -> 'int'" in result.output


def test_inspect_a_dataframe(kernel: PlainKernel) -> None:
    text = InspectVariableTool(kernel).execute(name="df", rows=2).output
    assert text.startswith("pandas DataFrame, shape (3, 2), ")
    dtypes, rest = text.split("dtypes:\n")[1].split("null counts:\n")
    assert dtypes.split()[0] == "region" and "price     float64" in dtypes
    nulls, rest = rest.split("head(2):\n")
    assert nulls.split() == ["region", "1"]
    head, stats = rest.split("describe() of the numeric columns:\n")
    assert "north" in head and "south" in head and len(head.strip().splitlines()) == 3  # columns + 2 rows
    assert "mean   2.333333" in stats and "region" not in stats


def test_inspect_arrays_paths_functions_and_odd_objects(kernel: PlainKernel) -> None:
    inspect = InspectVariableTool(kernel)
    assert "min 1.0, max 4.0, mean 2.5" in inspect.execute(name="prices").output
    assert inspect.execute(name="cfg['paths']['raw']").output == "str: 'data/raw.csv'"
    assert "dict with 2 key(s)" in inspect.execute(name="cfg").output
    described = inspect.execute(name="double").output
    assert "function notebook_function(x: 'int') -> 'int'" in described and "Doubles x." in described
    assert "return x * 2" in described  # defined "in the notebook": its source is shown
    assert "<repr failed: ValueError: repr is broken>" in inspect.execute(name="broken").output or (
        "Broken" in inspect.execute(name="broken").output
    )


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("nope", "no variable 'nope'; list_variables shows the names"),
        ("cfg['missing']", "cfg['missing'] failed: KeyError"),
        ("df.no_such_column", "df.no_such_column failed: AttributeError"),
        ("double(3)", "is not a plain variable path"),
        ("__import__('os').system('id')", "is not a plain variable path"),
        ("df[", "is not a variable path"),
        ("", "is not a variable path"),
    ],
)
def test_inspect_bad_paths_fail_clearly(kernel: PlainKernel, name: str, message: str) -> None:
    result = InspectVariableTool(kernel).execute(name=name)
    assert not result.success and message in (result.error or "")


@pytest.mark.slow  # left out of `make test-unit`: waits out a repr's real time bound
def test_inspect_a_slow_repr_is_stopped(kernel: PlainKernel) -> None:
    started = time.monotonic()
    result = InspectVariableTool(kernel).execute(name="slow")
    assert not result.success and "took longer than 10 s and was stopped" in (result.error or "")
    assert time.monotonic() - started < 15


def test_inspect_and_list_refuse_malformed_and_huge_arguments(kernel: PlainKernel) -> None:
    inspect = InspectVariableTool(kernel)
    for bad in (
        {},
        {"name": 3},
        {"name": "df", "rows": 0},
        {"name": "df", "rows": 10**9},
        {"name": "x" * 10_000},
    ):
        result = inspect.execute(**bad)
        assert not result.success and result.error
    assert not ListVariablesTool(kernel).execute(unexpected=1).success


# ---------------------------------------------------------------------- run_python


def test_run_python_sees_the_variables_and_keeps_its_names_apart(
    kernel: PlainKernel, namespace: dict[str, Any]
) -> None:
    first = run(kernel, "total = float(df.price.sum())\nprint('total', total)\ndf = None\ntotal")
    assert first.success and "[stdout]\ntotal 7.0" in first.output and "[value]\n7.0" in first.output
    assert (
        isinstance(namespace["df"], pd.DataFrame) and "total" not in namespace
    )  # the person's are untouched
    second = run(kernel, "def twice():\n    return total * 2\ntwice()")  # the scratch names last the run
    assert "[value]\n14.0" in second.output
    assert "your run_python names this run: df, total, twice" in ListVariablesTool(kernel).execute().output


def test_write_namespace_opt_in_assigns_to_the_persons_variables(
    kernel: PlainKernel, namespace: dict[str, Any]
) -> None:
    assert run(kernel, "made_here = 1", write_namespace=True).success
    assert namespace["made_here"] == 1


@pytest.mark.parametrize(
    ("code", "error"),
    [
        ("1/0", "ZeroDivisionError: division by zero"),
        ("def f(:\n  pass", "SyntaxError: invalid syntax (line 1"),
        ("import sys\nsys.exit(3)", "called sys.exit(3); it stopped there, and the kernel runs on"),
        ("raise SystemExit", "called sys.exit(None)"),
        ("undefined_name", "NameError: name 'undefined_name' is not defined"),
        ("\x00", "SyntaxError"),
    ],
)
def test_run_python_errors_are_results(kernel: PlainKernel, code: str, error: str) -> None:
    result = run(kernel, code)
    assert not result.success and error in (result.error or "")


@pytest.mark.parametrize(
    "code",
    [
        "import os\nos._exit(1)",
        "from os import _exit as bye\nbye(0)",
        "import os\nos.kill(os.getpid(), 9)",
        "import signal\nsignal.raise_signal(signal.SIGTERM)",
        "import os\nos.abort()",
    ],
)
def test_calls_that_would_kill_the_kernel_are_refused_before_running(kernel: PlainKernel, code: str) -> None:
    result = run(kernel, code)
    assert not result.success and "which would end the kernel" in (result.error or "")
    assert forbidden_call(code) is not None


def test_run_python_time_bound_on_the_main_thread_and_in_a_worker(kernel: PlainKernel) -> None:
    started = time.monotonic()
    result = run(kernel, "import time\ntime.sleep(30)", timeout=1)  # SIGALRM reaches a sleep
    assert not result.success and "stopped after 1 s" in (result.error or "")
    assert time.monotonic() - started < 5
    results: list[ToolResult] = []
    worker = threading.Thread(target=lambda: results.append(run(kernel, "while True:\n    pass", timeout=1)))
    started = time.monotonic()
    worker.start()
    worker.join(10)
    assert not worker.is_alive() and time.monotonic() - started < 5
    assert "stopped after 1 s" in (results[0].error or "")
    assert run(kernel, "'still fine'").output == "[value]\n'still fine'"


def test_huge_output_is_cut_not_kept(kernel: PlainKernel) -> None:
    result = run(kernel, "print('x' * 100_000_000)\nprint('the end')", timeout=30)
    assert result.success and len(result.output) < 20_000
    assert "characters cut" in result.output and result.output.rstrip().endswith("the end")


def test_plots_are_rendered_closed_and_attached(kernel: PlainKernel) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    code = "import matplotlib.pyplot as plt\nplt.plot(prices)\nplt.figure()\nplt.bar([1], [2])"
    result = run(kernel, code)
    assert result.success, result.error
    images = result.metadata["images"]
    assert len(images) == 2 and all(
        i["mime"] == "image/png" and i["data"].startswith("iVBORw0KGgo") for i in images
    )
    assert "closed 2 figure(s) the code left open" in result.output
    assert plt.get_fignums() == []  # nothing left to show in a later cell


def test_threads_the_code_leaves_are_reported(kernel: PlainKernel) -> None:
    stop = threading.Event()
    kernel.namespace["stop"] = stop
    result = run(kernel, "import threading\nthreading.Thread(target=stop.wait, name='left-over').start()")
    stop.set()
    assert result.success and "started 1 thread(s) that are still running (left-over)" in result.output


def test_run_python_refuses_malformed_and_huge_code(kernel: PlainKernel) -> None:
    tool = RunPythonTool(kernel)
    for bad in ({}, {"code": None}, {"code": ["x"]}, {"code": "1", "timeout": 5}):
        result = tool.execute(**bad)
        assert not result.success and result.error
    huge = tool.execute(code="x = 1\n" * 50_000)
    assert not huge.success and "over the 100,000 allowed" in (huge.error or "")


def test_propose_cell_runs_nothing(kernel: PlainKernel) -> None:
    result = ProposeCellTool(kernel).execute(code="df.describe()")
    assert result.success and "cannot add cells" in result.output and kernel.proposed == ["df.describe()"]
    assert not ProposeCellTool(kernel).execute(code="  \n").success


# ---------------------------------------------------------------------- through the engine


def engine_for(tmp_path: Path, kernel: PlainKernel, mode: str = "confirm-sensitive", **overrides: Any) -> Any:
    config = load_config(overrides={"workspace.root": str(tmp_path), **overrides}, environ={})
    return build_engine(
        config, mode=mode, confirmer=ScriptedConfirmer([], default="deny: not now"), kernel=kernel
    )


def test_the_engine_asks_before_run_python_only(tmp_path: Path, kernel: PlainKernel) -> None:
    engine = engine_for(tmp_path, kernel)
    assert {"list_variables", "inspect_variable", "run_python", "propose_cell"} <= set(
        engine.registry.names()
    )
    assert engine.execute_tool_call("list_variables", {}).success
    assert engine.execute_tool_call("inspect_variable", {"name": "df"}).success
    assert engine.execute_tool_call("propose_cell", {"code": "1"}).success
    denied = engine.execute_tool_call("run_python", {"code": "ran = True"})
    assert not denied.success and denied.outcome is CallOutcome.DENIED and "ran" not in kernel.scratch
    [request] = engine.confirmer.requests
    assert request.code == "ran = True" and "code=" not in request.shown_args()
    assert "code:\nran = True" in request.render()
    assert (
        engine_for(tmp_path, kernel, mode="yolo").execute_tool_call("run_python", {"code": "ran = 1"}).success
    )


def test_kernel_tools_are_off_when_configured_or_without_a_kernel(
    tmp_path: Path, kernel: PlainKernel
) -> None:
    assert "run_python" not in engine_for(tmp_path, kernel, **{"kernel.tools": False}).registry.names()
    config = load_config(overrides={"workspace.root": str(tmp_path)}, environ={})
    assert "run_python" not in build_engine(config).registry.names()


def test_guardrails_check_the_code(tmp_path: Path, kernel: PlainKernel) -> None:
    engine = engine_for(
        tmp_path,
        kernel,
        mode="yolo",
        **{
            "guardrails.sensitive_files": [".env"],
            "guardrails.blocked_commands": [r"requests\.post"],
            "guardrails.code_rules": [{"pattern": r"\beval\(", "message": "no eval", "severity": "block"}],
        },
    )
    for code, why in (
        ("print(open('.env').read())", "mentions '.env', a sensitive file"),
        ("import requests\nrequests.post('http://x', data=df)", "blocked pattern"),
        ("eval('1+1')", "no eval"),
    ):
        result = engine.execute_tool_call("run_python", {"code": code})
        assert not result.success and why in (result.error or ""), code


def test_plots_reach_a_model_that_sees_images_and_are_described_otherwise() -> None:
    builder = ContextBuilder()
    image = {"mime": "image/png", "data": "iVBORw0KGgo=", "alt": "<Figure of 400x300 px, 1 axes>"}
    result = ToolResult.ok("[display 1] <Figure of 400x300 px, 1 axes>", images=[image])
    call = ToolCall("c1", "run_python", {"code": "plot()"})
    seen: list[dict[str, Any]] = []
    builder.append_tool_results(seen, [call], [result], images=True)
    assert seen[-1]["role"] == "user"
    assert seen[-1]["content"][1]["image_url"]["url"] == "data:image/png;base64,iVBORw0KGgo="
    described: list[dict[str, Any]] = []
    builder.append_tool_results(described, [call], [result], images=False)
    assert [m["role"] for m in described] == ["assistant", "tool"] and "Figure of 400x300" in described[1][
        "content"
    ]
    big = {**image, "data": "A" * 400_000}
    heavy: list[dict[str, Any]] = []
    builder.append_tool_results(heavy, [call], [ToolResult.ok("x", images=[big])], images=True)
    assert estimate_tokens(heavy) < 2_000  # an image counts as an image, not as its base64 length


# ---------------------------------------------------------------------- kernel checks


def gate(expression: str, **extra: Any) -> QualityGateConfig:
    return QualityGateConfig(name="same-numbers", python=expression, **extra)


def test_a_kernel_check_passes_fails_and_explains(tmp_path: Path, kernel: PlainKernel) -> None:
    assert run_kernel_check(gate("df.price.sum() == 7.0"), kernel, tmp_path).passed
    falsy = run_kernel_check(gate("df.price.sum() == 8"), kernel, tmp_path)
    assert not falsy.passed and "is false" in falsy.output
    raised = run_kernel_check(gate("df.nope.sum() == 7"), kernel, tmp_path)
    assert not raised.passed and "AttributeError" in raised.output
    ambiguous = run_kernel_check(gate("df"), kernel, tmp_path)
    assert not ambiguous.passed and "truth value of a DataFrame is ambiguous" in ambiguous.output
    slow = run_kernel_check(gate("__import__('time').sleep(5)", timeout=1), kernel, tmp_path)
    assert not slow.passed and "timed out after 1s" in slow.output
    assert not run_kernel_check(gate("1 +"), kernel, tmp_path).passed
    nothing = run_kernel_check(gate("True"), None, tmp_path)
    assert not nothing.passed and "needs a kernel" in nothing.output


def test_a_kernel_check_ignores_the_agents_scratch_names(tmp_path: Path, kernel: PlainKernel) -> None:
    run(kernel, "expected = 'forged'")
    assert not run_kernel_check(gate("expected == 'forged'"), kernel, tmp_path).passed


def test_a_kernel_check_imports_the_workspace_afresh(tmp_path: Path, kernel: PlainKernel) -> None:
    (tmp_path / "mathx.py").write_text("def total(xs):\n    return sum(xs) - 1\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import mathx  # the person imported the old code before the agent fixed it

        assert mathx.total([1, 2]) == 2
        check = gate("__import__('mathx').total([1, 2, 3]) == 6")
        assert not run_kernel_check(check, kernel, tmp_path).passed
        (tmp_path / "mathx.py").write_text("def total(xs):\n    return sum(xs)\n")
        assert run_kernel_check(check, kernel, tmp_path).passed
        assert sys.modules["mathx"] is mathx  # the person's module is put back
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("mathx", None)


def test_the_engine_runs_command_gates_and_kernel_checks_in_order(
    tmp_path: Path, kernel: PlainKernel
) -> None:
    gates = [
        {"name": "cmd", "command": "true"},
        {"name": "kernel", "python": "len(df) == 3"},
        {"name": "broken", "python": "len(df) == 4", "required": False},
    ]
    engine = engine_for(tmp_path, kernel, **{"guardrails.quality_gates": gates})
    results = engine.run_quality_gates()
    assert [(r.name, r.passed) for r in results] == [("cmd", True), ("kernel", True), ("broken", False)]
    with pytest.raises(ValueError, match="one of `command`, `python` or `notebook`"):
        QualityGateConfig(name="x", command="true", python="True")

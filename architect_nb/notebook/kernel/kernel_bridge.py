"""The kernel side of a notebook kernel reached from outside: the kernel tools, run in the person's kernel.

An agent that runs in another process (`architect-nb-acp` in Jupyter AI's chat) cannot hand the kernel a
closure. It asks the kernel to evaluate `call(...)` as a user expression of a silent execute request, and
this module runs the same kernel tools a `%%architect` cell has, on the kernel's own namespace, on its main
thread (so the kernel's stop button interrupts them as it interrupts a cell), and answers with the tool's
result as JSON. A silent request touches neither the execution count nor the history, and what the code
prints is captured into the result, not shown in the notebook.

Each of the agent's runs has its own key, so run_python's scratch names last for that run, as in a cell.
What run_python's code may change of the person's variables is kept here, in the kernel, before it runs
(`snapshot`), and the agent's undo asks for it back by key (`state`: its changes, a restore, a release), as
a `%%architect` cell's undo does (`tools.kernel.kernel_undo`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["call", "forget", "snapshot", "state"]

_sessions: dict[str, Any] = {}  # run key -> IPythonKernel, for its scratch namespace
_held: dict[str, Any] = {}  # snapshot key -> KernelSnapshot: the person's variables before a run_python call


def call(run: str, tool: str, arguments: dict[str, Any], workspace: str, timeout: float = 60.0) -> str:
    """Run kernel tool `tool` with `arguments` for run `run`; returns `{"success", "output", "error",
    "metadata"}` as JSON. Never raises: a problem is the result's error."""
    try:
        result = _tool(run, tool, workspace, timeout).execute(**arguments)
    except Exception as exc:  # a tool never raises; an unknown tool or a broken kernel says so
        return json.dumps({"success": False, "output": "", "error": f"{type(exc).__name__}: {exc}"})
    metadata = {key: value for key, value in result.metadata.items() if _jsonable(value)}
    return json.dumps(
        {"success": result.success, "output": result.output, "error": result.error, "metadata": metadata}
    )


def snapshot(run: str, key: str, code: str, budget: int | None = None) -> str:
    """Keep, under `key`, what `code` (run_python's, for run `run`) may change of the person's variables;
    returns `{"taken", "limits"}` (or `{"error"}`) as JSON. Never raises."""
    from architect_nb.tools.kernel.kernel_undo import kernel_snapshot

    try:
        taken = kernel_snapshot(_session(run), code, into_namespace=False, budget_bytes=budget)
    except Exception as exc:
        return json.dumps({"error": f"{type(exc).__name__}: {exc}"})
    if taken is None:
        return json.dumps({"taken": False, "limits": ""})
    _held[key] = taken
    return json.dumps({"taken": True, "limits": taken.limits()})


def state(key: str, action: str) -> str:
    """`changes`, `restore` or `release` the snapshot kept under `key`; JSON: `{"changes": [...]}`,
    `{"said": [...]}` or `{}`, and `{"gone": true}` when this kernel does not hold it (it restarted)."""
    held = _held.get(key)
    if held is None:
        return json.dumps({"gone": True})
    try:
        if action == "changes":
            return json.dumps({"changes": held.changes()})
        if action == "restore":
            said = held.restore()
            held.release()
            _held.pop(key, None)
            return json.dumps({"said": said})
        held.release()
        _held.pop(key, None)
        return json.dumps({})
    except Exception as exc:  # one object's problem: said in the agent's result or report
        return json.dumps({"error": f"{type(exc).__name__}: {exc}"})


def forget(run: str) -> None:
    """The run is over: drop its scratch names."""
    _sessions.pop(run, None)


def _session(run: str) -> Any:
    """Run `run`'s session of this kernel (its scratch namespace), made on first use."""
    from IPython import get_ipython

    from architect_nb.notebook.kernel.kernel_session import IPythonKernel, MainThreadCalls

    shell = get_ipython()
    if shell is None:
        raise RuntimeError("this is not an IPython kernel")
    session = _sessions.get(run)
    if session is None:
        # Called on the main thread (a user expression), MainThreadCalls runs the work at once.
        session = _sessions[run] = IPythonKernel(shell, MainThreadCalls())
    return session


def _tool(run: str, tool: str, workspace: str, timeout: float) -> Any:
    from architect_nb.tools.kernel.kernel_tools import InspectVariableTool, ListVariablesTool, RunPythonTool

    session = _session(run)
    root = Path(workspace)
    if tool == "list_variables":
        return ListVariablesTool(session, root)
    if tool == "inspect_variable":
        return InspectVariableTool(session, root)
    if tool == "run_python":
        return RunPythonTool(session, root, timeout=timeout)
    raise ValueError(f"{tool} is not a kernel tool this kernel runs for an outside agent")


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True

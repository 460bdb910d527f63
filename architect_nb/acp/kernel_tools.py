"""The kernel tools of an ACP session connected to a notebook's kernel: the same names, schemas and rules
(run_python runs code, so it always asks unless yolo, and its code is checked by the guardrails), but each
call runs in that kernel through `architect_nb.notebook.kernel.kernel_bridge`. What run_python's code may
change of the person's variables is kept in that kernel before it runs, and undone from here
(`BridgedSnapshot`)."""

from __future__ import annotations

import json
import uuid
from typing import Any, cast

from architect_nb.acp.notebook_kernel import NotebookKernel
from architect_nb.tools.base import BaseTool, ToolResult
from architect_nb.tools.kernel.kernel_tools import InspectVariableTool, ListVariablesTool, RunPythonTool
from architect_nb.tools.state_snapshot import StateChange, StateSnapshot

__all__ = ["BridgedSnapshot", "bridged_kernel_tools"]

_MAX_ARGUMENTS = 1_000_000  # characters of JSON sent to the kernel; the tools' own limits are far lower


class _Bridged(BaseTool):
    def __init__(self, kernel: NotebookKernel, run: str, workspace: str, timeout: float) -> None:
        self.kernel = kernel
        self.run = run
        self.workspace = workspace
        self.timeout = timeout

    def execute(self, **kwargs: Any) -> ToolResult:
        arguments = self.args_model.model_validate(kwargs).model_dump()
        if len(json.dumps(arguments)) > _MAX_ARGUMENTS:
            return ToolResult.fail(f"The arguments are over {_MAX_ARGUMENTS:,} characters; send less.")
        return self.kernel.call(self.run, self.name, arguments, self.workspace, self.timeout)


class _ListVariables(_Bridged):
    name = ListVariablesTool.name
    reads_only = True
    description = ListVariablesTool.description
    args_model = ListVariablesTool.args_model


class _InspectVariable(_Bridged):
    name = InspectVariableTool.name
    reads_only = True
    description = InspectVariableTool.description
    args_model = InspectVariableTool.args_model


class _RunPython(_Bridged):
    name = RunPythonTool.name
    description = RunPythonTool.description
    args_model = RunPythonTool.args_model
    sensitive = RunPythonTool.sensitive
    runs_code = RunPythonTool.runs_code

    def snapshot_state(self, kwargs: dict[str, Any]) -> StateSnapshot | None:
        code = kwargs.get("code")
        if not isinstance(code, str) or len(code) > _MAX_ARGUMENTS:
            return None
        key = f"{self.run}:{uuid.uuid4().hex[:12]}"
        answer = self.kernel.bridge(f"snapshot({self.run!r}, {key!r}, {code!r})")
        if "error" in answer:
            raise RuntimeError(str(answer["error"]))  # the engine says undo will not cover it
        return (
            BridgedSnapshot(self.kernel, key, str(answer.get("limits") or ""))
            if answer.get("taken")
            else None
        )


class BridgedSnapshot:
    """A `StateSnapshot` kept in the notebook's kernel (`kernel_bridge.snapshot`), reached by its key."""

    def __init__(self, kernel: NotebookKernel, key: str, limits: str) -> None:
        self.kernel = kernel
        self.key = key
        self._limits = limits

    def limits(self) -> str:
        return self._limits

    def changes(self) -> list[StateChange]:
        answer = self.kernel.bridge(f"state({self.key!r}, 'changes')")
        if "error" in answer:
            raise RuntimeError(str(answer["error"]))
        return [cast(StateChange, c) for c in answer.get("changes") or () if isinstance(c, dict)]

    def restore(self) -> list[str]:
        answer = self.kernel.bridge(f"state({self.key!r}, 'restore')")
        if answer.get("gone"):
            return ["Your variables could not be put back: the notebook's kernel restarted since the run."]
        if "error" in answer:
            return [f"Your variables could not be put back: {answer['error']}."]
        return [str(line) for line in answer.get("said") or ()]

    def release(self) -> None:
        self.kernel.bridge(f"state({self.key!r}, 'release')", 10.0)


def bridged_kernel_tools(kernel: NotebookKernel, run: str, workspace: str, timeout: float) -> list[BaseTool]:
    """list_variables, inspect_variable and run_python, run in `kernel` for run key `run`."""
    return [cls(kernel, run, workspace, timeout) for cls in (_ListVariables, _InspectVariable, _RunPython)]

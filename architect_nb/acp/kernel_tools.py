"""The kernel tools of an ACP session connected to a notebook's kernel: the same names, schemas and rules
(run_python runs code, so it always asks unless yolo, and its code is checked by the guardrails), but each
call runs in that kernel through `architect_nb.notebook.kernel.kernel_bridge`."""

from __future__ import annotations

import json
from typing import Any

from architect_nb.acp.notebook_kernel import NotebookKernel
from architect_nb.tools.base import BaseTool, ToolResult
from architect_nb.tools.kernel.kernel_tools import InspectVariableTool, ListVariablesTool, RunPythonTool

__all__ = ["bridged_kernel_tools"]

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
    description = ListVariablesTool.description
    args_model = ListVariablesTool.args_model


class _InspectVariable(_Bridged):
    name = InspectVariableTool.name
    description = InspectVariableTool.description
    args_model = InspectVariableTool.args_model


class _RunPython(_Bridged):
    name = RunPythonTool.name
    description = RunPythonTool.description
    args_model = RunPythonTool.args_model
    sensitive = RunPythonTool.sensitive
    runs_code = RunPythonTool.runs_code


def bridged_kernel_tools(kernel: NotebookKernel, run: str, workspace: str, timeout: float) -> list[BaseTool]:
    """list_variables, inspect_variable and run_python, run in `kernel` for run key `run`."""
    return [cls(kernel, run, workspace, timeout) for cls in (_ListVariables, _InspectVariable, _RunPython)]

"""The kernel tools: list_variables, inspect_variable, run_python and propose_cell.

- `kernel_tools`: the four tools, registered when the engine runs inside a kernel (`register_kernel_tools`).
- `session`: `KernelSession`, what they need from the live kernel, and `PlainKernel`, a namespace alone.
- `namespace`: the person's variables, and the scratch layer the agent's code assigns into.
- `execute`: running code with its output captured, within a time bound, figures and widgets cleaned up.
- `describe`: DataFrames, arrays, containers and functions described for a model.

Depends on the core only; nothing here imports IPython (the IPython session is
`architect_nb.notebook.kernel_session`).
"""

from architect_nb.tools.kernel.kernel_tools import (
    InspectVariableArgs,
    InspectVariableTool,
    ListVariablesArgs,
    ListVariablesTool,
    ProposeCellArgs,
    ProposeCellTool,
    RunPythonArgs,
    RunPythonTool,
)
from architect_nb.tools.kernel.session import KernelSession, PlainKernel

__all__ = [
    "InspectVariableArgs",
    "InspectVariableTool",
    "KernelSession",
    "ListVariablesArgs",
    "ListVariablesTool",
    "PlainKernel",
    "ProposeCellArgs",
    "ProposeCellTool",
    "RunPythonArgs",
    "RunPythonTool",
]

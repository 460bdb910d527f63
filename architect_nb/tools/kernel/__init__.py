"""The kernel tools: list_variables, inspect_variable, run_python, propose_cell and run_cell.

- `kernel_tools`: the first four, registered when the engine runs inside a kernel (`register_kernel_tools`).
- `run_cell`: running a cell of the open notebook in the person's namespace, its outputs written back.
- `session`: `KernelSession`, what they need from the live kernel, and `PlainKernel`, a namespace alone.
- `namespace`: the person's variables, and the scratch layer the agent's code assigns into.
- `execute`: running code with its output captured, within a time bound, figures and widgets cleaned up.
- `describe`: DataFrames, arrays, containers and functions described for a model.
- `kernel_undo`: what run_python and run_cell do to the person's variables, kept for undo: which names the
  code can touch (`name_effects`, from its syntax tree), and those objects copied within a budget, compared
  and restored (`namespace_snapshot`).

Depends on the core (with `state_snapshot`, the undo seam), and for run_cell on `notebook_files` (the open
notebook's documents and cells), `filesystem.fileio` and `search.scan` (a notebook's text); nothing here
imports IPython (the IPython session is `architect_nb.notebook.kernel.kernel_session`).
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
from architect_nb.tools.kernel.run_cell import RunCellArgs, RunCellTool
from architect_nb.tools.kernel.session import CellExecution, KernelSession, OwnNotebook, PlainKernel

__all__ = [
    "CellExecution",
    "InspectVariableArgs",
    "InspectVariableTool",
    "KernelSession",
    "ListVariablesArgs",
    "ListVariablesTool",
    "OwnNotebook",
    "PlainKernel",
    "ProposeCellArgs",
    "ProposeCellTool",
    "RunCellArgs",
    "RunCellTool",
    "RunPythonArgs",
    "RunPythonTool",
]

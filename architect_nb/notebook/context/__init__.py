"""What an `%%architect` run knows of the notebook it runs in, told to the model before its task.

- `kernel_facts`: what the kernel knows of the running cell and what ran before it (taken on the main thread).
- `sources`: the notebook, from the open document, else the file, else the kernel's history (`view`).
- `names`: the names each code cell defines, uses and deletes, and the modules it imports.
- `staleness`: cells edited since they ran, out of order, never run, or downstream of a changed cell.
- `references`: "this cell", "the cell above", "cell 5", "[12]", "the selected cell" resolved to cells.
- `outline`: all of it as text within a token budget; `opening_note`: the redacted note a run starts with.
- `execution_log`: what the kernel ran since the extension loaded (each count, its cell, its error), kept by
  a `post_run_cell` hook; `kernel_facts` reads it.
- `context_vars`: `--context df,cfg`, compact descriptions of live kernel variables added to the task.

Only `kernel_facts` and `execution_log` read the kernel (they are handed the shell), and `context_vars` the
person's namespace (handed to it); the rest works on plain data. The names below load on first use, so the
extension installs the execution log without loading the rest.

Depends on `notebook.magics` (the usage error of `--context`) and `tools.notebook_files` (notebooks as the
notebook tools read them).
"""

from __future__ import annotations

from architect_nb._lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from architect_nb.notebook.context.kernel_facts import KernelFacts, gather_facts
    from architect_nb.notebook.context.opening_note import context_note
    from architect_nb.notebook.context.sources import Found, Locator, find_notebook
    from architect_nb.notebook.context.view import CellView, NotebookView

__all__ = [
    "CellView",
    "Found",
    "KernelFacts",
    "Locator",
    "NotebookView",
    "context_note",
    "find_notebook",
    "gather_facts",
]

__getattr__ = lazy_exports(
    __name__,
    {
        "CellView": ".view",
        "Found": ".sources",
        "KernelFacts": ".kernel_facts",
        "Locator": ".sources",
        "NotebookView": ".view",
        "context_note": ".opening_note",
        "find_notebook": ".sources",
        "gather_facts": ".kernel_facts",
    },
)

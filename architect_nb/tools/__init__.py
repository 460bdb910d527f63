"""The agent's tools: the core at the top, one package per tool family below it.

The core:

- `base`: `BaseTool`, the interface of every tool (local or MCP), and `ToolResult`, what every tool returns.
- `outcome`: `CallOutcome`, how a call ended (ok, failed, denied, blocked, ...), said where it is decided.
- `metadata`: `ToolMetadata`, a result's structured extras, every key typed.
- `state_snapshot`: `StateSnapshot`, what a call may change besides files (the person's variables), kept
  before it runs so undo can put it back.
- `registry`: `ToolRegistry`, the store the engine looks tools up in.
- `workspace`: `WorkspaceTool` and `ToolArgs`, the base of every tool confined to the workspace.
- `setup`: `register_all_tools`, how every entry point fills a registry.

The families (each package's docstring says what it holds and what it depends on):

- `filesystem`: read_file, write_file, delete_file, list_files and edit_file, with their I/O, text
  matching and diffs.
- `patch`: apply_patch.
- `tree`: the workspace walk every listing and search shares, and file-name globs.
- `search`: search_code, grep and find_files.
- `commands`: run_command, its classifier, shell parsing, wrappers, blocklist and process running.
- `notebook_files`: the `.ipynb` cell tools, working on files.
- `todo`: the model's checklist.

Depends on `architect_nb.config`, `architect_nb.paths` (the path gate) and `architect_nb.provenance` (who
wrote which lines), for the core. Dependencies point
from the families to the core,
and between families only to public modules, never in a circle: patch, search and notebook_files use
filesystem's I/O, filesystem and search use tree's walk and globs, kernel knows notebook_files' documents.
No family imports IPython.

The kernel tools (list_variables, inspect_variable, run_python, propose_cell) go in `kernel`, a family
like the others: the tools talk to the live kernel through a small `Protocol` (the person's namespace,
running code, proposing a cell), with a plain-namespace implementation for the Python API. The IPython
side of it (display capture, interrupts, the front end) lives in `architect_nb.notebook`, which stays the
only package that imports IPython.
"""

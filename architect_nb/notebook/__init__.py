"""The notebook layer: `%%architect` cells, approve/deny widgets while the cell runs, static rich output.

`%load_ext architect_nb` calls `load_ipython_extension`, which registers the `%architect` line magic and an
input transformer that turns a `%%architect` cell into a top-level-await call of `runner.run_cell`, so the
cell stays busy until the run ends while its buttons still answer. Modules, one idea each:

- `magics`: the argument models of `%%architect` and `%architect`, parsed with one-line usage errors;
- `extension`: load/unload and the input transformer;
- `runner`: the cell's coroutine: the agent in a worker thread, interrupt handling;
- `pump`: how the cell waits, by ipykernel version (native concurrent comms on 7.4+, jupyter-ui-poll before);
- `asking`: the one way a run asks the person (approvals, `--step` pauses, the plan's Build offer), with the
  one headless policy; `front_ends`: whether a front end that can show buttons has shown itself;
- `approval`: the widget confirmer (Approve, Deny, Abort run, Approve all like this), asked through `asking`;
- `live`: the live view, widgets created by the starting cell and updated from the worker;
- `render`: the static output (`_repr_mimebundle_`: the run's JSON, HTML and plain text), drawn from
  `event_view` (what is said about each event) as HTML, and as plain text by `text_render`;
- `context_vars`: `--context` descriptions of kernel variables;
- `state`: the per-kernel session (defaults, run history, undo) and the line magic's subcommands.

Nothing here is imported by `import architect_nb`; IPython and ipywidgets load with the extension's first use.
"""

from __future__ import annotations

from typing import Any

__all__ = ["load_ipython_extension", "unload_ipython_extension"]


def load_ipython_extension(ipython: Any) -> None:
    from architect_nb.notebook.extension import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from architect_nb.notebook.extension import unload

    unload(ipython)

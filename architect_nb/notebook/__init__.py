"""The notebook layer: `%%architect` cells, approve/deny widgets while the cell runs, static rich output.

`%load_ext architect_nb` calls `load_ipython_extension`, which registers the `%architect` line magic and an
input transformer that turns a `%%architect` cell into a top-level-await call of `runner.run_cell`, so the
cell stays busy until the run ends while its buttons still answer. Its modules, one idea each, and its
families:

- `magics`: the argument models of `%%architect` and `%architect`, parsed with one-line usage errors;
- `extension`: load/unload and the input transformer; `warm_up`: imports made before a first cell needs them;
- `runner`: the cell's coroutine: the agent in a worker thread, interrupt handling, a plan's build;
  `undo_in_worker`: an `%architect undo` or `revert` line run in a worker thread while the cell awaits it;
- `pump`: how the cell waits, by ipykernel version (native concurrent comms on 7.4+, jupyter-ui-poll before);
- `state`: the per-kernel session (defaults, run history, undo) and the line magic's subcommands;
  `saved_runs`: the workspace's runs saved by other kernels, and those a stopped kernel cut off;
  `threads`: the kernel's conversations; `reload`: modules a run changed, offered for reloading;
  `fix_error`: the `%architect fix` cell for the last error;
- `questions`: how a run asks the person: `asking` (approvals, `--step` pauses, the plan's Build offer, with
  one headless policy), `front_ends` (whether a front end that can show buttons has shown itself),
  `approval` (the widget confirmer), `stepping` (the `--step` pause's buttons), `plans` (the plan's Build /
  Edit offer);
- `output`: what a run shows: `live` (the live view, widgets created by the starting cell and updated from
  the worker), `render` (the static output, `_repr_mimebundle_`: the run's JSON, HTML and plain text) drawn
  from `event_view` as HTML and as plain text by `text_render`, `inspector_view` (what the model saw at a
  step), `saved_record` (the record kept in the notebook);
- `kernel`: the live kernel as the kernel tools see it: `kernel_session` (the person's namespace),
  `cell_execution` (cells run as the front end runs them), `kernel_bridge` (another kernel reached over the
  protocol), `live_documents` (notebooks open in JupyterLab, edited through the front end);
- `context`: the notebook a cell runs in, outlined for the model, with `context_vars` (`--context`
  descriptions of kernel variables) and `execution_log` (the cells the kernel ran, and when).

Nothing here is imported by `import architect_nb`; IPython and ipywidgets load with the extension's first use.

Depends on `architect_nb.agent`, `architect_nb.config`, `architect_nb.checks`, the execution pipeline
(`execution.engine`, `execution.build`, `execution.checkpoints`, `execution.confirmation`,
`execution.guardrails`), and the tools it shows or runs: `tools.commands`, `tools.kernel`,
`tools.notebook_files`, `tools.state_snapshot` and `tools.todo`.
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

"""Loading the extension: the `%architect` line magic and the `%%architect` input transformer.

A registered cell magic runs synchronously, so it could never let the kernel handle a click while it waits.
Instead, a cleanup transformer rewrites a `%%architect` cell into one top-level-await statement; IPython sees
the `await` in the transformed cell and runs it as an async cell (design note `notebook-approvals.md`). An
`%architect undo` or `revert` line is awaited the same way, since it may talk to a front end. Loading also
starts watching for front ends (`front_ends`, for the headless policy of `asking`), opens the document channel
to front ends (`live_documents`) and starts the execution log (`execution_log`).
Loading imports neither ipywidgets nor the agent; it starts a background thread that imports the model client
and the agent (`warm_up`), so the first cell finds them loaded.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from architect_nb.notebook.magics import UsageError, parse_line

__all__ = ["await_undo", "load", "transform_cell", "unload"]

_PREFIX = "%%architect"
_MAGIC_CALL = re.compile(r"([ \t]*)get_ipython\(\)\.run_line_magic\((.*)\)(\s*)", re.DOTALL)


def transform_cell(lines: list[str]) -> list[str]:
    """`%%architect ARGS\\nBODY` → `await <runner>.run_cell('ARGS', 'BODY')`; other cells unchanged."""
    if not lines or not lines[0].startswith(_PREFIX):
        return lines
    rest = lines[0][len(_PREFIX) :]
    if rest and not rest[0].isspace():
        return lines  # %%architectural or the like: not ours
    body = "".join(lines[1:])
    return [
        "await __import__('architect_nb.notebook.runner', fromlist=['run_cell'])"
        f".run_cell({rest.strip()!r}, {body!r})\n"
    ]


def await_undo(lines: list[str]) -> list[str]:
    """`%architect undo|revert ...` (as IPython has turned it into `get_ipython().run_line_magic(...)`) →
    `await <undo_in_worker>.run_line('...')`: an undo may put cells back in a notebook open in a front end,
    whose answers only arrive while the cell awaits (`undo_in_worker.py`)."""
    return [_awaited(line) for line in lines]


def _awaited(line: str) -> str:
    m = _MAGIC_CALL.fullmatch(line)
    if m is None:
        return line
    try:
        name, magic_line = ast.literal_eval(f"({m.group(2)})")
    except (ValueError, SyntaxError, TypeError):
        return line
    if name != "architect" or not isinstance(magic_line, str):
        return line
    if magic_line.split()[:1] == ["build"]:  # a build is a run: awaited as a %%architect cell is
        return (
            f"{m.group(1)}await __import__('architect_nb.notebook.runner', fromlist=['build_line'])"
            f".build_line({magic_line!r}){m.group(3)}"
        )
    if magic_line.split()[:1] not in (["undo"], ["revert"]):
        return line
    return (
        f"{m.group(1)}await __import__('architect_nb.notebook.undo_in_worker', fromlist=['run_line'])"
        f".run_line({magic_line!r}){m.group(3)}"
    )


def architect(line: str) -> Any:
    """%architect status | tools | config [key=value ...] | model M | mode MODE | history | undo [RUN] |
    transcript [RUN]"""
    from architect_nb.config import ConfigError
    from architect_nb.notebook.output.render import MessageOutput
    from architect_nb.notebook.state import get_session

    try:
        return get_session().handle(parse_line(line))
    except (UsageError, ConfigError) as exc:
        return MessageOutput(str(exc))


def load(ipython: Any) -> None:
    from architect_nb.notebook.context.execution_log import install as keep_execution_log
    from architect_nb.notebook.kernel.live_documents import install
    from architect_nb.notebook.questions.front_ends import install as watch_front_ends
    from architect_nb.notebook.warm_up import start_warm_up

    if transform_cell not in ipython.input_transformers_cleanup:
        ipython.input_transformers_cleanup.append(transform_cell)
    if await_undo not in ipython.input_transformers_post:
        ipython.input_transformers_post.append(await_undo)
    ipython.register_magic_function(architect, "line", "architect")
    watch_front_ends(ipython)  # first: the front ends that answer the channel's hello show themselves
    install(ipython)  # front ends with the labextension connect: notebooks open there are changed there
    keep_execution_log(ipython)  # which cell ran as each [n], and its error: for the notebook outline
    start_warm_up()


def unload(ipython: Any) -> None:
    from architect_nb.notebook.context.execution_log import uninstall as drop_execution_log
    from architect_nb.notebook.kernel.live_documents import uninstall
    from architect_nb.notebook.questions.front_ends import uninstall as stop_watching_front_ends

    while transform_cell in ipython.input_transformers_cleanup:
        ipython.input_transformers_cleanup.remove(transform_cell)
    while await_undo in ipython.input_transformers_post:
        ipython.input_transformers_post.remove(await_undo)
    ipython.magics_manager.magics["line"].pop("architect", None)
    uninstall()
    stop_watching_front_ends(ipython)
    drop_execution_log(ipython)

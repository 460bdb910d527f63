"""Loading the extension: the `%architect` line magic and the `%%architect` input transformer.

A registered cell magic runs synchronously, so it could never let the kernel handle a click while it waits.
Instead, a cleanup transformer rewrites a `%%architect` cell into one top-level-await statement; IPython sees
the `await` in the transformed cell and runs it as an async cell (design note `notebook-approvals.md`).
Loading imports neither ipywidgets nor the agent; it starts a background thread that imports the model client
and the agent (`warm_up`), so the first cell finds them loaded.
"""

from __future__ import annotations

from typing import Any

from architect_nb.notebook.magics import UsageError, parse_line

__all__ = ["load", "transform_cell", "unload"]

_PREFIX = "%%architect"


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


def architect(line: str) -> Any:
    """%architect status | tools | config [key=value ...] | model M | mode MODE | history | undo [RUN] |
    transcript [RUN]"""
    from architect_nb.config import ConfigError
    from architect_nb.notebook.render import MessageOutput
    from architect_nb.notebook.state import get_session

    try:
        return get_session().handle(parse_line(line))
    except (UsageError, ConfigError) as exc:
        return MessageOutput(str(exc))


def load(ipython: Any) -> None:
    if transform_cell not in ipython.input_transformers_cleanup:
        ipython.input_transformers_cleanup.append(transform_cell)
    ipython.register_magic_function(architect, "line", "architect")
    from architect_nb.notebook.warm_up import start_warm_up

    start_warm_up()


def unload(ipython: Any) -> None:
    while transform_cell in ipython.input_transformers_cleanup:
        ipython.input_transformers_cleanup.remove(transform_cell)
    ipython.magics_manager.magics["line"].pop("architect", None)

"""Run a notebook headless with nbclient, answering approvals as a person would, and print it for a terminal.

A plain headless run (nbclient, papermill, `jupyter execute`) has nobody to click: an approval is denied after
`notebook.approval_timeout`. `run_notebook`'s client plays the one part of JupyterLab that such a run lacks:
when an approval prompt is shown, it clicks one of its buttons (Approve by default), sending the very comm
message JupyterLab sends. `make demo` and `tests/kernel/test_notebooks_run.py` run the example
notebooks with it.

`print_notebook` writes the cells and their outputs as a readable transcript. A run's output, the
`application/vnd.architect-nb.run+json` bundle, is replayed through `ConsolePrinter`: steps, diffs, approvals,
hook results and cost.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

from architect_nb.agent import events as ev
from architect_nb.agent.console import ConsolePrinter
from architect_nb.checks.side import PATIENT_OUTPUTS  # the notebook check's wait for a cell's outputs

__all__ = [
    "PATIENT_OUTPUTS",
    "RUN_MIME",
    "TranscriptPrinter",
    "kernel_environment",
    "print_cell",
    "replay",
    "run_notebook",
]


RUN_MIME = ev.RUN_MIME_TYPE
_EVENT_TYPES: dict[str, type[ev.AgentEvent]] = {
    cls.kind: cls
    for cls in (
        ev.RunStarted,
        ev.StepStarted,
        ev.TextDelta,
        ev.ToolCallRequested,
        ev.ConfirmationAsked,
        ev.ConfirmationAnswered,
        ev.ToolResultEvent,
        ev.CostUpdate,
        ev.RunWarning,
        ev.RunFinished,
    )
}
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# The same escapes after `show()` made them visible: ipykernel sets FORCE_COLOR=1, so commands run from a
# kernel (pytest) colour their output; the terminal transcript drops the colour codes.
_SHOWN_ANSI = re.compile(r"\\x1b\[[0-9;]*m")
_WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def _client_class() -> type[Any]:
    from nbclient import NotebookClient

    class _ApprovingClient(NotebookClient):
        """An nbclient `NotebookClient` that clicks `answer` ('Approve', 'Deny' or 'Abort run') on prompts."""

        def __init__(self, nb: Any, *, answer: str = "Approve", **kwargs: Any) -> None:
            super().__init__(nb, **kwargs)
            self.answer = answer
            self.clicks: list[str] = []
            self._states: dict[str, dict[str, Any]] = {}
            self._clicked: set[str] = set()

        def handle_comm_msg(self, outs: list[Any], msg: dict[str, Any], cell_index: int) -> None:
            super().handle_comm_msg(outs, msg, cell_index)
            content = msg["content"]
            state = content.get("data", {}).get("state")
            if isinstance(state, dict):
                self._states.setdefault(content["comm_id"], {}).update(state)
                self._click_shown_buttons()

        def _click_shown_buttons(self) -> None:
            # A person sees a button once a container holds it; so does this front end.
            shown = {ref for s in self._states.values() for ref in s.get("children", ()) or ()}
            for comm_id, state in self._states.items():
                if (
                    comm_id not in self._clicked
                    and state.get("_model_name") == "ButtonModel"
                    and state.get("description") == self.answer
                    and not state.get("disabled")
                    and f"IPY_MODEL_{comm_id}" in shown
                ):
                    self._clicked.add(comm_id)
                    self.clicks.append(self.answer)
                    data = {"method": "custom", "content": {"event": "click"}}
                    kc = self.kc
                    assert kc is not None  # comm messages only arrive from a started kernel client
                    kc.shell_channel.send(kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data}))

    return _ApprovingClient


def kernel_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This interpreter's environment with its bin folder first on PATH, as in an activated venv.

    The kernel, the commands the agent runs (`python -m pytest`) and hooks (`ruff`) then all find the same
    interpreter and packages. The background warm-up after `%load_ext` is off unless the environment says
    otherwise: it hides LiteLLM's import while a person reads, and a headless run has nobody reading, so it
    only competes with the first cell (and a scripted model never needs LiteLLM).
    """
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    env.setdefault("ARCHITECT_WARMUP", "0")
    env.update(extra or {})
    return env


def run_notebook(
    path: Path,
    *,
    cwd: Path | None = None,
    answer: str | None = "Approve",
    timeout: float = 180,
    env: Mapping[str, str] | None = None,
    on_cell: Callable[[Any, int], None] | None = None,
) -> tuple[Any, list[str]]:
    """Execute the notebook at `path` in a fresh kernel; returns the executed notebook and the clicks made.

    Args:
        path: The `.ipynb` file.
        cwd: The kernel's working folder (default: the notebook's folder).
        answer: The button to click on every approval prompt; None clicks nothing (a plain headless run).
        timeout: Seconds one cell may take.
        env: Extra environment variables for the kernel.
        on_cell: Called with each executed cell and its index, as soon as it finishes.
    """
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
    folder = str(cwd or path.parent)
    kwargs: dict[str, Any] = {
        "timeout": timeout,
        "kernel_name": "python3",
        "resources": {"metadata": {"path": folder}},
        "store_widget_state": False,
        **PATIENT_OUTPUTS,
        "extra_arguments": ["--IPKernelApp.log_level=ERROR"],  # no start-up chatter in the transcript
    }
    if on_cell is not None:
        reported = [-1]  # nbclient reports code cells only; the markdown before each goes first

        def report(cell: Any, cell_index: int, **_: Any) -> None:
            for index in range(reported[0] + 1, cell_index):
                on_cell(nb.cells[index], index)
            on_cell(cell, cell_index)
            reported[0] = cell_index

        kwargs["on_cell_executed"] = report
    client = (
        _client_class()(nb, answer=answer, **kwargs) if answer is not None else NotebookClient(nb, **kwargs)
    )
    # asyncio.run closes its event loop; nbclient's execute() would leave one open (a ResourceWarning at GC).
    asyncio.run(client.async_execute(env=kernel_environment(env)))
    return nb, list(getattr(client, "clicks", []))


class TranscriptPrinter(ConsolePrinter):
    """`ConsolePrinter`, plus a line per hook that ran after a tool call, without colour codes in outputs."""

    def _write(self, text: str) -> None:
        super()._write(_SHOWN_ANSI.sub("", text))

    def _on_tool_result(self, e: ev.ToolResultEvent) -> None:
        super()._on_tool_result(e)
        for hook in e.hooks:
            verdict = "passed" if hook.get("passed") else f"FAILED ({hook.get('warning', '')})"
            ms = float(hook.get("duration_s") or 0) * 1000
            self._write(f"    hook {hook.get('name')}: {verdict} in {ms:.0f} ms\n")


def replay(payload: Mapping[str, Any], printer: ConsolePrinter) -> None:
    """Feed a saved run's events (the run mime bundle's `events`) to `printer`."""
    for data in payload.get("events", ()):
        cls = _EVENT_TYPES.get(str(data.get("kind")))
        if cls is not None:
            printer(cls(**{k: v for k, v in data.items() if k != "kind"}))


def print_cell(cell: Any, index: int, stream: IO[str], *, color: bool = False) -> None:
    """Write one executed cell: markdown headings, the code, and each output as plain text."""
    source = str(cell.get("source", ""))
    if cell.get("cell_type") == "markdown":
        for line in source.splitlines():
            if line.startswith("#"):
                stream.write(f"\n{line}\n")
        return
    if cell.get("cell_type") != "code":
        return
    label = f"In [{cell.get('execution_count') or index}]: "
    stream.write("\n" + label + source.replace("\n", "\n" + " " * len(label)) + "\n")
    for output in cell.get("outputs", ()):
        kind = output.get("output_type")
        if kind == "stream":
            stream.write(str(output.get("text", "")))
        elif kind == "error":
            stream.write(_ANSI.sub("", "\n".join(output.get("traceback", ()))) + "\n")
        elif kind in ("display_data", "execute_result"):
            data = output.get("data", {})
            if RUN_MIME in data:
                replay(data[RUN_MIME], TranscriptPrinter(stream, color=color))
            elif _WIDGET_MIME in data:
                continue  # an approval prompt: nothing to read in a terminal
            elif "text/plain" in data:
                stream.write(str(data["text/plain"]) + "\n")
    stream.flush()

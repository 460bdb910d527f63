"""One side of a check: the notebook run top to bottom in a fresh kernel, in a process of its own.

`python -m architect_nb.checks.side REQUEST.json RESULT.json` runs the notebook the request names with
nbclient, in the request's folder, and writes each cell's outputs (plus the `compare:` variables') as JSON.
A process per side lets both sides run at once, and lets the caller end a side that overruns the notebook's
timeout with everything it started (`sides.run_sides`). Inside, each cell gets the cell timeout or what is
left of the notebook's, whichever is shorter, so a side reports the cell that ran too long before anything
has to be killed. Errors inside cells are outputs, compared like the others; a cell past its timeout, a dead
kernel or a missing kernel spec ends the side with a `failure`.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from architect_nb.checks.kernel_helper import SETUP_CODE, compare_code

__all__ = ["PATIENT_OUTPUTS", "run_side"]

#: nbclient waits 4 s after a cell's reply for the cell's last outputs, then goes on without them and says
#: nothing: on a loaded machine a cell's printout went missing so. Wait longer, and fail the cell if they
#: never come (a timeout) rather than return a notebook without them.
PATIENT_OUTPUTS: dict[str, Any] = {"iopub_timeout": 60, "raise_on_iopub_timeout": True}


def run_side(request: dict[str, Any]) -> dict[str, Any]:
    """Run the request's notebook; the result holds `cells`, `compared`, `failure` and `seconds`."""
    started = time.monotonic()
    result: dict[str, Any] = {"cells": [], "compared": [], "failure": None}
    try:
        asyncio.run(_run(request, result, started))
    except Exception as exc:  # the side reports every failure; its caller never parses a traceback
        result["failure"] = result["failure"] or _describe(exc, request)
    result["seconds"] = time.monotonic() - started
    return result


async def _run(request: dict[str, Any], result: dict[str, Any], started: float) -> None:
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    notebook = nbformat.read(request["notebook"], as_version=4)  # type: ignore[no-untyped-call]
    kernel_name = (
        request.get("kernel_name") or notebook.metadata.get("kernelspec", {}).get("name") or "python3"
    )
    client = NotebookClient(
        notebook,
        timeout=request["cell_timeout"],
        kernel_name=kernel_name,
        allow_errors=True,
        resources={"metadata": {"path": request["cwd"]}},
        **PATIENT_OUTPUTS,  # a dropped output would read as a difference
    )
    deadline = started + request["notebook_timeout"]
    # The helper cells go in the notebook itself (nbclient writes each executed cell back into it by index).
    cells = list(notebook.cells)
    notebook.cells = [nbformat.v4.new_code_cell(SETUP_CODE), *cells]  # type: ignore[no-untyped-call]
    if request.get("compare"):
        end = nbformat.v4.new_code_cell(compare_code(request["compare"]))  # type: ignore[no-untyped-call]
        notebook.cells.append(end)
    async with client.async_setup_kernel():
        await client.async_execute_cell(notebook.cells[0], 0, store_history=False)
        for index, cell in enumerate(cells):
            if cell.cell_type != "code":
                continue
            left = deadline - time.monotonic()
            client.timeout = max(1, int(min(request["cell_timeout"], left)))
            try:
                await client.async_execute_cell(cell, index + 1)
            except CellTimeoutError:
                result["cells"].append(_record(index, cell))
                which = "the notebook's" if left < request["cell_timeout"] else "its"
                limit = request["notebook_timeout"] if which == "the notebook's" else request["cell_timeout"]
                result["failure"] = (
                    f"cell {index + 1} ({cell.get('id')}) ran past {which} timeout ({limit:g}s)"
                )
                return
            except DeadKernelError:
                result["cells"].append(_record(index, cell))
                result["failure"] = f"the kernel died while running cell {index + 1} ({cell.get('id')})"
                return
            result["cells"].append(_record(index, cell))
        if request.get("compare"):
            client.timeout = max(1, int(min(request["cell_timeout"], deadline - time.monotonic())))
            end = notebook.cells[-1]
            await client.async_execute_cell(end, len(notebook.cells) - 1, store_history=False)
            result["compared"] = list(end.outputs)


def _record(index: int, cell: Any) -> dict[str, Any]:
    metadata = cell.get("metadata", {})
    marked = bool(metadata.get("architect", {}).get("unstable")) or "unstable" in metadata.get("tags", [])
    return {
        "index": index,
        "id": cell.get("id"),
        "outputs": list(cell.get("outputs", [])),
        "unstable": marked,
    }


def _describe(exc: BaseException, request: dict[str, Any]) -> str:
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    if isinstance(exc, NoSuchKernel):
        known = ", ".join(sorted(KernelSpecManager().find_kernel_specs())) or "none"
        return f"no kernel spec named {exc.name!r} (installed: {known}); give one with kernel_name"
    return f"{type(exc).__name__}: {exc}".strip()


#: jsonschema (under nbformat) imports rfc3987-syntax when it is installed, as JupyterLab's jupyter-events has
#: it installed, and that module builds an Earley grammar as it is imported: about 1.5 s of the side's 2.9 s
#: of CPU, for the `iri` format check, which notebook validation never makes (python-jsonschema/jsonschema
#: #1428). Marked as absent in the side's own process only, never in a person's kernel: jsonschema then goes
#: without that one check.
UNUSED_SLOW_IMPORTS = ("rfc3987_syntax",)


def main(argv: list[str]) -> int:
    for name in UNUSED_SLOW_IMPORTS:
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]  # None: "import fails", by design
    request = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    result = run_side(request)
    Path(argv[1]).write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

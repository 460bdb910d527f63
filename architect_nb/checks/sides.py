"""Running the sides of a check at once, each notebook in its own process and fresh kernel (`side.py`).

A side that outlives the notebook's timeout (plus a grace for starting and stopping its kernel) is killed with
its process group; its kernel, in a session of its own, sees its parent go and exits (ipykernel's parent
poller). Either way the side comes back with a `failure` that says what happened: never a hang.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from architect_nb.process_group import process_group, wait_or_kill

__all__ = ["SideRequest", "run_sides"]

#: Seconds a side may take beyond the notebook's timeout, to start its kernel and shut it down.
_GRACE = 30.0


@dataclass(frozen=True, slots=True, kw_only=True)
class SideRequest:
    """One side: the notebook file to run and the folder it runs in."""

    notebook: Path
    cwd: Path
    kernel_name: str | None
    cell_timeout: float
    notebook_timeout: float
    compare: tuple[str, ...] = ()


def run_sides(requests: list[SideRequest]) -> list[dict[str, Any]]:
    """Each request's result (`side.run_side`), all of them run in parallel."""
    results: list[dict[str, Any]] = [{} for _ in requests]

    def one(i: int) -> None:
        try:
            results[i] = _run_one(requests[i])
        except Exception as exc:  # a side that could not even start reports it, like any other failure
            results[i] = _failed(f"the notebook runner could not start ({type(exc).__name__}: {exc})")

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(len(requests))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def _run_one(request: SideRequest) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="architect-side-") as folder:
        asked, answer = Path(folder) / "request.json", Path(folder) / "result.json"
        asked.write_text(
            json.dumps(
                {
                    "notebook": str(request.notebook),
                    "cwd": str(request.cwd),
                    "kernel_name": request.kernel_name,
                    "cell_timeout": request.cell_timeout,
                    "notebook_timeout": request.notebook_timeout,
                    "compare": list(request.compare),
                }
            ),
            encoding="utf-8",
        )
        log = Path(folder) / "side.log"
        with log.open("wb") as out:
            command = [sys.executable, "-m", "architect_nb.checks.side", str(asked), str(answer)]
            # Not in the notebook's folder: a module there (`json.py`) must not shadow the runner's imports;
            # the kernel itself starts in the notebook's folder (nbclient's `resources`).
            with process_group(command, cwd=folder, stdin=subprocess.DEVNULL, stdout=out, stderr=out) as p:
                code = wait_or_kill(p, request.notebook_timeout + _GRACE)
        if code is None:
            limit = f"{request.notebook_timeout:g}s"
            return _failed(f"the notebook ran past its timeout ({limit}) and its kernel was stopped")
        try:
            result: dict[str, Any] = json.loads(answer.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            said = log.read_text(encoding="utf-8", errors="replace").strip()[-1500:]
            return _failed(f"the notebook runner stopped with exit code {code} before reporting: {said}")
        return result


def _failed(why: str) -> dict[str, Any]:
    return {"cells": [], "compared": [], "failure": why, "seconds": 0.0}

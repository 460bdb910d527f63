"""An `%architect undo` or `revert` line, awaited: it runs in a worker thread while the cell awaits it.

Undoing a run that changed a notebook open in JupyterLab or Notebook 7 puts its cells back through the front
end, whose answers arrive as comm messages; they are only handled while the cell awaits (`pump.py`), never
while a synchronous magic blocks the kernel. `extension.await_undo` turns such a line into `await
run_line('undo ...')`, which shows the same report the magic would.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading
from typing import Any

__all__ = ["run_line"]


async def run_line(line: str) -> Any:
    """Run `%architect LINE` in a worker thread while the cell awaits it; returns what the magic returns."""
    from IPython import get_ipython

    from architect_nb.notebook.extension import architect
    from architect_nb.notebook.pump import pump_until

    future: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def work() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(architect(line))
        except BaseException as exc:  # shown in the cell, never lost in a thread
            future.set_exception(exc)

    context = contextvars.copy_context()
    threading.Thread(target=context.run, args=(work,), name="architect-undo", daemon=True).start()
    await pump_until(asyncio.wrap_future(future), get_ipython())
    return future.result()

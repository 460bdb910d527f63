"""How a `%%architect` cell waits for its worker while the kernel still handles button clicks.

Measured (see the design note `notebook-approvals.md`):

- ipykernel >= 7.4 dispatches comm messages concurrently while an async cell awaits, so the cell just wakes
  every 0.1 s (`asyncio.wait` with a timeout) — the wake-ups also let an interrupt's `CancelledError` in.
- ipykernel 6.x and 7.0–7.3 need jupyter-ui-poll's async mode, which handles the kernel's messages itself
  and stashes execute requests until the cell ends. Never on >= 7.4: it breaks message handling there.

The branch is chosen from `ipykernel.__version__`, not by probing.
"""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from architect_nb.notebook.kernel.kernel_session import MainThreadCalls

__all__ = ["abort_stashed_requests", "kernel_of", "native_concurrent_comms", "pump_until"]

_TICK = 0.1
_POLL_TICK = 0.05


def _version(text: str) -> tuple[int, int]:
    m = re.match(r"(\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def native_concurrent_comms() -> bool:
    """True on ipykernel >= 7.4, where comm messages are handled while an async cell awaits."""
    import ipykernel

    return _version(str(getattr(ipykernel, "__version__", "0"))) >= (7, 4)


def kernel_of(shell: Any) -> Any:
    """The ipykernel kernel behind `shell`, or None (a terminal IPython, an in-process test shell)."""
    kernel = getattr(shell, "kernel", None)
    return kernel if kernel is not None and hasattr(kernel, "shell_handlers") else None


async def pump_until(future: asyncio.Future[Any], shell: Any, calls: MainThreadCalls | None = None) -> None:
    """Wait for `future`, letting the kernel handle widget messages meanwhile, and running on this (the main)
    thread the work the agent hands over through `calls`. Cancellation propagates; a kernel interrupt that
    stopped such work is raised here as `KeyboardInterrupt`, so the cell stops as an interrupted cell does."""
    wake = asyncio.Event()
    if calls is not None:
        loop = asyncio.get_running_loop()

        def wake_up() -> None:
            loop.call_soon_threadsafe(wake.set)

        calls.bind(wake_up)

    async def wait(seconds: float) -> None:
        waiter = asyncio.ensure_future(wake.wait())
        try:
            await asyncio.wait({future, waiter}, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
        wake.clear()
        if calls is not None:
            calls.run_pending()
            if calls.interrupted:
                raise KeyboardInterrupt

    if kernel_of(shell) is None or native_concurrent_comms():
        while not future.done():
            await wait(_TICK)
        return
    from jupyter_ui_poll import ui_events

    async with ui_events() as poll:
        while not future.done():
            await poll(20)
            await wait(_POLL_TICK)


def abort_stashed_requests(shell: Any) -> int:
    """Reply `aborted` to the execute requests jupyter-ui-poll stashed (old kernels), as Jupyter does after
    an interrupt; otherwise they would be replayed and run. Returns how many."""
    kernel = kernel_of(shell)
    if kernel is None or native_concurrent_comms():
        return 0
    try:
        from jupyter_ui_poll._poll import KernelWrapper
    except ImportError:
        return 0
    wrapper = KernelWrapper._current
    if wrapper is None:
        return 0
    events = list(wrapper._events)
    wrapper._events.clear()
    for stream, ident, parent in events:
        kernel._send_abort_reply(stream, parent, ident)
    return len(events)

"""Whether a front end that can show widgets has shown itself to this kernel: the presence check of `asking`.

A front end that shows widgets talks to the kernel over comms; a headless client never does. Measured with
JupyterLab 4.6 and Notebook 7.6 (jupyterlab_widgets 3.0), nbclient 0.11 and papermill 2.7 (see also
docs/limits.md, "Headless runs deny"):

- JupyterLab's and Notebook 7's widget manager opens a comm on `jupyter.widget.control` as it connects to
  the kernel, to ask for the widgets' state: at the kernel's start, so usually before ipywidgets (or this
  extension) is imported, and again on each reconnection (a page reload);
- the labextension opens its `architect-nb-documents` comm when it connects, and again after `%load_ext`'s
  hello (`live_documents`);
- an ipywidgets front end sends a widget's new `_view_count` as it shows it, when the widget counts its
  views (`asking` makes every question count them);
- nbclient and papermill send no comm message at all.

`install` wraps the kernel's `comm_open` and `comm_msg` handlers: each message is noted, then handled by the
comm manager exactly as before, so ipywidgets receives what it always did. (Registering a comm target for
`jupyter.widget.control` instead would take that target from ipywidgets.)
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any

from architect_nb.notebook.pump import kernel_of

__all__ = ["FrontEndWatch", "current_watch", "install", "uninstall"]

_OBSERVED = ("comm_open", "comm_msg")


class FrontEndWatch:
    """What front ends have said over comms since the extension loaded. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._heard: dict[str, float] = {}  # what was heard (a comm's target, or "comm_msg") → when, last

    def hear(self, what: str) -> None:
        """Note that a front end sent `what` (called for each comm message the kernel receives)."""
        with self._lock:
            self._heard[what] = time.monotonic()

    @property
    def seen(self) -> bool:
        """True once any front end has spoken over a comm: one that can show widgets is (or was) there."""
        with self._lock:
            return bool(self._heard)

    @property
    def heard(self) -> dict[str, float]:
        """A copy of what was heard, and when last (`time.monotonic`)."""
        with self._lock:
            return dict(self._heard)


class _Observed:
    """A kernel's comm handler, called as before, after the watch has noted the message."""

    def __init__(self, kind: str, handler: Callable[..., Any], watch: FrontEndWatch) -> None:
        self.kind = kind
        self.handler = handler
        self.watch = watch

    def __call__(self, stream: Any, ident: Any, msg: Any) -> Any:
        with contextlib.suppress(Exception):  # noting must never cost the message its handling
            target = msg["content"].get("target_name") if self.kind == "comm_open" else None
            self.watch.hear(f"comm_open {target}" if target else self.kind)
        return self.handler(stream, ident, msg)


_watch: FrontEndWatch | None = None


def install(shell: Any) -> FrontEndWatch | None:
    """Watch this kernel's comm messages (once per kernel). None without a kernel (a terminal IPython)."""
    global _watch  # noqa: PLW0603 - one watch per kernel process
    kernel = kernel_of(shell)
    if kernel is None:
        return None
    if _watch is None:
        _watch = FrontEndWatch()
    for kind in _OBSERVED:
        handler = kernel.shell_handlers.get(kind)
        if handler is not None and not isinstance(handler, _Observed):
            kernel.shell_handlers[kind] = _Observed(kind, handler, _watch)
    return _watch


def uninstall(shell: Any) -> None:
    """Give the kernel its own handlers back."""
    global _watch  # noqa: PLW0603
    kernel = kernel_of(shell)
    if kernel is not None:
        for kind in _OBSERVED:
            handler = kernel.shell_handlers.get(kind)
            if isinstance(handler, _Observed):
                kernel.shell_handlers[kind] = handler.handler
    _watch = None


def current_watch() -> FrontEndWatch | None:
    return _watch

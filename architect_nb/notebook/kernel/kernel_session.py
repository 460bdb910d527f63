"""`IPythonKernel`: the kernel tools' session in a notebook, running their work on the kernel's main thread.

The agent runs in a worker thread while the `%%architect` cell awaits it. Code the agent runs in the kernel
must run where a cell's code runs, on the main thread, so that the kernel's interrupt (SIGINT) stops it as
it stops a cell, and so that libraries that expect the main thread (signals, some GUI backends) behave. The
worker hands such work to `MainThreadCalls`; the cell's pump runs it between its waits (see `pump.py`).
Displays are captured through IPython's display publisher, values formatted by its display formatter, and a
proposed cell goes to the front end as a `set_next_input` payload (JupyterLab, Notebook 7 and VS Code add it
below the running cell when the cell ends). run_cell's cells run on the main thread too (`cell_execution`),
in the notebook the running cell is in, found once through the document channel (`live_documents`).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import queue
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from architect_nb.tools.kernel.namespace import ScratchNamespace
from architect_nb.tools.kernel.session import NO_FRONT_END, CellExecution, OwnNotebook

if TYPE_CHECKING:
    from architect_nb.notebook.kernel.cell_execution import CellRunner
    from architect_nb.tools.notebook_files.backend import DocumentBackend

__all__ = ["IPythonKernel", "MainThreadCalls"]

T = TypeVar("T")
_MIMES = ("text/plain", "image/png")


class MainThreadCalls:
    """Work handed from the agent's worker thread to the kernel's main thread. Thread-safe."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[tuple[Callable[[], Any], concurrent.futures.Future[Any]]] = (
            queue.SimpleQueue()
        )
        self._wake: Callable[[], None] = lambda: None
        self._closed = threading.Event()
        self.interrupted = False  # the person interrupted work running on the main thread

    def bind(self, wake: Callable[[], None]) -> None:
        """`wake()` is called (from the worker) whenever work is waiting, so the pump need not poll."""
        self._wake = wake

    def submit(self, work: Callable[[], T]) -> T:
        """Run `work` on the main thread and return its result (at once, when called on the main thread)."""
        if threading.current_thread() is threading.main_thread():
            return work()
        if self._closed.is_set():
            raise RuntimeError("the %%architect cell has ended, so nothing more runs in the kernel")
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._queue.put((work, future))
        self._wake()
        if self._closed.is_set():  # closed while queueing: make sure nobody waits forever
            self._fail_pending()
        return future.result()

    def run_pending(self) -> None:
        """Run the waiting work, in order, on the calling (main) thread."""
        while True:
            try:
                work, future = self._queue.get_nowait()
            except queue.Empty:
                return
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = work()
            except BaseException as exc:  # the worker gets it, as the work's own outcome
                future.set_exception(exc)
                continue
            if getattr(result, "interrupted", False) is True:  # run_python's Outcome, run_cell's execution
                self.interrupted = True
            future.set_result(result)

    def close(self) -> None:
        """The cell is ending: nothing more runs, and work still waiting fails instead of hanging."""
        self._closed.set()
        self._fail_pending()

    def _fail_pending(self) -> None:
        while True:
            try:
                _work, future = self._queue.get_nowait()
            except queue.Empty:
                return
            if future.set_running_or_notify_cancel():
                future.set_exception(RuntimeError("the %%architect cell ended before this could run"))


class IPythonKernel:
    """The live IPython kernel as the kernel tools see it, for one `%%architect` run."""

    def __init__(self, shell: Any, calls: MainThreadCalls, cell_id: str | None = None) -> None:
        self.shell = shell
        self.calls = calls
        self.cell_id = cell_id  # the running %%architect cell's id, as the front end sent it
        self._scratch = ScratchNamespace(shell.user_ns)
        self._proposed: list[str] = []
        self._own: OwnNotebook | str | None = None
        self._lock = threading.Lock()
        self._cells: CellRunner | None = None

    @property
    def namespace(self) -> dict[str, Any]:
        namespace: dict[str, Any] = self.shell.user_ns
        return namespace

    @property
    def hidden(self) -> Mapping[str, Any]:
        return getattr(self.shell, "user_ns_hidden", {}) or {}

    @property
    def scratch(self) -> ScratchNamespace:
        return self._scratch

    def call(self, work: Callable[[], T]) -> T:
        return self.calls.submit(work)

    @contextlib.contextmanager
    def displays(self) -> Iterator[list[Mapping[str, Any]]]:
        from IPython.core.displaypub import CapturingDisplayPublisher

        shown: list[Mapping[str, Any]] = []
        saved = self.shell.display_pub
        capture = CapturingDisplayPublisher()  # type: ignore[no-untyped-call]
        self.shell.display_pub = capture
        try:
            yield shown
        finally:
            self.shell.display_pub = saved
            # IPython's capturing publisher keeps each display as a dict: {"data": bundle, "metadata": ...}.
            shown.extend(
                {k: v for k, v in (output.get("data") or {}).items() if k in _MIMES}
                or {"text/plain": "(rich output)"}
                for output in capture.outputs
            )

    def format_value(self, value: Any) -> Mapping[str, Any]:
        data, _metadata = self.shell.display_formatter.format(value)
        return {k: v for k, v in data.items() if k in _MIMES} or {"text/plain": repr(value)}

    @property
    def documents(self) -> DocumentBackend | None:
        """The extension's document channel (`live_documents`): notebooks open in a front end."""
        from architect_nb.notebook.kernel.live_documents import current_channel

        return current_channel()

    def bind_notebook(self, own: OwnNotebook | str) -> None:
        """The notebook this run is in, as the notebook context found it (so run_cell need not ask again)."""
        with self._lock:
            self._own = own

    def own_notebook(self) -> OwnNotebook | str:
        with self._lock:
            if self._own is not None:
                return self._own
        own = self._locate()
        self.bind_notebook(own)
        return own

    def _locate(self) -> OwnNotebook | str:
        from architect_nb.notebook.kernel.live_documents import current_channel

        channel = current_channel()
        if channel is None or self.cell_id is None:
            return f"{NO_FRONT_END} (no front end with the extension is connected to this kernel)"
        try:
            located = channel.locate(self.cell_id)
        except Exception as exc:  # a front end that failed to answer
            return f"{NO_FRONT_END}: the front end could not be asked ({str(exc)[:200]})"
        if located is None:
            return f"{NO_FRONT_END} (no front end has the notebook of this cell open)"
        live, file = located
        return OwnNotebook(
            document=live, path=str(file or live.path or "the notebook"), running_cell=self.cell_id, file=file
        )

    def run_cell(self, source: str, cell_id: str | None) -> CellExecution:
        from architect_nb.notebook.kernel.cell_execution import CellRunner

        with self._lock:
            if self._cells is None:
                self._cells = CellRunner(self.shell)
            cells = self._cells
        return self.calls.submit(lambda: cells.run(source, cell_id))

    def finish(self, raw_cell: str) -> None:
        """The `%%architect` cell is ending (main thread): its count follows the cells run_cell ran."""
        if self._cells is not None:
            self._cells.finish(raw_cell)

    def propose_cell(self, code: str) -> bool:
        # A front end adds one cell per execution, from the first set_next_input payload: several proposals
        # in one run share that cell, in order.
        self._proposed.append(code.rstrip("\n"))
        self.shell.set_next_input("\n\n".join(self._proposed), replace=False)
        return True

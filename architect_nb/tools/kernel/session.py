"""`KernelSession`: what the kernel tools need from the live kernel, and `PlainKernel`, a namespace alone.

The tools never import IPython. A session hands them the person's namespace and runs their work where the
person's code runs: `architect_nb.notebook.kernel.kernel_session.IPythonKernel` does that on the kernel's main
thread (so a kernel interrupt stops it as it stops a cell) and captures rich display output; `PlainKernel`,
for the Python API and tests, runs on the calling thread.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from architect_nb.tools.kernel.namespace import ScratchNamespace
from architect_nb.tools.notebook_files.backend import OwnNotebook  # the kernel knows its notebook, not back

if TYPE_CHECKING:
    from architect_nb.tools.notebook_files.backend import DocumentBackend

__all__ = ["CellExecution", "KernelSession", "OwnNotebook", "PlainKernel"]

T = TypeVar("T")
#: Why run_cell cannot run anything where no front end has the notebook open.
NO_FRONT_END = (
    "run_cell runs cells of the notebook open in JupyterLab or Notebook 7 (with architect-nb's extension), "
    "and none has this run's notebook open"
)


@dataclass(slots=True, kw_only=True)
class CellExecution:
    """A cell run in the person's namespace: its outputs (nbformat), the execution count it ran as, and
    whether it raised or was interrupted (the kernel's stop button)."""

    outputs: list[dict[str, Any]] = field(default_factory=list)
    execution_count: int | None = None
    error: str | None = None  # "KeyError: 'x'"
    interrupted: bool = False


class KernelSession(Protocol):
    """The live kernel as the kernel tools see it."""

    @property
    def namespace(self) -> dict[str, Any]:
        """The person's variables (IPython's `user_ns`)."""
        ...

    @property
    def hidden(self) -> Mapping[str, Any]:
        """Names the shell put in the namespace itself (IPython's `user_ns_hidden`)."""
        ...

    @property
    def scratch(self) -> ScratchNamespace:
        """The layer the agent's code assigns into, kept for the rest of the run."""
        ...

    def call(self, work: Callable[[], T]) -> T:
        """Run `work` where the person's code runs, and return what it returns."""
        ...

    def displays(self) -> contextlib.AbstractContextManager[list[Mapping[str, Any]]]:
        """Capture what `display()` publishes while the context is open, as mime bundles."""
        ...

    def format_value(self, value: Any) -> Mapping[str, Any]:
        """A value as a mime bundle (text/plain at least), as the notebook would show it."""
        ...

    def propose_cell(self, code: str) -> bool:
        """Offer `code` as a new cell below the running one. False when no front end can take it."""
        ...

    @property
    def documents(self) -> DocumentBackend | None:
        """Where notebooks open in a front end are found (the notebook tools change those there), or None."""
        ...

    def own_notebook(self) -> OwnNotebook | str:
        """The notebook this run is in, open in a front end; or why there is none (a sentence)."""
        ...

    def run_cell(self, source: str, cell_id: str | None) -> CellExecution:
        """Run `source` as the person runs a cell (history, execution count, display hooks), on the main
        thread, capturing its outputs instead of sending them to the running cell."""
        ...


class PlainKernel:
    """A kernel session over a plain dict: for the Python API, scripts and tests.

    Args:
        namespace: The variables the tools see (run_python changes them only with `kernel.write_namespace`).
    """

    def __init__(self, namespace: dict[str, Any]) -> None:
        self._namespace = namespace
        self._scratch = ScratchNamespace(namespace)
        self.proposed: list[str] = []  # what propose_cell offered; a plain session has no front end

    @property
    def namespace(self) -> dict[str, Any]:
        return self._namespace

    @property
    def hidden(self) -> Mapping[str, Any]:
        return {}

    @property
    def scratch(self) -> ScratchNamespace:
        return self._scratch

    def call(self, work: Callable[[], T]) -> T:
        return work()

    def displays(self) -> contextlib.AbstractContextManager[list[Mapping[str, Any]]]:
        return contextlib.nullcontext([])

    def format_value(self, value: Any) -> Mapping[str, Any]:
        return {"text/plain": repr(value)}

    def propose_cell(self, code: str) -> bool:
        self.proposed.append(code)
        return False

    @property
    def documents(self) -> DocumentBackend | None:
        return None

    def own_notebook(self) -> OwnNotebook | str:
        return f"{NO_FRONT_END} (this is the Python API, outside a notebook)"

    def run_cell(self, source: str, cell_id: str | None) -> CellExecution:
        return CellExecution(error="RuntimeError: no notebook front end to run a cell in")

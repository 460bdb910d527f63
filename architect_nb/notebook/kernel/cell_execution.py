"""Running a notebook cell for the agent (run_cell) as the person's own run would, inside the `%%architect`
cell that is running, with the cell's outputs captured rather than sent to that cell.

The cell goes through IPython's own `run_cell`, so it has everything a cell the person runs has: their
namespace, magics, the history (`In`, `Out`, `_`), the next execution count, and the pre/post run hooks
(autoreload, matplotlib's inline figures, the execution log). While it runs, what it prints, displays and
returns, and the traceback of what it raises, are recorded as nbformat outputs in order: the kernel's own
publishers would put them in the `%%architect` cell's output instead. A kernel interrupt stops it as it
stops a cell (SIGINT raises in the code).

Execution counts: the `%%architect` cell runs as [n] (IPython 9 moves its counter on to n+1 as a cell
starts; earlier versions as it ends, so there it is moved on before the first cell runs). The first cell
the agent runs takes [n+1], the next [n+2], and so on. When the `%%architect` cell ends, it takes the count
after them (the kernel's reply says so), and its source is stored in the history at that count too, so
`In[k]` is always what ran as [k] (`finish`).
"""

from __future__ import annotations

import contextlib
import io
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

from architect_nb.tools.kernel.session import CellExecution

__all__ = ["CellRunner"]

_STREAM_LIMIT = 1_000_000  # characters of one stream kept (the front end gets the outputs in one message)


class _Outputs:
    """The outputs of one cell, in order, as nbformat holds them."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self._clear_on_next = False

    def add(self, output: dict[str, Any]) -> None:
        if self._clear_on_next:
            self.items.clear()
            self._clear_on_next = False
        self.items.append(output)

    def stream(self, name: str, text: str) -> None:
        if not text:
            return
        last = self.items[-1] if self.items and not self._clear_on_next else None
        if last is not None and last.get("output_type") == "stream" and last.get("name") == name:
            if len(last["text"]) < _STREAM_LIMIT:
                last["text"] = (last["text"] + text)[:_STREAM_LIMIT]
            return
        self.add({"output_type": "stream", "name": name, "text": text[:_STREAM_LIMIT]})

    def clear(self, wait: bool) -> None:
        if wait:
            self._clear_on_next = True
        else:
            self.items.clear()


class _Stream(io.TextIOBase):
    def __init__(self, outputs: _Outputs, name: str) -> None:
        self._outputs = outputs
        self.name_ = name

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._outputs.stream(self.name_, str(text))
        return len(text)


def _publisher(outputs: _Outputs) -> Any:
    from IPython.core.displaypub import DisplayPublisher

    class Publisher(DisplayPublisher):
        """display() into `outputs`; an update replaces the output with that display id."""

        def __init__(self) -> None:
            super().__init__()  # type: ignore[no-untyped-call]
            self.by_id: dict[str, dict[str, Any]] = {}

        def publish(
            self,
            data: dict[str, Any],
            metadata: dict[str, Any] | None = None,
            source: Any = None,
            *,
            transient: dict[str, Any] | None = None,
            update: bool = False,
            **kwargs: Any,
        ) -> None:
            display_id = (transient or {}).get("display_id")
            output = {"output_type": "display_data", "data": dict(data), "metadata": dict(metadata or {})}
            if update and isinstance(display_id, str) and display_id in self.by_id:
                self.by_id[display_id].update(output)
                return
            if isinstance(display_id, str):
                self.by_id[display_id] = output
            outputs.add(output)

        def clear_output(self, wait: bool = False) -> None:
            outputs.clear(wait)

    return Publisher()


def _display_hook(shell: Any, outputs: _Outputs) -> Any:
    from IPython.core.displayhook import DisplayHook

    class Hook(DisplayHook):
        """The value of a cell's last expression: into `Out` and `_` as usual, and into `outputs`."""

        def start_displayhook(self) -> None:
            pass

        def write_output_prompt(self) -> None:
            pass

        def write_format_data(
            self, format_dict: dict[str, Any], md_dict: dict[str, Any] | None = None
        ) -> None:
            outputs.add(
                {
                    "output_type": "execute_result",
                    "execution_count": self.prompt_count,
                    "data": dict(format_dict),
                    "metadata": dict(md_dict or {}),
                }
            )

        def finish_displayhook(self) -> None:
            pass

    return Hook(shell=shell, cache_size=getattr(shell.displayhook, "cache_size", 1000))  # type: ignore[no-untyped-call]


@contextlib.contextmanager
def _captured(shell: Any, outputs: _Outputs, errors: list[tuple[str, str]]) -> Iterator[None]:
    def show_traceback(etype: Any, evalue: Any, stb: list[str]) -> None:
        name = getattr(etype, "__name__", str(etype))
        errors.append((name, str(evalue)))
        outputs.add({"output_type": "error", "ename": name, "evalue": str(evalue), "traceback": list(stb)})

    saved_out, saved_err, saved_hook = sys.stdout, sys.stderr, sys.displayhook
    saved_pub = shell.display_pub
    had_own = "_showtraceback" in vars(shell)
    saved_show = vars(shell).get("_showtraceback")
    sys.stdout, sys.stderr = _Stream(outputs, "stdout"), _Stream(outputs, "stderr")
    shell.display_pub = _publisher(outputs)
    sys.displayhook = _display_hook(shell, outputs)
    shell._showtraceback = show_traceback
    main = threading.current_thread() is threading.main_thread()
    old_int = signal.signal(signal.SIGINT, signal.default_int_handler) if main else None
    try:
        yield
    finally:
        if old_int is not None:
            signal.signal(signal.SIGINT, old_int)
        sys.stdout, sys.stderr, sys.displayhook = saved_out, saved_err, saved_hook
        shell.display_pub = saved_pub
        if had_own:
            shell._showtraceback = saved_show
        else:
            with contextlib.suppress(AttributeError):
                del shell._showtraceback


class CellRunner:
    """Runs the agent's cells for one `%%architect` cell (on the kernel's main thread)."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.ran = 0
        self._counted_at_start = True  # IPython moves execution_count on as a cell starts (9.x)

    def refusal(self, source: str) -> str | None:
        """Why `source` cannot run inside a running cell, or None."""
        try:
            awaits = bool(self.shell.should_run_async(source))
        except Exception:  # an odd shell: let run_cell say what is wrong
            awaits = False
        if awaits:
            return (
                "the cell uses top-level await, which cannot run while the %%architect cell itself awaits; "
                "ask the user to run it"
            )
        return None

    def run(self, source: str, cell_id: str | None) -> CellExecution:
        shell = self.shell
        if (why := self.refusal(source)) is not None:
            return CellExecution(error=f"RuntimeError: {why}")
        if self.ran == 0:
            from architect_nb.notebook.context.kernel_facts import running_count

            own = running_count(shell)
            self._counted_at_start = own is not None and shell.execution_count == own + 1
            if not self._counted_at_start:
                shell.execution_count += 1  # the %%architect cell still holds [n]: the agent's first is [n+1]
        count = shell.execution_count
        outputs = _Outputs()
        errors: list[tuple[str, str]] = []
        interrupted = False
        with _captured(shell, outputs, errors):
            try:
                result = shell.run_cell(source, store_history=True, cell_id=cell_id)
            except KeyboardInterrupt:  # between IPython's own handlers
                interrupted = True
                result = None
        self.ran += 1
        if result is not None:
            failure = result.error_in_exec or result.error_before_exec
            interrupted = interrupted or isinstance(failure, KeyboardInterrupt)
        error = f"{errors[-1][0]}: {errors[-1][1]}" if errors else None
        if interrupted and error is None:
            error = "KeyboardInterrupt"
        return CellExecution(
            outputs=outputs.items, execution_count=count, error=error, interrupted=interrupted
        )

    def finish(self, raw_cell: str) -> None:
        """The `%%architect` cell is ending: after the agent's cells, it takes the next count, and the history
        holds its source there, so `In` stays in step with the counts."""
        if self.ran == 0:
            return
        history = getattr(self.shell, "history_manager", None)
        if history is not None:
            with contextlib.suppress(Exception):
                history.store_inputs(self.shell.execution_count, raw_cell, raw_cell)
        if self._counted_at_start:  # IPython moved on as the cell started; the reply says the count before
            self.shell.execution_count += 1

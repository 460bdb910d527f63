"""Running the agent's Python: in a namespace, with its output captured, within a time bound, cleaned up.

`run_code` runs on the thread it is called on. On the main thread (a kernel's, where the session hands the
call over) the time bound is SIGALRM and a kernel interrupt (SIGINT) stops the code as it stops a cell;
elsewhere (the plain Python API) the bound is an exception raised in the thread when it next runs Python,
so code blocked in C (a long `time.sleep`) overruns it.

Nothing the code prints, displays or plots escapes: stdout and stderr go to bounded buffers, displays to the
session's capture, new matplotlib figures are rendered to PNG and closed, and new widgets are closed.
`os._exit` and friends are refused before anything runs, since they would kill the kernel.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import ctypes
import io
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from architect_nb.python_syntax import parse_module

__all__ = ["CODE_FILENAME", "CodeOutcome", "forbidden_call", "run_code"]

CODE_FILENAME = "<agent-code>"
_HEAD, _TAIL = 12_000, 4_000  # characters of a stream kept from its start and its end
_MAX_FIGURES = 4
# Calls that end the process (the kernel) outright: refused before the code runs.
_KILLERS = {
    ("os", "_exit"),
    ("posix", "_exit"),
    ("os", "abort"),
    ("os", "kill"),
    ("os", "killpg"),
    ("signal", "raise_signal"),
    ("signal", "pthread_kill"),
    ("ctypes", "string_at"),
}


@dataclass(slots=True, kw_only=True)
class CodeOutcome:
    """What running the code gave. `error` is a short traceback; `displays` are mime bundles."""

    stdout: str = ""
    stderr: str = ""
    value: Mapping[str, Any] | None = None
    error: str | None = None
    displays: list[Mapping[str, Any]] = field(default_factory=list)
    timed_out: bool = False
    interrupted: bool = False
    exit_code: object = None  # set when the code raised SystemExit
    exited: bool = False
    cleanup: list[str] = field(default_factory=list)  # figures closed, widgets closed, threads left

    @property
    def ok(self) -> bool:
        return self.error is None and not (self.timed_out or self.interrupted or self.exited)


def forbidden_call(code: str) -> str | None:
    """The name of a call in `code` that would end the kernel's process, or None (also for bad syntax)."""
    try:
        tree = parse_module(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    imported: dict[str, str] = {}  # local name -> "module.name" for `from os import _exit as bye`
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                imported[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            name = (func.value.id, func.attr)
        elif isinstance(func, ast.Name) and func.id in imported:
            module, _, attr = imported[func.id].rpartition(".")
            name = (module, attr)
        else:
            continue
        if name in _KILLERS:
            return ".".join(name)
    return None


def run_code(
    code: str,
    namespace: dict[str, Any],
    *,
    timeout: float,
    displays: Callable[[], contextlib.AbstractContextManager[list[Mapping[str, Any]]]] | None = None,
    format_value: Callable[[Any], Mapping[str, Any]] | None = None,
) -> CodeOutcome:
    """Run `code` in `namespace`; the value of a final expression is formatted by `format_value`."""
    outcome = CodeOutcome()
    try:
        body, last = _compile(code)
    except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError) as exc:
        outcome.error = _syntax_error(exc)
        return outcome
    fmt = format_value or (lambda value: {"text/plain": repr(value)})
    stdout, stderr = _Bounded(), _Bounded()
    before = _Before.take()
    shown: list[Mapping[str, Any]] = []
    with _deadline(timeout, outcome) as armed:
        try:
            with (
                contextlib.redirect_stdout(stdout),
                contextlib.redirect_stderr(stderr),
                displays() if displays is not None else contextlib.nullcontext([]) as shown,
            ):
                exec(body, namespace)  # noqa: S102 - running the agent's code is this tool's purpose
                if last is not None:
                    value = eval(last, namespace)  # noqa: S307
                    if value is not None:
                        outcome.value = fmt(value)
        except KeyboardInterrupt:
            if not armed.timed_out:
                outcome.interrupted = True
        except SystemExit as exc:
            outcome.exited, outcome.exit_code = True, exc.code
        except BaseException as exc:  # the code's own error, reported to the model
            outcome.error = _short_traceback(exc)
    outcome.stdout, outcome.stderr = stdout.text(), stderr.text()
    outcome.displays = [*shown, *_new_figures(before, outcome)]
    _close_widgets(before, outcome)
    _report_threads(before, outcome)
    return outcome


# ---------------------------------------------------------------------- compiling


def _compile(code: str) -> tuple[Any, Any]:
    """The code as a module to exec, and its last statement as an expression to eval (if it is one)."""
    tree = parse_module(code, filename=CODE_FILENAME)
    last = None
    final = tree.body[-1] if tree.body else None
    if isinstance(final, ast.Expr):
        tree.body.pop()
        last = ast.Expression(final.value)
    body = compile(tree, CODE_FILENAME, "exec", dont_inherit=True)
    expression = compile(last, CODE_FILENAME, "eval", dont_inherit=True) if last is not None else None
    return body, expression


def _syntax_error(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        where = f" (line {exc.lineno}, column {exc.offset})" if exc.lineno else ""
        text = f"\n    {exc.text.rstrip()}" if exc.text else ""
        return f"SyntaxError: {exc.msg}{where}{text}"
    return f"{type(exc).__name__}: the code could not be compiled ({exc})"


def _short_traceback(exc: BaseException) -> str:
    """The frames in the agent's own code, then the exception: what a person would need to fix it."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == CODE_FILENAME]
    lines = [f"  line {f.lineno}, in {f.name}" + (f": {f.line}" if f.line else "") for f in frames[-6:]]
    message = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return "\n".join(["Traceback (the agent's code):", *lines, message]) if lines else message


# ---------------------------------------------------------------------- the time bound


@dataclass
class _Armed:
    timed_out: bool = False


@contextlib.contextmanager
def _deadline(seconds: float, outcome: CodeOutcome) -> Iterator[_Armed]:
    """A KeyboardInterrupt in this thread after `seconds`; on the main thread, SIGINT interrupts too."""
    armed = _Armed()

    def expire() -> None:
        armed.timed_out = outcome.timed_out = True

    if threading.current_thread() is threading.main_thread():

        def on_alarm(signum: int, frame: Any) -> None:
            expire()
            raise KeyboardInterrupt

        old_alarm = signal.signal(signal.SIGALRM, on_alarm)
        old_int = signal.signal(signal.SIGINT, signal.default_int_handler)  # an interrupt stops the code
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield armed
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old_alarm)
            signal.signal(signal.SIGINT, old_int)
        return
    target = threading.get_ident()

    def raise_in_target() -> None:
        expire()
        ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(target), ctypes.py_object(KeyboardInterrupt)
        )

    timer = threading.Timer(seconds, raise_in_target)
    timer.daemon = True
    timer.start()
    try:
        yield armed
    finally:
        timer.cancel()
        timer.join()
        if armed.timed_out:  # the exception may not have been delivered yet: take it back
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(target), None)


# ---------------------------------------------------------------------- output and clean-up


class _Bounded(io.TextIOBase):
    """A text stream that keeps its first and last characters and counts the rest."""

    def __init__(self) -> None:
        self.head: list[str] = []
        self.head_size = 0
        self.tail = ""
        self.dropped = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            text = str(text)
        room = _HEAD - self.head_size
        if room > 0:
            self.head.append(text[:room])
            self.head_size += min(room, len(text))
            text = text[room:]
        if text:
            merged = self.tail + text
            self.dropped += max(0, len(merged) - _TAIL)
            self.tail = merged[-_TAIL:]
        return len(text)

    def text(self) -> str:
        head = "".join(self.head)
        if not self.dropped:
            return head + self.tail
        return f"{head}\n[... {self.dropped} characters cut ...]\n{self.tail}"


@dataclass(frozen=True)
class _Before:
    figures: frozenset[int]
    widgets: frozenset[str]
    threads: frozenset[int]

    @staticmethod
    def take() -> _Before:
        return _Before(
            figures=frozenset(_figure_numbers()),
            widgets=frozenset(_widget_ids()),
            threads=frozenset(t.ident or 0 for t in threading.enumerate()),
        )


def _figure_numbers() -> list[int]:
    pyplot = sys.modules.get("matplotlib.pyplot")
    return list(pyplot.get_fignums()) if pyplot is not None else []


def _new_figures(before: _Before, outcome: CodeOutcome) -> list[Mapping[str, Any]]:
    """Figures the code made and did not show: rendered to PNG, then closed so no later cell shows them."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return []
    bundles: list[Mapping[str, Any]] = []
    new = [n for n in pyplot.get_fignums() if n not in before.figures]
    for number in new:
        figure = pyplot.figure(number)
        if len(bundles) < _MAX_FIGURES:
            with contextlib.suppress(Exception):
                buffer = io.BytesIO()
                figure.savefig(buffer, format="png", dpi=72, bbox_inches="tight")
                width, height = figure.get_size_inches() * 72
                bundles.append(
                    {
                        "image/png": base64.b64encode(buffer.getvalue()).decode("ascii"),
                        "text/plain": f"<Figure of {int(width)}x{int(height)} px, {len(figure.axes)} axes>",
                    }
                )
        pyplot.close(figure)
    if new:
        outcome.cleanup.append(f"closed {len(new)} figure(s) the code left open")
    return bundles


def _widget_ids() -> list[str]:
    widget_module = sys.modules.get("ipywidgets.widgets.widget")
    instances = getattr(widget_module, "_instances", None) if widget_module is not None else None
    return list(instances) if isinstance(instances, dict) else []


def _close_widgets(before: _Before, outcome: CodeOutcome) -> None:
    widget_module = sys.modules.get("ipywidgets.widgets.widget")
    instances = getattr(widget_module, "_instances", None) if widget_module is not None else None
    if not isinstance(instances, dict):
        return
    new = [w for key, w in list(instances.items()) if key not in before.widgets]
    for widget in new:
        with contextlib.suppress(Exception):
            widget.close()
    if new:
        outcome.cleanup.append(f"closed {len(new)} widget(s) the code made")


def _report_threads(before: _Before, outcome: CodeOutcome) -> None:
    left = [t.name for t in threading.enumerate() if (t.ident or 0) not in before.threads and t.is_alive()]
    if left:
        outcome.cleanup.append(
            f"the code started {len(left)} thread(s) that are still running ({', '.join(left[:3])}); "
            "Python cannot stop them from outside"
        )

"""A front end played over `jupyter_client`, for tests of `%%architect` cells in real kernels.

It sends cells the way JupyterLab's Run All does (back to back, `stop_on_error`), keeps every cell's
outputs as a front end does (`update_display_data` replaces the output with that display id, wherever it
is), tracks widget models from `comm_open`/`comm_msg`, and clicks a Button by sending the very `comm_msg`
JupyterLab sends: `{"method": "custom", "content": {"event": "click"}}`. Like JupyterLab's widget manager
it opens a comm on `jupyter.widget.control` when it connects (and asks for the widgets' state), and when it
shows a widget that counts its views (`_view_count` a number) it sends the new count, as ipywidgets' views
do: that is how a kernel tells a front end that can show widgets from a headless client (nbclient).
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager

ROOT = Path(__file__).resolve().parents[2]
RUN_MIME = "application/vnd.architect-nb.run+json"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
#: A checkout without venvs of its own (a git worktree) borrows another checkout's: `ARCHITECT_TEST_VENVS`
#: names the folder holding `.venv` and `.venv-ipk6`. Its kernels then import this checkout's code.
VENVS = Path(os.environ.get("ARCHITECT_TEST_VENVS") or ROOT)

#: The kernels the notebook tests run on: current ipykernel (the main venv) and an old one (make setup-ipk6).
KERNEL_PYTHONS = {
    "ipk7": VENVS / ".venv" / "bin" / "python",
    "ipk6": VENVS / ".venv-ipk6" / "bin" / "python",
}


def _late_for_a_closed_comm(msg: dict[str, Any]) -> bool:
    """ipykernel's "No such comm: ..." on stderr, answering a comm message of the front end's own."""
    text = str(msg["content"].get("text", ""))
    parent = msg["parent_header"].get("msg_type")  # ipykernel 7 may send it with no parent at all
    return parent in ("comm_msg", None) and text.startswith("No such comm: ")


def write_kernelspecs(folder: Path) -> Path:
    """Kernel specs for every kernel environment that exists, under `folder/kernels`. Returns that folder."""
    kernels = folder / "kernels"
    for name, python in KERNEL_PYTHONS.items():
        if not python.exists():
            continue
        spec = kernels / f"architect-{name}"
        spec.mkdir(parents=True, exist_ok=True)
        argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        (spec / "kernel.json").write_text(
            json.dumps({"argv": argv, "display_name": f"architect {name}", "language": "python"})
        )
    return kernels


#: First on the PYTHONPATH of the kernels and servers the tests start: its `sitecustomize` spares each of them
#: an import of about a second that nothing tested uses (see there).
TEST_SITE = ROOT / "tests" / "support" / "site"


def started_process_env(*, warm_up: bool = False) -> dict[str, str]:
    """What every kernel and Jupyter server the tests start gets in its environment, on top of its own.

    PYTHONPATH holds TEST_SITE, and this checkout when the venvs are borrowed (they are installed from their
    own checkout, so this one's code must come first); any PYTHONPATH of the caller is dropped. Without
    `warm_up`, kernels skip the background import of LiteLLM after `%load_ext` (notebook/warm_up.py): 5 s of
    CPU per kernel that scripted runs never use. The warm-up's own tests turn it back on
    (tests/kernel/test_gateway_kernel.py, tests/unit/notebook/test_notebook_magics.py), and so does the
    browser test of the approval buttons, as users' kernels have it.
    """
    return {
        "PYTHONPATH": os.pathsep.join([str(TEST_SITE), *([str(ROOT)] if VENVS != ROOT else [])]),
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "JUPYTER_PLATFORM_DIRS": "1",
        "ARCHITECT_WARMUP": "1" if warm_up else "0",
    }


def kernel_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{VENVS / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env.update(started_process_env())
    env.update(extra or {})
    return env


@dataclass
class Cell:
    code: str
    msg_id: str
    outputs: list[dict[str, Any]] = field(default_factory=list)
    reply: dict[str, Any] | None = None
    reply_seq: int | None = None
    reply_at: float | None = None
    idle: bool = False  # the kernel said `idle` for this request on iopub: every output has arrived
    clear_pending: bool = False  # a `clear_output(wait=True)`: the next output replaces all before it

    @property
    def done(self) -> bool:
        return self.reply is not None

    @property
    def finished(self) -> bool:
        """Replied on the shell channel and idle on iopub: the reply can overtake the last outputs."""
        return self.reply is not None and self.idle

    @property
    def status(self) -> str | None:
        return None if self.reply is None else str(self.reply.get("status"))

    def data(self, mime: str) -> list[Any]:
        return [o["data"][mime] for o in self.outputs if mime in o.get("data", {})]

    def text(self) -> str:
        parts = []
        for o in self.outputs:
            if o["output_type"] == "stream":
                parts.append(o["text"])
            elif "data" in o:
                parts.append(str(o["data"].get("text/plain", "")))
            elif o["output_type"] == "error":
                parts.append("\n".join(o.get("traceback", [])))
        return "\n".join(parts)


@dataclass
class Comm:
    comm_id: str
    state: dict[str, Any]
    parent: str
    opened_at: float
    open: bool = True
    clicked: bool = False


#: Run in a shared kernel between two tests: the person's names and the extension's session go back to a new
#: kernel's (the extension stays loaded; the environment and imported modules are the process's, as after a
#: `%reset`).
_RESET = (
    "get_ipython().run_line_magic('reset', '-f')\n"
    "__import__('architect_nb.notebook.state', fromlist=['reset_session']).reset_session()\n"
    "(lambda log: log is None or log.entries.clear())"
    "(__import__('architect_nb.notebook.context.execution_log', fromlist=['_log'])._log)\n"
    "[vars(__import__('sys')).pop(n, None)"
    " for n in ('last_type', 'last_value', 'last_traceback', 'last_exc')]"
)
#: A JSON line: the names and session state `FrontEnd.leftovers` reports (one expression: it binds nothing).
_LEFTOVERS = (
    "__import__('json').dumps({"
    "'names': sorted(n for n in get_ipython().user_ns"
    " if not n.startswith('_') and n not in get_ipython().user_ns_hidden),"
    "'session': (lambda s: [] if s is None else [k for k, v in vars(s).items()"
    " if k != 'threads' and v] + (['threads'] if s.threads.threads else []))"
    "(__import__('architect_nb.notebook.state', fromlist=['_session'])._session),"
    "'documents': (lambda c: [] if c is None else [f'front end {a}' for a in c.clients]"
    " + [f'pending request {n}' for n in c._pending] + [f'running cell {r}' for r in c.running_cells])"
    "(__import__('architect_nb.notebook.kernel.live_documents', fromlist=['_channel'])._channel),"
    "'errors': (lambda log: [] if log is None else [f'[{n}]' for n, e in log.entries.items() if e.error])"
    "(__import__('architect_nb.notebook.context.execution_log', fromlist=['_log'])._log)"
    " + (['sys.last_value'] if hasattr(__import__('sys'), 'last_value') else [])})"
)


class FrontEnd:
    """One kernel and the front end's view of it."""

    def __init__(self, kernel_name: str, kernel_dirs: Path, cwd: Path, env: dict[str, str]) -> None:
        ksm = KernelSpecManager(kernel_dirs=[str(kernel_dirs)])
        self.km = KernelManager(kernel_name=f"architect-{kernel_name}", kernel_spec_manager=ksm)
        self.km.start_kernel(cwd=str(cwd), env=env)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)
        self.connect_widget_manager()
        self.cells: dict[str, Cell] = {}
        self.order: list[Cell] = []
        self.comms: dict[str, Comm] = {}
        self.iopub_log: list[tuple[float, str, str]] = []  # (time, msg_type, parent msg_id)
        self._seq = 0
        self.clicks: list[tuple[str, float]] = []
        self.stray: list[dict[str, Any]] = []  # output messages whose parent is no cell
        #: The kernel's log line for a widget message of ours that reached a comm it had just closed (a view
        #: count sent as the run closed its prompt): a race every front end has, never the run's output.
        self.late_comm_messages: list[dict[str, Any]] = []
        self.updates: list[tuple[float, str | None, str]] = []  # (time, display id, text/html) of updates
        self.shown_models: set[str] = set()  # widget models displayed in an output
        self.viewed: set[str] = set()  # models whose view this front end has counted

    # ------------------------------------------------------------------ sending

    def execute(self, code: str, cell_id: str | None = None) -> Cell:
        """Send a cell; with `cell_id`, as JupyterLab sends it (the id in the request's metadata)."""
        if cell_id is None:
            msg_id = self.kc.execute(code, stop_on_error=True)
        else:
            content = {
                "code": code,
                "silent": False,
                "store_history": True,
                "user_expressions": {},
                "allow_stdin": False,
                "stop_on_error": True,
            }
            msg = self.kc.session.msg("execute_request", content, metadata={"cellId": cell_id})
            self.kc.shell_channel.send(msg)
            msg_id = msg["header"]["msg_id"]
        cell = Cell(code=code, msg_id=msg_id)
        self.cells[msg_id] = cell
        self.order.append(cell)
        return cell

    def run(self, code: str, timeout: float = 60, cell_id: str | None = None) -> Cell:
        """Execute; wait for the reply and the outputs (iopub can trail the reply, as on ipykernel 6)."""
        cell = self.execute(code, cell_id)
        self.wait(lambda: cell.finished, timeout, f"cell {code!r} to finish")
        return cell

    def run_past_abort(self, code: str, tries: int = 20) -> Cell:
        """Run a cell after an interrupt or an error. ipykernel 6 then aborts every request that reaches it
        before its `stop_aborting` callback runs (`stop_on_error_timeout`, 0 s, later): on a loaded machine a
        cell sent at once can land in that window. An aborted reply comes from a live kernel; the cell is sent
        again."""
        for _ in range(tries - 1):
            cell = self.run(code)
            if cell.status != "aborted":
                return cell
            self.stay(0.1)
        return self.run(code)

    def leftovers(self) -> dict[str, list[str]]:
        """What a test left in this kernel that a new kernel would not hold: the person's names (those IPython
        does not hide, without a leading underscore), the extension's per-kernel session (config set by
        `%architect config`, a mode, runs, stale modules), the document channel's front ends, requests
        and running cells, and the failed cells the execution log and `sys.last_value` hold (what
        `%architect fix` and the notebook outline read). Empty for a kernel as new."""
        cell = self.run_past_abort(f"print({_LEFTOVERS})")
        assert cell.status == "ok", self.describe()
        found: dict[str, list[str]] = json.loads(cell.text().strip().splitlines()[-1])
        return {what: names for what, names in found.items() if names}

    def hand_over(self) -> FrontEnd:
        """Give this kernel, shared by a module's tests, to the next test as if new: the person's names are
        reset (`%reset -f`), the extension's session is a new one, the execution log and the last error are
        emptied, and this front end forgets the cells and messages of earlier tests. The widget manager it
        connected stays, as a front end's does. Fails if anything is left (`leftovers`), so a shared kernel
        that leaks state fails the next test's setup."""
        reset = self.run_past_abort(_RESET)
        assert reset.status == "ok", self.describe()
        left = self.leftovers()
        assert not left, f"a shared kernel kept an earlier test's state: {left}"
        self.cells.clear()
        self.order.clear()
        self.stray = []
        self.late_comm_messages = []
        self.updates = []
        return self

    def connect_widget_manager(self) -> str:
        """What JupyterLab's widget manager does on connecting to a kernel: open a `jupyter.widget.control`
        comm and ask for the widgets' state (a kernel that has not imported ipywidgets closes it)."""
        comm_id = uuid.uuid4().hex
        content = {"comm_id": comm_id, "target_name": "jupyter.widget.control", "data": {}}
        self.kc.shell_channel.send(self.kc.session.msg("comm_open", content, metadata={"version": "1.0.0"}))
        self.send_comm(comm_id, {"method": "request_states"})
        return comm_id

    def send_comm(self, comm_id: str, data: dict[str, Any]) -> None:
        msg = self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        self.kc.shell_channel.send(msg)

    def click(self, comm_id: str) -> float:
        """Click a Button as JupyterLab does. Returns when the click was sent (perf_counter)."""
        self.comms[comm_id].clicked = True
        at = time.perf_counter()
        self.send_comm(comm_id, {"method": "custom", "content": {"event": "click"}})
        self.clicks.append((comm_id, at))
        return at

    def type_into(self, comm_id: str, value: str) -> None:
        """Set a Text widget's value as JupyterLab does on input."""
        self.send_comm(comm_id, {"method": "update", "state": {"value": value}, "buffer_paths": []})

    def interrupt(self) -> float:
        at = time.perf_counter()
        self.km.interrupt_kernel()
        return at

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)

    # ------------------------------------------------------------------ receiving

    def wait(self, predicate: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout} s waiting for {what}.\n{self.describe()}")
            self.pump()

    def stay(self, seconds: float) -> None:
        """Keep handling the kernel's messages for `seconds`, as an open front end does."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.pump()

    def pump(self, wait: float = 0.005) -> None:
        got = False
        for channel, handle in ((self.kc.iopub_channel, self._iopub), (self.kc.shell_channel, self._shell)):
            while channel.msg_ready():
                handle(channel.get_msg(timeout=0))
                got = True
        if not got:
            time.sleep(wait)

    def _shell(self, msg: dict[str, Any]) -> None:
        parent = msg["parent_header"].get("msg_id", "")
        if msg["msg_type"] == "execute_reply" and parent in self.cells:
            cell = self.cells[parent]
            self._seq += 1
            cell.reply, cell.reply_seq, cell.reply_at = msg["content"], self._seq, time.perf_counter()

    def _iopub(self, msg: dict[str, Any]) -> None:
        kind = msg["msg_type"]
        parent = msg["parent_header"].get("msg_id", "")
        content = msg["content"]
        self.iopub_log.append((time.perf_counter(), kind, parent))
        cell = self.cells.get(parent)
        if kind == "status" and cell is not None and content.get("execution_state") == "idle":
            cell.idle = True
        if kind == "comm_open":
            state = content.get("data", {}).get("state", {})
            self.comms[content["comm_id"]] = Comm(
                content["comm_id"], dict(state), parent, time.perf_counter()
            )
        elif kind == "comm_msg":
            data = content.get("data", {})
            comm = self.comms.get(content["comm_id"])
            if comm is not None and data.get("method") in ("update", "echo_update"):
                comm.state.update(data.get("state", {}))
                self._count_views()
        elif kind == "comm_close":
            if content["comm_id"] in self.comms:
                self.comms[content["comm_id"]].open = False
        elif kind == "update_display_data":
            display_id = content.get("transient", {}).get("display_id")
            self.updates.append((time.perf_counter(), display_id, str(content["data"].get("text/html", ""))))
            self._show_widget(content["data"])
            for other in self.order:
                for output in other.outputs:
                    if display_id and output.get("display_id") == display_id:
                        output["data"], output["metadata"] = content["data"], content.get("metadata", {})
        elif kind == "clear_output" and cell is not None:
            cell.clear_pending = bool(content.get("wait"))
            if not cell.clear_pending:
                cell.outputs.clear()
        elif kind in ("display_data", "execute_result") and cell is not None:
            self._show_widget(content["data"])
            if cell.clear_pending:
                cell.outputs.clear()
                cell.clear_pending = False
            output = {"output_type": kind, "data": content["data"], "metadata": content.get("metadata", {})}
            if display_id := content.get("transient", {}).get("display_id"):
                output["display_id"] = display_id
            cell.outputs.append(output)
        elif kind == "stream" and cell is not None:
            cell.outputs.append({"output_type": "stream", "name": content["name"], "text": content["text"]})
        elif kind == "error" and cell is not None:
            cell.outputs.append({"output_type": "error", **content})
        elif kind == "stream" and _late_for_a_closed_comm(msg):
            self.late_comm_messages.append(msg)
        elif kind in ("stream", "display_data", "execute_result", "error"):
            self.stray.append(msg)

    # ------------------------------------------------------------------ widgets

    def _show_widget(self, data: dict[str, Any]) -> None:
        model_id = (data.get(WIDGET_MIME) or {}).get("model_id")
        if isinstance(model_id, str):
            self.shown_models.add(model_id)
            self._count_views()

    def _count_views(self) -> None:
        """Send the view count of each shown widget that counts its views, once (a view's `displayed`)."""
        shown: set[str] = set()
        todo = [m for m in self.shown_models if m in self.comms and self.comms[m].open]
        while todo:
            model = todo.pop()
            if model in shown:
                continue
            shown.add(model)
            children = self.comms[model].state.get("children") or ()
            todo += [
                ref.removeprefix("IPY_MODEL_")
                for ref in children
                if ref.removeprefix("IPY_MODEL_") in self.comms
            ]
        for model in sorted(shown - self.viewed):
            count = self.comms[model].state.get("_view_count")
            if self.comms[model].open and isinstance(count, int) and not isinstance(count, bool):
                self.viewed.add(model)
                self.comms[model].state["_view_count"] = count + 1
                self.send_comm(
                    model, {"method": "update", "state": {"_view_count": count + 1}, "buffer_paths": []}
                )

    def buttons(self, label: str) -> list[Comm]:
        return [
            c
            for c in self.comms.values()
            if c.open and c.state.get("_model_name") == "ButtonModel" and c.state.get("description") == label
        ]

    def wait_for_button(self, label: str, timeout: float = 30) -> Comm:
        found: list[Comm] = []

        def ready() -> bool:
            # A front end shows a button once a container holds it, as a person would see it.
            shown = {ref for c in self.comms.values() if c.open for ref in c.state.get("children", ())}
            found[:] = [
                c
                for c in self.buttons(label)
                if not c.clicked and not c.state.get("disabled") and f"IPY_MODEL_{c.comm_id}" in shown
            ]
            return bool(found)

        self.wait(ready, timeout, f"a {label!r} button")
        return found[-1]

    def reason_box(self) -> Comm:
        boxes = [
            c
            for c in self.comms.values()
            if c.open
            and c.state.get("_model_name") == "TextModel"
            and str(c.state.get("placeholder", "")).startswith("Reason")
        ]
        assert boxes, "no reason box"
        return boxes[-1]

    def describe(self) -> str:
        lines = []
        for cell in self.order:
            lines.append(f"cell {cell.code[:40]!r}: status={cell.status} seq={cell.reply_seq}")
            lines.append("   " + cell.text()[-1500:].replace("\n", "\n   "))
        return "\n".join(lines)


@contextmanager
def front_end(
    kernel_name: str, tmp: Path, cwd: Path, extra_env: dict[str, str] | None = None
) -> Iterator[FrontEnd]:
    kernel_dirs = write_kernelspecs(tmp / "jupyter")
    fe = FrontEnd(kernel_name, kernel_dirs, cwd, kernel_env(extra_env))
    try:
        yield fe
    finally:
        fe.close()


@contextmanager
def loaded_front_end(
    kernel_name: str, tmp: Path, cwd: Path, extra_env: dict[str, str] | None = None
) -> Iterator[FrontEnd]:
    """`front_end`, with architect_nb loaded in the kernel."""
    with front_end(kernel_name, tmp, cwd, extra_env) as fe:
        assert fe.run("%load_ext architect_nb").status == "ok", fe.describe()
        yield fe


def available_kernels() -> list[str]:
    return [name for name, python in KERNEL_PYTHONS.items() if python.exists()]


def kernel_params() -> list[Any]:
    """ipykernel 7 and 6 as pytest params; a missing one is skipped locally and fails in CI."""
    params = []
    for name in ("ipk7", "ipk6"):
        missing = name not in available_kernels()
        reason = "no .venv-ipk6: run `make setup-ipk6` (make pytest does)"
        marks = [pytest.mark.skipif(missing and not os.environ.get("CI"), reason=reason)] if missing else []
        params.append(pytest.param(name, marks=marks, id=name))
    return params


__all__ = [
    "RUN_MIME",
    "WIDGET_MIME",
    "Cell",
    "FrontEnd",
    "available_kernels",
    "front_end",
    "kernel_params",
    "sys",
]

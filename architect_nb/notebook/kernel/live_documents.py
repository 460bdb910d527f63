"""The kernel's end of the document channel: notebooks open in JupyterLab or Notebook 7, changed there.

The labextension (`labextension/src/liveedits.ts`) opens one comm per kernel and front end (target
`architect-nb-documents`), saying which front end it is, where its server's root is, and who writes the
cells' outputs (the kernel's messages, or a server that runs cells itself: `outputs_kept_by_server`). When
the extension loads in the kernel, a short-lived comm says hello to front ends already connected, so they
open theirs.

For a notebook tool's file, `DocumentChannel.open_document` asks every front end connected to this kernel
whether the notebook is open there (each also asks the other tabs of its browser, so a notebook open in
another Notebook 7 tab is found too). No front end, or none that has it open: None, and the tool uses the
file. One claim: the tool reads and changes that document (`LiveNotebook`). Several documents that do not
share their edits (two browsers without real-time collaboration): refused, since each would keep its own
copy. Every wait is bounded by `notebook.frontend_timeout`; a front end that does not answer fails the call
(it may have the notebook open, so the file is not written) and is dropped until it reconnects.

The agent asks from its worker thread while the `%%architect` cell awaits; the answers arrive as comm
messages the cell's pump lets in (`pump.py`). From the kernel's main thread nothing could arrive while the
caller waits, so there `unavailable` says why, and `open_document` refuses when a front end may be there.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from architect_nb.tools.notebook_files.backend import DocumentState
    from architect_nb.tools.notebook_files.cellops import CellOp

__all__ = [
    "TARGET",
    "DocumentChannel",
    "LiveNotebook",
    "current_channel",
    "for_run",
    "install",
    "running_cell_id",
    "uninstall",
]

TARGET = "architect-nb-documents"
PROTOCOL = 1
DEFAULT_TIMEOUT = 10.0
#: After the hello, and after dropping a front end that did not answer, front ends get this long to open their
#: comm (again) before a notebook is taken as open nowhere.
RECONNECT_GRACE = 3.0
_TICK = 0.02
_OP_CODES = frozenset({"gone", "changed", "typing", "running", "taken", "anchor"})


@dataclass(slots=True)
class _Client:
    """One front end (a browser tab) connected to this kernel, by its own comm."""

    comm: Any
    app: str
    where: str
    root: Path | None
    server_outputs: bool = False  # its server runs cells and writes their outputs (jupyter-server-documents)


@dataclass(slots=True)
class _Pending:
    expected: set[str]
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    done: threading.Event = field(default_factory=threading.Event)


class DocumentChannel:
    """This kernel's front ends, and the open notebooks they claim. Thread-safe.

    Args:
        timeout: Seconds to wait for a front end's answer.
    """

    def __init__(self, shell: Any = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.shell = shell
        self.timeout = timeout
        self.clients: dict[str, _Client] = {}  # by comm id
        self.running_cells: set[str] = set()  # the running %%architect cells: never changed
        self._pending: dict[int, _Pending] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._hello_request: str | None = None  # the request during which hello went out
        self._expected: dict[str, float] = {}  # front ends on their way back (app, or "" after hello) → until

    # ------------------------------------------------------------------ the comm side (main thread)

    def hello(self) -> None:
        """Tell front ends already connected that the channel is here, so they open their comm."""
        import comm

        self._hello_request = _request_id(self.shell)
        with self._lock:
            self._expected[""] = time.monotonic() + RECONNECT_GRACE
        with contextlib.suppress(Exception):  # no front end at all (a terminal IPython) is fine
            hello = comm.create_comm(target_name=TARGET, data={"type": "hello", "protocol": PROTOCOL})
            hello.close()

    def on_open(self, comm: Any, msg: dict[str, Any]) -> None:
        """A front end opened its comm (`comm_open` with target `TARGET`)."""
        data = msg.get("content", {}).get("data") or {}
        app = data.get("app")
        if data.get("type") != "client" or not isinstance(app, str) or not app:
            comm.close()
            return
        where = str(data.get("where") or "the front end")[:40]
        root = _server_root(data.get("root"), data.get("session"))
        client = _Client(
            comm=comm, app=app[:80], where=where, root=root, server_outputs=data.get("outputs") == "server"
        )
        comm_id = str(comm.comm_id)
        with self._lock:
            stale = [k for k, c in self.clients.items() if c.app == client.app]
            for key in stale:
                self.clients.pop(key)
            self.clients[comm_id] = client
        comm.on_msg(lambda message: self._on_msg(comm_id, message))
        comm.on_close(lambda _message: self._forget(comm_id))
        comm.send({"type": "welcome", "protocol": PROTOCOL})

    def outputs_kept_by_server(self) -> bool:
        """A front end's server runs the cells and writes their outputs itself (jupyter-server-documents).
        There a display update is appended as a new output instead of replacing the one it names."""
        with self._lock:
            return any(client.server_outputs for client in self.clients.values())

    def _on_msg(self, comm_id: str, msg: dict[str, Any]) -> None:
        data = msg.get("content", {}).get("data") or {}
        req = data.get("req")
        with self._lock:
            pending = self._pending.get(req) if isinstance(req, int) else None
            if pending is None or comm_id not in pending.expected:
                return  # late, or not asked
            pending.answers[comm_id] = data
            if pending.expected <= set(pending.answers):
                pending.done.set()

    def _forget(self, comm_id: str) -> None:
        with self._lock:
            self.clients.pop(comm_id, None)
            for pending in self._pending.values():  # nobody waits for an answer that cannot come
                pending.expected.discard(comm_id)
                if pending.expected <= set(pending.answers):
                    pending.done.set()

    def close(self) -> None:
        with self._lock:
            clients = list(self.clients.values())
            self.clients.clear()
        for client in clients:
            with contextlib.suppress(Exception):
                client.comm.close()

    # ------------------------------------------------------------------ the agent's side (worker thread)

    def unavailable(self) -> str | None:
        if threading.current_thread() is not threading.main_thread():
            return None
        with self._lock:
            connected = bool(self.clients)
        if not connected and (self._hello_request is None or self._hello_request != _request_id(self.shell)):
            return None  # no front end, and none can be on its way (hello went out in an earlier cell)
        return (
            "a notebook open in JupyterLab or Notebook 7 is changed through its front end, which can only "
            "answer while a cell awaits; run the same `%architect` command again in a cell of its own, once "
            "architect_nb is loaded (the Undo button: click it again)"
        )

    def open_document(self, path: Path) -> LiveNotebook | None:
        if (why := self.unavailable()) is not None:
            raise _document_error(f"'{path.name}' may be open in a front end, but {why}.")
        # A front end that does not answer is dropped. When the front ends that did answer share the
        # document (real-time collaboration), the claim is made once more after the grace: a reloaded tab is
        # back by then, and one closed for good (a collaborator's, in the middle of the run) is no longer
        # asked, the others answering for the shared document. Otherwise the call fails, and says so.
        for attempt in range(2):
            self._await_reconnects()
            with self._lock:
                clients = dict(self.clients)
            # A front end whose server is not on this kernel's file system (a remote kernel) cannot have it.
            asked = {k: rel for k, c in clients.items() if (rel := _relative(path, c.root)) is not None}
            if not asked:
                return None
            answers, silent = self._ask({k: {"type": "claim", "path": rel} for k, rel in asked.items()})
            claims = _claims(answers, clients)
            if not silent or attempt or not _shared_by_all(claims):
                break
        shown = path.name
        if silent:
            where = ", ".join(sorted({clients[k].where for k in silent}))
            raise _document_error(
                f"{where} did not answer within {self.timeout:g} s (reloaded or closed?), so it is not known "
                f"whether '{shown}' is open there; nothing was changed. Retry the call."
            )
        if not claims:
            return None
        if len(claims) > 1 and not _shared_by_all(claims):
            raise _document_error(
                f"'{shown}' is open in {len(claims)} front ends that do not share their edits (two browser "
                "tabs or windows without real-time collaboration), so a change in one would be lost in the "
                "other; nothing was changed. Ask the person to close all but one, then retry."
            )
        # Shared by all: any one applies the change, and the others see it through the shared model. A front
        # end that has it open itself is asked directly rather than through another tab.
        ranked = sorted(claims.items(), key=lambda item: clients[item[1][0]].app != item[0][0])
        (app, doc), (route, _shared) = ranked[0]
        return LiveNotebook(self, route, app, doc, asked[route], clients[route].where)

    def locate(self, cell_id: str) -> tuple[LiveNotebook, Path | None] | None:
        """The open notebook holding the cell `cell_id` (the running `%%architect` cell), and its file; None
        when no front end has it open, or front ends cannot be asked (then the outline reads the file).

        Notebooks copied from one template share their cell ids, and the notebook found here is the one
        whose metadata (its teaching policy) the run follows. A front end answers only with the documents on
        this kernel, and says `ambiguous` when those still hold the cell at different paths; that, or answers
        naming different files (an older front end, which does not filter), is None too, so the notebook's
        own file is read rather than a guess. One notebook open in several tabs is one file."""
        if not cell_id:
            return None
        clients, answers = self._ask_everyone({"type": "locate", "cell": cell_id})
        found: list[tuple[LiveNotebook, Path | None]] = []
        for comm_id, answer in sorted(answers.items(), key=lambda item: item[0]):
            if answer.get("ambiguous"):
                return None
            for doc in answer.get("docs") or []:
                if not isinstance(doc, dict) or not isinstance(doc.get("app"), str):
                    continue
                client = clients[comm_id]
                path = str(doc.get("path") or "")
                where = str(doc.get("where") or client.where)[:40]
                live = LiveNotebook(self, comm_id, doc["app"], str(doc.get("doc", "")), path, where)
                found.append((live, (client.root / path) if client.root is not None and path else None))
        if len({str(file or live.path) for live, file in found}) > 1:
            return None
        return found[0] if found else None

    def running_cell(self, source: str) -> str | None:
        """The id of the running cell whose source is `source`, as the front ends see it: where the server
        runs cells itself (jupyter-server-documents), the execute request carries no cell id. None unless
        they name exactly one cell (two running cells alike, or front ends that cannot be asked)."""
        if not source.strip():
            return None
        _clients, answers = self._ask_everyone({"type": "running", "source": source})
        cells = {
            doc["cell"]
            for answer in answers.values()
            for doc in answer.get("docs") or []
            if isinstance(doc, dict) and isinstance(doc.get("cell"), str)
        }
        return cells.pop() if len(cells) == 1 else None

    def _ask_everyone(self, body: dict[str, Any]) -> tuple[dict[str, _Client], dict[str, dict[str, Any]]]:
        """Ask every front end connected (once those on their way are back) and return them with their
        answers; none when they cannot be asked from here (`unavailable`)."""
        if self.unavailable() is not None:
            return {}, {}
        self._await_reconnects()
        with self._lock:
            clients = dict(self.clients)
        if not clients:
            return {}, {}
        answers, _silent = self._ask({comm_id: body for comm_id in clients})
        return clients, answers

    def _await_reconnects(self) -> None:
        """Front ends may be on their way: just after the hello (architect_nb loaded, maybe after a restart: a
        Run All's next cell), or just dropped for not answering (they reopen their comm at once). Until they
        are back, or the grace is over, a notebook is not taken as open nowhere, so its file is not written
        behind an editor that has it open. (Never on the main thread: nothing could arrive while it waits.)"""
        while threading.current_thread() is not threading.main_thread():
            with self._lock:
                now = time.monotonic()
                apps = {c.app for c in self.clients.values()}
                self._expected = {
                    app: until for app, until in self._expected.items() if until > now and app not in apps
                }
                if "" in self._expected and self.clients:
                    del self._expected[""]
                if not self._expected:
                    return
            time.sleep(_TICK)

    def request(self, comm_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """Send one request to one front end and return its answer. Raises `DocumentError` on no answer."""
        answers, silent = self._ask({comm_id: body})
        if silent or comm_id not in answers:
            raise _document_error(
                f"The front end did not answer within {self.timeout:g} s (the browser reloaded or closed?); "
                "whether the change reached the notebook is unknown. Call read_notebook to see it as it is."
            )
        return answers[comm_id]

    def _ask(self, bodies: dict[str, dict[str, Any]]) -> tuple[dict[str, dict[str, Any]], set[str]]:
        """Send each front end its request; wait for all answers, at most `timeout`. Returns the answers and
        the front ends that did not answer (dropped: they open a new comm when they reconnect)."""
        req = next(self._ids)
        pending = _Pending(expected=set(bodies))
        with self._lock:
            self._pending[req] = pending
            clients = {k: self.clients.get(k) for k in bodies}
        try:
            for comm_id, body in bodies.items():
                client = clients[comm_id]
                if client is None:
                    self._forget(comm_id)
                    continue
                try:
                    client.comm.send({**body, "req": req})
                except Exception:  # a comm that cannot send is gone
                    self._forget(comm_id)
            deadline = time.monotonic() + self.timeout
            while not pending.done.wait(_TICK):
                if time.monotonic() > deadline:
                    break
        finally:
            with self._lock:
                self._pending.pop(req, None)
                answers = dict(pending.answers)
                silent = pending.expected - set(answers)
        for comm_id in silent:
            client = clients.get(comm_id)
            self._forget(comm_id)
            if client is not None:
                with self._lock:
                    self._expected[client.app] = time.monotonic() + RECONNECT_GRACE
                with contextlib.suppress(Exception):
                    client.comm.close()
        return answers, silent

    @contextlib.contextmanager
    def running(self, cell_id: str | None) -> Iterator[None]:
        """While a `%%architect` cell runs, its cell is never changed."""
        if cell_id is None:
            yield
            return
        with self._lock:
            self.running_cells.add(cell_id)
        try:
            yield
        finally:
            with self._lock:
                self.running_cells.discard(cell_id)


class LiveNotebook:
    """A notebook open in a front end, as the notebook tools read and change it."""

    def __init__(
        self, channel: DocumentChannel, route: str, app: str, doc: str, path: str, where: str
    ) -> None:
        self._channel = channel
        self._route = route
        self._target = {"app": app, "doc": doc, "path": path}
        self._where = where

    @property
    def where(self) -> str:
        return self._where

    @property
    def path(self) -> str:
        return self._target["path"]

    def read(self, running: str | None = None) -> DocumentState:
        """The document as shown now; with `running` (a cell id), also which cell the person had selected
        when that cell was run."""
        answer = self._call({"type": "read", **({"running": running} if running else {})})
        data = answer.get("notebook")
        if not isinstance(data, dict):
            raise _document_error(f"{self._where} sent no notebook; nothing was changed. Retry the call.")
        busy = {str(cell) for cell in answer.get("busy") or [] if isinstance(cell, str)}
        with self._channel._lock:
            busy |= self._channel.running_cells
        editing = answer.get("editing")
        selected = answer.get("selected")
        dirty = answer.get("dirty")
        from architect_nb.tools.notebook_files.backend import DocumentState

        return DocumentState(
            data=data,
            editing=editing if isinstance(editing, str) else None,
            busy=frozenset(busy),
            read_only=bool(answer.get("read_only")),
            dirty=frozenset(str(c) for c in dirty if isinstance(c, str)) if isinstance(dirty, list) else None,
            selected=selected if isinstance(selected, str) else None,
        )

    def apply(self, ops: Sequence[CellOp]) -> None:
        with self._channel._lock:
            protect = sorted(self._channel.running_cells)
        self._call({"type": "apply", "ops": [op.to_json() for op in ops], "protect": protect})

    def _call(self, body: dict[str, Any]) -> dict[str, Any]:
        answer = self._channel.request(self._route, {**body, **self._target})
        if answer.get("ok") is True:
            return answer
        code = str(answer.get("code") or "")
        error = str(answer.get("error") or "the front end refused without saying why")[:600]
        if code in _OP_CODES:
            from architect_nb.tools.notebook_files.cellops import CellOpError

            raise CellOpError(code, error)
        raise _document_error(error)


def _claims(
    answers: dict[str, dict[str, Any]], clients: dict[str, _Client]
) -> dict[tuple[str, str], tuple[str, bool]]:
    """The documents the front ends claim, (app, doc) -> (the comm to reach it by, shared): a front end that
    has it open itself is the route, else the tab that answered for it."""
    claims: dict[tuple[str, str], tuple[str, bool]] = {}
    for comm_id, answer in answers.items():
        for doc in answer.get("docs") or []:
            if not isinstance(doc, dict) or not isinstance(doc.get("app"), str):
                continue
            key = (doc["app"], str(doc.get("doc", "")))
            direct = clients[comm_id].app == doc["app"]
            if key not in claims or direct:
                claims[key] = (comm_id, bool(doc.get("shared")))
    return claims


def _shared_by_all(claims: dict[tuple[str, str], tuple[str, bool]]) -> bool:
    """Whether every front end that claims the document shares it (real-time collaboration)."""
    return bool(claims) and all(shared for _route, shared in claims.values())


def _document_error(message: str) -> Exception:
    """A `DocumentError`, imported when one is raised: `%load_ext` imports this module and must stay quick
    (the notebook tools' package imports the file tools and search; the agent's side has them loaded)."""
    from architect_nb.tools.notebook_files.backend import DocumentError

    return DocumentError(message)


# ---------------------------------------------------------------------- one channel per kernel

_channel: DocumentChannel | None = None


def install(shell: Any) -> DocumentChannel:
    """Register the comm target (once per kernel) and say hello to front ends already connected."""
    global _channel  # noqa: PLW0603 - one channel per kernel process
    import comm

    if _channel is None:
        _channel = DocumentChannel(shell)
        comm.get_comm_manager().register_target(TARGET, _channel.on_open)
    _channel.hello()
    return _channel


def uninstall() -> None:
    global _channel  # noqa: PLW0603
    if _channel is None:
        return
    import comm

    with contextlib.suppress(Exception):
        comm.get_comm_manager().unregister_target(TARGET, _channel.on_open)
    _channel.close()
    _channel = None


def current_channel() -> DocumentChannel | None:
    return _channel


@contextlib.contextmanager
def for_run(shell: Any, timeout: float) -> Iterator[None]:
    """While a `%%architect` cell runs: front ends get `timeout` seconds to answer, and the running cell is
    never changed (front ends also refuse any cell that is running)."""
    channel = _channel
    if channel is None:
        yield
        return
    channel.timeout = timeout
    with channel.running(running_cell_id(shell)):
        yield


def running_cell_id(shell: Any) -> str | None:
    """The id of the cell being run (JupyterLab and Notebook 7 send it with the execute request)."""
    parent = _parent(shell)
    cell_id = (parent.get("metadata") or {}).get("cellId") if isinstance(parent, dict) else None
    return cell_id if isinstance(cell_id, str) else None


def _request_id(shell: Any) -> str | None:
    parent = _parent(shell)
    msg_id = (parent.get("header") or {}).get("msg_id") if isinstance(parent, dict) else None
    return msg_id if isinstance(msg_id, str) else ""


def _parent(shell: Any) -> Any:
    kernel = getattr(shell, "kernel", None)
    with contextlib.suppress(Exception):
        if kernel is not None and hasattr(kernel, "get_parent"):
            return kernel.get_parent()
    return getattr(shell, "parent_header", None)


def _server_root(root: Any, session: Any) -> Path | None:
    """The folder the front end's paths are relative to, checked against the notebook this kernel runs for
    (`session`, relative to it): the server's root as JupyterLab tells it, or one found from where the
    kernel started (`JPY_SESSION_NAME`, the current folder)."""
    relative = str(session) if isinstance(session, str) and session and not session.startswith("/") else ""
    candidates: list[Path] = []
    if isinstance(root, str) and root:
        candidates.append(Path(os.path.expanduser(root)))
    started = os.environ.get("JPY_SESSION_NAME", "")
    for place in (started, os.path.join(os.getcwd(), Path(relative).name) if relative else ""):
        if relative and os.path.isabs(place) and place.endswith("/" + relative):
            candidates.append(Path(place[: -len(relative) - 1] or "/"))
    for candidate in candidates:
        real = Path(os.path.realpath(candidate))
        if real.is_dir() and (not relative or (real / relative).exists()):
            return real
    return None


def _relative(path: Path, root: Path | None) -> str | None:
    if root is None:
        return None
    try:
        return Path(os.path.realpath(path)).relative_to(root).as_posix()
    except ValueError:
        return None

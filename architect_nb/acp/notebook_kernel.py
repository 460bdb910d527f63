"""The kernel of a notebook open in a Jupyter server, found and reached from the ACP agent's process.

Jupyter AI says which notebook the person has open by attaching it to the prompt (a `resource_link` to the
`.ipynb` file). The agent runs as a child of that Jupyter server, so it finds the server in Jupyter's runtime
folder (`jpserver-<pid>.json`: its URL, token and root folder; its parent's first), asks the server's REST
API which kernel the notebook's session runs, and connects to that kernel's connection file with
`jupyter_client`, as a second client beside the notebook's own. The kernel tools then run in that kernel
(`architect_nb.notebook.kernel.kernel_bridge`), and the server's API interrupts them when the chat cancels.
"""

from __future__ import annotations

import ast
import json
import os
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from architect_nb.log import get_logger
from architect_nb.tools.base import ToolResult
from architect_nb.tools.metadata import ToolMetadata

__all__ = ["NotebookKernel", "ServerInfo", "connect_notebook_kernel", "jupyter_servers", "notebook_in_prompt"]

log = get_logger(__name__)

NOTEBOOK_MIME = "application/x-ipynb+json"
_CONNECT_SECONDS = 10.0
_BUSY_MARGIN = 30.0  # seconds beyond a tool's own bound: the person's own cell may be running first
_BRIDGE = "__import__('architect_nb.notebook.kernel.kernel_bridge', fromlist=['call'])"


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """A running Jupyter server, as its `jpserver-<pid>.json` describes it."""

    url: str
    token: str
    root_dir: Path
    pid: int
    runtime_dir: Path  # where its info file is, and its kernels' connection files

    def api(self, path: str, *, method: str = "GET", timeout: float = 5.0) -> Any:
        request = urllib.request.Request(  # noqa: S310 - the server's own http(s) URL from its info file
            urllib.parse.urljoin(self.url if self.url.endswith("/") else self.url + "/", path),
            method=method,
            headers={"Authorization": f"token {self.token}"} if self.token else {},
            data=b"" if method == "POST" else None,
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - a local server's URL
            body = response.read()
        return json.loads(body) if body else None


def jupyter_servers(runtime_dir: Path | None = None) -> list[ServerInfo]:
    """The running Jupyter servers of this user, the agent's parent process first (Jupyter AI starts it)."""
    if runtime_dir is None:
        from jupyter_core.paths import jupyter_runtime_dir

        runtime_dir = Path(jupyter_runtime_dir())
    servers: list[ServerInfo] = []
    for info_file in sorted(runtime_dir.glob("jpserver-*.json")):
        try:
            info = json.loads(info_file.read_text())
            server = ServerInfo(
                url=str(info["url"]),
                token=str(info.get("token", "")),
                root_dir=Path(info["root_dir"]).expanduser(),
                pid=int(info["pid"]),
                runtime_dir=info_file.parent,
            )
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a stale or half-written file
        servers.append(server)
    parent = os.getppid()
    return sorted(servers, key=lambda s: s.pid != parent)


def notebook_in_prompt(blocks: list[Any], cwd: Path) -> Path | None:
    """The notebook the prompt attaches (Jupyter AI's open notebook), as an absolute path; the last one."""
    found: Path | None = None
    for block in blocks:
        if getattr(block, "type", None) not in ("resource_link", "resource"):
            continue
        resource = getattr(block, "resource", block)
        uri = str(getattr(resource, "uri", "") or "")
        mime = getattr(resource, "mime_type", None) or getattr(block, "mime_type", None)
        if mime != NOTEBOOK_MIME and not uri.endswith(".ipynb"):
            continue
        parsed = urllib.parse.urlparse(uri)
        path = Path(urllib.parse.unquote(parsed.path)) if parsed.scheme == "file" else Path(uri)
        found = path if path.is_absolute() else cwd / path
    return found


class NotebookKernel:
    """A client of a notebook's running kernel, and the server that runs it. Thread-safe calls."""

    def __init__(self, server: ServerInfo, notebook: str, kernel_id: str, connection_file: Path) -> None:
        self.server = server
        self.notebook = notebook  # relative to the server's root folder, as its sessions name it
        self.kernel_id = kernel_id
        self.connection_file = connection_file
        self._lock = threading.Lock()
        self._client: Any = None
        self._calling = threading.Event()  # one of our tools runs in the kernel now

    def connect(self) -> str | None:
        """Open the channels and check the kernel answers; returns why not, or None."""
        from jupyter_client.blocking.client import BlockingKernelClient

        client = BlockingKernelClient()
        try:
            client.load_connection_file(str(self.connection_file))
            # Shell alone: the iopub channel would queue everything the notebook shows, for nobody.
            client.start_channels(shell=True, iopub=False, stdin=False, hb=False, control=False)  # noqa: S604
            reply = _reply(client, client.kernel_info(), _CONNECT_SECONDS)
        except (OSError, ValueError, RuntimeError) as exc:
            client.stop_channels()
            return f"its kernel could not be reached ({type(exc).__name__}: {exc})"
        if reply is None:
            client.stop_channels()
            return f"its kernel did not answer within {_CONNECT_SECONDS:g} s (is it busy or dead?)"
        self._client = client
        return None

    def call(
        self, run: str, tool: str, arguments: dict[str, Any], workspace: str, timeout: float
    ) -> ToolResult:
        """Run kernel tool `tool` in the kernel (see `kernel_bridge.call`) and return its result."""
        expression = (
            f"{_BRIDGE}.call({run!r}, {tool!r}, __import__('json').loads({json.dumps(arguments)!r}), "
            f"{workspace!r}, {float(timeout)!r})"
        )
        reply = self._evaluate(expression, timeout + _BUSY_MARGIN)
        if isinstance(reply, ToolResult):
            return reply
        try:
            answer = json.loads(reply)
            result = ToolResult(
                success=bool(answer["success"]),
                output=str(answer.get("output") or ""),
                error=answer.get("error"),
                metadata=cast(ToolMetadata, answer.get("metadata") or {}),
            )
        except (ValueError, KeyError, TypeError):
            return ToolResult.fail(f"The notebook's kernel answered {tool} in a form not understood.")
        return result

    def bridge(self, call: str, seconds: float = 60.0) -> dict[str, Any]:
        """`kernel_bridge.<call>` evaluated in the kernel, its JSON answer read; `{"error": ...}` when the
        kernel cannot be reached or answers in a form not understood."""
        opened = False
        if self._client is None:  # an undo after the run: its connection was closed when the run ended
            if (why := self.connect()) is not None:
                return {"error": f"the notebook's kernel cannot be reached: {why}"}
            opened = True
        try:
            reply = self._evaluate(f"{_BRIDGE}.{call}", seconds)
        finally:
            if opened:
                self.close()
        if isinstance(reply, ToolResult):
            return {"error": reply.error or "the notebook's kernel did not answer"}
        try:
            answer = json.loads(reply)
        except ValueError:
            return {"error": "the notebook's kernel answered in a form not understood"}
        return answer if isinstance(answer, dict) else {"error": "the notebook's kernel answered oddly"}

    def forget(self, run: str) -> None:
        """Drop the run's scratch names in the kernel (best effort)."""
        self._evaluate(f"{_BRIDGE}.forget({run!r})", 5.0)

    def interrupt_own(self) -> None:
        """Interrupt the kernel if one of our tools runs there, as the notebook's stop button does (the
        server does it); never the person's own cell."""
        if not self._calling.is_set():
            return
        try:
            self.server.api(f"api/kernels/{self.kernel_id}/interrupt", method="POST")
        except OSError as exc:
            log.warning("kernel_interrupt_failed", kernel=self.kernel_id, error=str(exc))

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.stop_channels()
                self._client = None

    def _evaluate(self, expression: str, seconds: float) -> str | ToolResult:
        """`expression`'s value (a str) from a silent execute request: no count, no history, no output."""
        with self._lock:
            client = self._client
            if client is None:
                return ToolResult.fail("The notebook's kernel is not connected any more.")
            msg_id = client.execute(
                "", silent=True, store_history=False, user_expressions={"r": expression}, allow_stdin=False
            )
            self._calling.set()
            try:
                reply = _reply(client, msg_id, seconds)
            finally:
                self._calling.clear()
        if reply is None:
            return ToolResult.fail(
                f"The notebook's kernel did not answer within {seconds:g} s: a cell may be running there. "
                "Try again when it is idle."
            )
        value = (reply.get("content", {}).get("user_expressions") or {}).get("r") or {}
        if value.get("status") != "ok":
            name, message = value.get("ename", "Error"), value.get("evalue", "")
            if name in ("ModuleNotFoundError", "ImportError"):
                return ToolResult.fail(
                    "architect-nb is not installed in the notebook's kernel, so the kernel tools cannot run "
                    f"there ({name}: {message}). Install it in the kernel's environment."
                )
            return ToolResult.fail(f"The notebook's kernel could not run the tool ({name}: {message}).")
        text = (value.get("data") or {}).get("text/plain", "")
        try:
            evaluated = ast.literal_eval(text)  # the repr of the str the bridge returned
        except (ValueError, SyntaxError):
            return ToolResult.fail("The notebook's kernel answered in a form not understood.")
        return str(evaluated)


def connect_notebook_kernel(notebook: Path, servers: list[ServerInfo] | None = None) -> NotebookKernel | str:
    """The running kernel of `notebook` (an absolute path), connected; or why not (a sentence's end)."""
    candidates = [s for s in (servers if servers is not None else jupyter_servers()) if _inside(notebook, s)]
    if not candidates:
        return "no running Jupyter server serves that folder"
    answered = False
    for server in candidates:
        relative = notebook.resolve().relative_to(server.root_dir.resolve()).as_posix()
        try:
            sessions = server.api("api/sessions")
        except (OSError, ValueError) as exc:
            log.warning("jupyter_sessions_unreadable", server=server.url, error=str(exc))
            continue
        answered = True
        kernel_id = next(
            (
                str(s["kernel"]["id"])
                for s in sessions or ()
                if isinstance(s, dict) and s.get("path") == relative and isinstance(s.get("kernel"), dict)
            ),
            None,
        )
        if kernel_id is None:
            continue
        connection = server.runtime_dir / f"kernel-{kernel_id}.json"
        if not connection.is_file():
            return "its kernel runs elsewhere (no connection file here: a remote kernel or a gateway)"
        kernel = NotebookKernel(server, relative, kernel_id, connection)
        problem = kernel.connect()
        return kernel if problem is None else problem
    if not answered:
        return "the Jupyter server serving it did not answer"
    return "it has no running kernel (open it and start one)"


def _inside(path: Path, server: ServerInfo) -> bool:
    try:
        path.resolve().relative_to(server.root_dir.resolve())
    except ValueError:
        return False
    return True


def _reply(client: Any, msg_id: str, seconds: float) -> dict[str, Any] | None:
    """The shell reply to `msg_id`, or None after `seconds` (other replies on the way are skipped)."""
    import queue

    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            message: dict[str, Any] = client.get_shell_msg(timeout=min(left, 1.0))
        except queue.Empty:
            continue
        if message.get("parent_header", {}).get("msg_id") == msg_id:
            return message
    return None

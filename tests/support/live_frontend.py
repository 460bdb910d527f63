"""A front end with notebooks open, played over `jupyter_client` against a real kernel's document channel.

It does what the labextension's `KernelLink` does (`labextension/src/liveedits.ts`): opens its comm (target
`architect-nb-documents`) when started, again when the kernel says hello, and at once when a kernel that had
accepted it drops it; then answers the kernel's claims, reads and applies from its `OpenNotebooks`. It runs
on its own kernel client and thread, as a browser tab would, while the test runs cells through the harness.
Hooks let a test make it slow, silent, close or rename a notebook when a request comes, or shared (RTC).
"""

from __future__ import annotations

import contextlib
import queue
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jupyter_client.blocking import BlockingKernelClient

from architect_nb.testing.open_notebooks import OpenDocument, OpenNotebooks

TARGET = "architect-nb-documents"


class DocumentFrontEnd:
    """One browser tab connected to the kernel of `km`, with `notebooks` open."""

    def __init__(
        self,
        km: Any,
        root: Path,
        session: str,
        *,
        where: str = "JupyterLab",
        shared: bool = False,
        outputs: str = "kernel",
    ) -> None:
        self.root = root
        self.outputs = (
            outputs  # "server": its server runs cells and writes outputs (jupyter-server-documents)
        )
        self.session = session
        self.notebooks = OpenNotebooks(where, shared=shared)
        self.app = uuid.uuid4().hex[:12]
        # Its own client and session, as another browser tab has (km.client() would share the test's session).
        self.kc = BlockingKernelClient(connection_file=km.connection_file)
        self.kc.load_connection_file()
        # No heartbeat: a client not made by a KernelManager calls the kernel dead after one heartbeat missed
        # by a second, which a loaded machine can miss; kernel_info is retried to the bound instead.
        self.kc.start_channels(hb=False)
        self.kc.wait_for_ready(timeout=60)
        self.comm_id: str | None = None
        self.accepted = False
        self.requests: list[dict[str, Any]] = []
        self.silent = False  # never answer (a frozen or reloading tab)
        self.before_answer: Callable[[dict[str, Any]], None] | None = None
        self.opened = 0
        self._stop = threading.Event()
        self._outbox: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="document-front-end", daemon=True)
        self._thread.start()
        self.connect()

    def open(self, path: Path) -> OpenDocument:
        return self.notebooks.open(path, key=path.relative_to(self.root).as_posix())

    # ------------------------------------------------------------------ the comm

    def connect(self) -> None:
        self.comm_id = uuid.uuid4().hex
        self.accepted = False
        self.opened += 1
        data = {
            "type": "client",
            "protocol": 1,
            "app": self.app,
            "where": self.notebooks.where,
            "root": str(self.root),
            "outputs": self.outputs,
            "session": self.session,
        }
        self._send("comm_open", {"comm_id": self.comm_id, "target_name": TARGET, "data": data})

    def _send(self, msg_type: str, content: dict[str, Any]) -> None:
        self._outbox.put(self.kc.session.msg(msg_type, content))

    def _run(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(queue.Empty):
                while True:
                    self.kc.shell_channel.send(self._outbox.get_nowait())
            try:
                msg = self.kc.iopub_channel.get_msg(timeout=0.02)
            except queue.Empty:
                continue
            with contextlib.suppress(Exception):  # a closed channel at the end of a test
                self._on_iopub(msg)
            while self.kc.shell_channel.msg_ready():
                self.kc.shell_channel.get_msg(timeout=0)

    def _on_iopub(self, msg: dict[str, Any]) -> None:
        kind, content = msg["msg_type"], msg["content"]
        if kind == "comm_open" and content.get("target_name") == TARGET:
            if not self.accepted:
                self.connect()  # the kernel says hello: it loaded architect_nb
        elif kind == "comm_close" and content.get("comm_id") == self.comm_id:
            was_accepted, self.comm_id, self.accepted = self.accepted, None, False
            if was_accepted and not self._stop.is_set():
                self.connect()  # dropped by a kernel that has the target: come back
        elif kind == "comm_msg" and content.get("comm_id") == self.comm_id:
            data = content.get("data") or {}
            if data.get("type") == "welcome":
                self.accepted = True
            elif isinstance(data.get("req"), int):
                self.requests.append(data)
                if self.silent:
                    return
                if self.before_answer is not None:
                    self.before_answer(data)
                answer = self.notebooks.answer(data)
                for doc in answer.get("docs", []):
                    doc["app"] = self.app
                self._send("comm_msg", {"comm_id": self.comm_id, "data": {**answer, "req": data["req"]}})

    def restarted(self) -> None:
        """The kernel restarted (JupyterLab hears so from the server: status 'restarting'); the comm is gone.
        Without architect_nb loaded the new kernel refuses a new one; its hello brings it back."""
        self.comm_id, self.accepted = None, False
        self.connect()

    def vanish(self) -> None:
        """The tab is gone without a word (closed, its browser killed): its comm is never closed, so the
        kernel learns it only when a request goes unanswered."""
        self._stop.set()
        self._thread.join(timeout=5)
        self.comm_id, self.accepted = None, False
        self.kc.stop_channels()

    def close(self) -> None:
        """The tab closes: its comm is closed, as the labextension's `dispose` does, so the kernel forgets
        this front end (a kernel shared by several tests then holds no earlier test's front end)."""
        self._stop.set()
        self._thread.join(timeout=5)
        if self.comm_id is not None:
            self.kc.shell_channel.send(
                self.kc.session.msg("comm_close", {"comm_id": self.comm_id, "data": {}})
            )
            self.comm_id, self.accepted = None, False
        self.kc.stop_channels()

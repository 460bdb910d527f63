"""One identity per browser tab on the kernel's shell channel, under jupyter-server-documents.

jupyter-server-documents 0.3.3 gives each tab's websocket a kernel client made by `kernel_manager.client()`,
which shares the manager's `Session`, and with it the ZMQ identity of the shell, control and stdin sockets.
ipykernel's ROUTER hands an identity over to the newest socket that claims it, so with two tabs open only one
reaches the kernel: the other's comm messages (an Approve click, an answer about an open notebook) are lost,
and replies go to the wrong tab. Stock Jupyter Server gives each websocket the tab's own session id (from the
URL); this does the same for jupyter-server-documents' connection, so its behaviour is otherwise unchanged.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["DOCUMENTS_CONNECTION", "own_identities"]

#: The websocket connection class jupyter-server-documents configures (its `ServerApp` setting).
DOCUMENTS_CONNECTION = "jupyter_server_documents.websocket_connection.KernelWebsocketConnection"
_CHANNELS = ("shell", "control", "stdin", "iopub")


def own_identities(connection_class: Any) -> type | None:
    """A subclass of jupyter-server-documents' connection whose kernel client has the tab's own session id;
    None for any other connection class (stock Jupyter Server's already has it)."""
    if not isinstance(connection_class, type):
        return None
    if f"{connection_class.__module__}.{connection_class.__qualname__}" != DOCUMENTS_CONNECTION:
        return None
    if not callable(getattr(connection_class, "_listen", None)):
        return None  # another version, written otherwise: left as it is rather than guessed at

    class OwnIdentityConnection(connection_class):  # type: ignore[misc]
        """jupyter-server-documents' connection, with this tab's identity on the kernel's sockets."""

        async def connect(self) -> None:
            try:
                # The kernel's key and signature scheme, with this websocket's own id (the tab's).
                session = self.kernel_manager.session.clone()
                session.session = self.session.session
                client = self.kernel_manager.client(session=session)
            except Exception:  # a kernel manager unlike jupyter_client's: the server's own way, as before
                self.log.warning("architect-nb: kept the shared kernel identity", exc_info=True)
                await super().connect()
                return
            self._client = client
            self._client.start_channels(hb=False)
            self._tasks = [asyncio.create_task(self._listen(channel)) for channel in _CHANNELS]

    OwnIdentityConnection.__qualname__ = OwnIdentityConnection.__name__
    OwnIdentityConnection.__module__ = __name__
    return OwnIdentityConnection

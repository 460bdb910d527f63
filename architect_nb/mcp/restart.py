"""`RestartingConnection`: a server that went away is started again for the next call, a few times per run.

A stdio server can crash (a bug, an out-of-memory kill) and an HTTP server can drop its session. The call
that was running fails, as it must: it may have done half its work, so it is never retried. The next call
to one of the server's tools first starts a fresh connection, up to `mcp.servers[].restarts` times per run;
after that the tools fail fast with a message telling the model to continue without them.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from architect_nb.log import get_logger
from architect_nb.mcp.client import MCPCallError, MCPConnectionError, MCPServerConnection

if TYPE_CHECKING:
    from mcp.types import CallToolResult

__all__ = ["RestartingConnection"]


class RestartingConnection:
    """Wraps the current `MCPServerConnection` of one server; adapters call through it."""

    def __init__(self, connection: MCPServerConnection) -> None:
        self.current = connection
        self.name = connection.name
        self.restarts_left = connection.config.restarts
        self._lock = threading.Lock()

    def call_tool(
        self, name: str, arguments: Mapping[str, Any], timeout: float | None = None
    ) -> CallToolResult:
        connection = self._connection()
        try:
            return connection.call_tool(name, arguments, timeout)
        except MCPCallError as exc:
            if exc.server_gone is not None and self.restarts_left > 0:
                raise MCPCallError(
                    f"{exc.server_gone} It will be started again for the next call to its tools; do not "
                    "repeat this call unless you know it did not take effect.",
                    server_gone=exc.server_gone,
                ) from None
            raise

    def _connection(self) -> MCPServerConnection:
        """The connection to call: a fresh one if the server went away and a restart is left."""
        with self._lock:
            old = self.current
            if not old.gone or self.restarts_left <= 0:
                return old
            self.restarts_left -= 1
            old.close()
            fresh = MCPServerConnection(old.config)
            try:
                fresh.connect()
            except MCPConnectionError as exc:
                raise MCPCallError(f"{exc} Its tools are unavailable for the rest of this run.") from None
            get_logger(__name__).warning("mcp_server_restarted", server=self.name, left=self.restarts_left)
            self.current = fresh
            return fresh

    def close(self) -> None:
        with self._lock:
            self.current.close()

"""Connect to the servers in `mcp.servers`, register their tools, and let agents with a tool list see them.

A server that cannot be started or reached is left out with a warning; the run goes on with the others.
"""

from __future__ import annotations

import atexit
import os
import threading
import weakref
from collections.abc import Iterable

from architect_nb.config.schema import MCPConfig, MCPServerConfig
from architect_nb.log import get_logger
from architect_nb.mcp.adapter import MCPToolAdapter
from architect_nb.mcp.client import MCPConnectionError, MCPServerConnection
from architect_nb.mcp.restart import RestartingConnection
from architect_nb.tools.registry import ToolRegistry

__all__ = ["MCPManager", "close_all_mcp_servers", "inject_mcp_tools", "register_mcp_tools"]

_live_managers: weakref.WeakSet[MCPManager] = weakref.WeakSet()


class MCPManager:
    """Owns the connections to the configured MCP servers; `close()` ends them all and stops their processes.

    Use it as a context manager, or call `close()`; managers still open at interpreter exit are closed then.
    """

    def __init__(self, config: MCPConfig) -> None:
        self.config = config
        self.servers: list[RestartingConnection] = []  # one per connected server; restarts it if it stops
        self.tools: list[MCPToolAdapter] = []
        self.warnings: list[str] = []
        self._started = False
        self._lock = threading.Lock()
        _live_managers.add(self)

    def start(self) -> list[str]:
        """Connect to every server at once and build its tools. Returns the warnings (also in `warnings`)."""
        with self._lock:
            if self._started:
                return list(self.warnings)
            self._started = True
        candidates: list[MCPServerConnection] = []
        seen: set[str] = set()
        for index, server in enumerate(self.config.servers):
            problem = _config_problem(server, index, seen)
            seen.add(server.name)
            if problem:
                self._warn(problem, server.name)
            else:
                candidates.append(MCPServerConnection(server))
        errors: dict[int, str] = {}

        def connect(i: int, connection: MCPServerConnection) -> None:
            try:
                connection.connect()
            except MCPConnectionError as exc:
                errors[i] = str(exc)
            except Exception as exc:  # a bug must not take the whole run down
                errors[i] = f"MCP server {connection.name!r} failed to start ({type(exc).__name__}: {exc})."

        threads = [
            threading.Thread(target=connect, args=(i, c), name=f"mcp-connect-{c.name}", daemon=True)
            for i, c in enumerate(candidates)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        taken: set[str] = set()
        for i, connection in enumerate(candidates):
            if i in errors:
                self._warn(f"{errors[i]} Its tools are left out of this run.", connection.name)
                continue
            restarting = RestartingConnection(connection)
            self.servers.append(restarting)
            for definition in connection.tools:
                tool = MCPToolAdapter.create(restarting, definition, taken=taken)
                taken.add(tool.name)
                self.tools.append(tool)
        return list(self.warnings)

    @property
    def connections(self) -> list[MCPServerConnection]:
        """Each server's current connection (a new one after a restart)."""
        return [server.current for server in self.servers]

    def register_tools(self, registry: ToolRegistry) -> list[str]:
        """`start()`, then register every discovered tool in `registry`. Returns the warnings."""
        self.start()
        warnings = list(self.warnings)
        for tool in self.tools:
            if registry.has_tool(tool.name):
                if registry.get(tool.name) is not tool:
                    message = f"A tool named {tool.name!r} is already registered; the MCP one is left out."
                    get_logger(__name__).warning("mcp_tool_skipped", tool=tool.name, reason=message)
                    warnings.append(message)
                continue
            registry.register(tool)
        return warnings

    def close(self) -> None:
        """Close every connection (stopping stdio servers). Safe to call twice."""
        for server in self.servers:
            server.close()
        _live_managers.discard(self)

    def __enter__(self) -> MCPManager:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<MCPManager servers={[c.name for c in self.connections]} tools={len(self.tools)}>"

    def _warn(self, message: str, server: str) -> None:
        self.warnings.append(message)
        get_logger(__name__).warning("mcp_server_skipped", server=server, reason=message)


def register_mcp_tools(
    registry: ToolRegistry, mcp_config: MCPConfig, *, manager: MCPManager | None = None
) -> list[str]:
    """Connect to the servers in `mcp_config` and register their tools in `registry`. Never raises for a
    server that is down: returns one warning per server (or tool) left out.

    The connections belong to `manager` when given (close it to stop the servers); otherwise to a new
    manager that is closed by `close_all_mcp_servers()` or at interpreter exit.
    """
    manager = manager if manager is not None else MCPManager(mcp_config)
    return manager.register_tools(registry)


def inject_mcp_tools(allowed_tools: list[str] | None, registry: ToolRegistry) -> list[str] | None:
    """An agent's explicit `allowed_tools` plus every MCP tool in `registry` (the design's v0.16.2 rule).

    `None` (every tool allowed) and `[]` (no tools at all) are returned unchanged; the input is not mutated.
    """
    if not allowed_tools:
        return allowed_tools
    extra = [tool.name for tool in registry.list_all() if isinstance(tool, MCPToolAdapter)]
    return list(allowed_tools) + [name for name in extra if name not in allowed_tools]


def close_all_mcp_servers() -> None:
    """Close every manager still open in this process."""
    for manager in list(_live_managers):
        manager.close()


atexit.register(close_all_mcp_servers)


def _config_problem(server: MCPServerConfig, index: int, seen: Iterable[str]) -> str | None:
    where = f"MCP server {server.name!r} (mcp.servers[{index}])"
    if server.name in seen:
        return f"{where} has the same name as an earlier server; rename one of them. It is left out."
    if bool(server.command) == bool(server.url):
        return f"{where} needs exactly one of `command` (stdio) or `url` (HTTP). It is left out."
    if server.url and not server.url.startswith(("http://", "https://")):
        return f"{where} has url {server.url!r}, which is not http(s). It is left out."
    if server.token_env and not os.environ.get(server.token_env):
        return (
            f"{where} takes its token from the environment variable {server.token_env!r}, which is not set. "
            "It is left out."
        )
    return None

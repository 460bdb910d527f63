"""`MCPServerConnection`: one MCP server, callable from any thread.

The official SDK is async and its sessions live inside task groups that must be entered and left by the same
task. Each connection therefore runs its own event loop in a dedicated thread (an anyio blocking portal):
one long-lived task there opens the transport and the session and holds them until `close()`; tool calls
from the agent loop or the notebook's worker threads are submitted to that loop and waited on with a timeout.
A server that hangs or dies can only ever affect its own thread.

Exceptions::

    Exception
     └── MCPServerError          something went wrong talking to an MCP server
          ├── MCPConnectionError   it could not be started, reached or initialised
          └── MCPCallError         one call failed: timeout, server gone, protocol error
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import tempfile
import threading
from collections.abc import Mapping
from typing import IO, TYPE_CHECKING, Any

from architect_nb.config.schema import MCPServerConfig
from architect_nb.log import get_logger

if TYPE_CHECKING:
    import anyio
    from anyio.from_thread import BlockingPortal
    from mcp import Client
    from mcp.types import CallToolResult, Tool

__all__ = ["MCPCallError", "MCPConnectionError", "MCPServerConnection", "MCPServerError"]

_STDERR_TAIL = 600
# Extra seconds the calling thread waits past a call's own timeout before giving up on the event loop.
_BACKSTOP = 5.0
_MAX_TOOL_PAGES = 100
# Seconds close() waits for a graceful end, then again after cancelling (the SDK's own stdio shutdown, stdin
# closed → SIGTERM → SIGKILL, is bounded at about 6 s).
_CLOSE_GRACE = 10.0
#: Ends the message of a call during which the server went away (`RestartingConnection` gives its own).
_GONE_ADVICE = "Its tools are unavailable for the rest of this run; continue without them."


class MCPServerError(Exception):
    """Base class of the MCP errors."""


class MCPConnectionError(MCPServerError):
    """The server could not be started, reached or initialised."""


class MCPCallError(MCPServerError):
    """One tool call failed for a reason other than the tool itself reporting an error.

    `server_gone` holds what happened when the server went away during the call (the message without the
    advice that follows it), so a caller that can restart the server can give its own advice.
    """

    def __init__(self, message: str, *, server_gone: str | None = None) -> None:
        super().__init__(message)
        self.server_gone = server_gone


class MCPServerConnection:
    """A live connection to one configured MCP server (stdio or streamable HTTP).

    Call `connect()` once, then `call_tool()` from any thread; `close()` ends the session and the server's
    process. Usable as a context manager.
    """

    def __init__(self, config: MCPServerConfig) -> None:
        self.config = config
        self.name = config.name
        self.tools: list[Tool] = []
        self._lock = threading.Lock()
        self._exit_stack = contextlib.ExitStack()
        self._portal: BlockingPortal | None = None
        self._holder: concurrent.futures.Future[None] | None = None
        self._ready = threading.Event()
        self._stop: anyio.Event | None = None
        self._client: Client | None = None
        self._error: BaseException | None = None
        self._gone: str | None = None
        self._stderr: IO[str] | None = None
        self._started = False
        self._closed = False

    # -- lifecycle ------------------------------------------------------------------------------------------

    def connect(self) -> list[Tool]:
        """Start (or reach) the server, run the handshake and list its tools.

        Raises:
            MCPConnectionError: with a sentence saying what failed and what to check.
        """
        with self._lock:
            if self._started or self._closed:
                raise RuntimeError(
                    f"MCP server {self.name!r} was already connected; create a new connection."
                )
            self._started = True
        try:
            self._start_loop()
        except Exception as exc:
            self.close()
            raise MCPConnectionError(
                f"MCP server {self.name!r} could not be started ({type(exc).__name__}: {exc})."
            ) from exc
        timeout = float(self.config.startup_timeout)
        if not self._ready.wait(timeout):
            self.close()
            raise MCPConnectionError(
                f"MCP server {self.name!r} did not finish starting within {timeout:g} s"
                f"{self._stderr_note()}. Check that it starts by hand, or raise "
                "mcp.servers[].startup_timeout."
            )
        if self._error is not None or self._client is None:
            message = self._describe_startup_error(self._error)
            self.close()
            raise MCPConnectionError(message)
        return self.tools

    def close(self) -> None:
        """End the session and stop the server (its process tree for stdio). Safe to call twice."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            portal, holder = self._portal, self._holder
        if portal is not None and holder is not None:
            if not holder.done():
                if self._client is not None and self._stop is not None:
                    with contextlib.suppress(Exception):
                        portal.call(
                            self._stop.set
                        )  # a graceful end: the SDK closes the session, then the process
                else:
                    holder.cancel()  # still starting: abandon the start-up
                if not _wait(holder, _CLOSE_GRACE):
                    holder.cancel()
                    _wait(holder, _CLOSE_GRACE)
            with contextlib.suppress(RuntimeError):
                portal.call(portal.stop, True)  # cancel calls still in flight rather than wait for them
        self._client = None
        self._exit_stack.close()  # joins the event loop's thread
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    @property
    def gone(self) -> bool:
        """The server went away (crashed, or its connection broke) while this connection was open."""
        return self._gone is not None and not self._closed

    @property
    def alive(self) -> bool:
        """Connected, not closed, and the server has not gone away."""
        return self._client is not None and self._gone is None and not self._closed

    def __enter__(self) -> MCPServerConnection:
        self.connect()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "alive" if self.alive else ("closed" if self._closed else "not connected")
        return f"<MCPServerConnection {self.name!r} {state} tools={len(self.tools)}>"

    # -- calls --------------------------------------------------------------------------------------------

    def call_tool(
        self, name: str, arguments: Mapping[str, Any], timeout: float | None = None
    ) -> CallToolResult:
        """Call the server's tool `name` (its own name, not the `mcp_...` one) and wait for the result.

        Raises:
            MCPCallError: timeout, server gone, or a protocol-level error; the message says what to do next.
        """
        timeout = float(self.config.timeout if timeout is None else timeout)
        portal = self._portal
        if self._closed or portal is None or self._client is None:
            raise MCPCallError(f"MCP server {self.name!r} is not connected; its tools cannot be used now.")
        if self._gone is not None:
            raise MCPCallError(
                f"MCP server {self.name!r} is no longer running ({self._gone}); its tools are unavailable "
                "for the rest of this run. Continue without them."
            )
        try:
            future = portal.start_task_soon(self._call, name, dict(arguments), timeout)
        except RuntimeError as exc:  # the loop has stopped
            raise MCPCallError(f"MCP server {self.name!r} is not connected ({exc}).") from None
        try:
            result: CallToolResult = future.result(timeout=timeout + _BACKSTOP)
            return result
        except (TimeoutError, concurrent.futures.TimeoutError):
            future.cancel()
            raise self._timeout_error(name, timeout) from None
        except concurrent.futures.CancelledError:
            raise MCPCallError(f"The call to {name!r} on MCP server {self.name!r} was cancelled.") from None

    async def _call(self, name: str, arguments: dict[str, Any], timeout: float) -> CallToolResult:
        import anyio
        from mcp import MCPError

        client = self._client
        if client is None:
            raise MCPCallError(f"MCP server {self.name!r} is not connected.")
        try:
            with anyio.fail_after(timeout):
                result: CallToolResult = await client.call_tool(name, arguments)
                return result
        except TimeoutError:
            raise self._timeout_error(name, timeout) from None
        except MCPError as exc:
            if self._process_gone() or _is_connection_closed(exc):
                self._mark_gone(f"connection closed: {exc}")
                raise _gone_error(
                    f"MCP server {self.name!r} stopped while running {name!r} ({exc}){self._stderr_note()}."
                ) from None
            raise MCPCallError(f"MCP server {self.name!r} refused the call to {name!r}: {exc}") from None
        except MCPServerError:
            raise
        except Exception as exc:
            reason = _leaf(exc)
            self._mark_gone(f"{type(reason).__name__}: {reason}")
            raise _gone_error(
                f"MCP server {self.name!r} failed while running {name!r} "
                f"({type(reason).__name__}: {reason}){self._stderr_note()}."
            ) from None

    def _timeout_error(self, name: str, timeout: float) -> MCPCallError:
        return MCPCallError(
            f"The MCP tool {name!r} on server {self.name!r} did not answer within {timeout:g} s. "
            "Try a smaller request, or do the work another way; the timeout is mcp.servers[].timeout."
        )

    def _mark_gone(self, reason: str) -> None:
        if self._gone is None:
            self._gone = reason
            get_logger(__name__).warning("mcp_server_gone", server=self.name, reason=reason)

    def _process_gone(self) -> bool:
        return False if self.config.url else self._holder is not None and self._holder.done()

    # -- the event-loop side ------------------------------------------------------------------------------

    def _start_loop(self) -> None:
        # mcp is imported here rather than on the event loop, where the import would block it for 0.5 s.
        import mcp  # noqa: F401
        from anyio.from_thread import start_blocking_portal

        self._portal = self._exit_stack.enter_context(start_blocking_portal(name=f"mcp-{self.name}"))
        self._stop = self._portal.call(_new_event)
        self._holder = self._portal.start_task_soon(self._hold)

    async def _hold(self) -> None:
        """Open the session, list the tools, then keep everything open until `close()` sets the stop event."""
        try:
            async with contextlib.AsyncExitStack() as stack:
                client = await self._open(stack)
                self.tools = await _list_all_tools(client)
                self._client = client
                self._ready.set()
                assert self._stop is not None
                await self._stop.wait()
        except Exception as exc:
            self._error = exc
            if self._client is not None:
                self._mark_gone(f"{type(_leaf(exc)).__name__}: {_leaf(exc)}")
        finally:
            self._client = None
            self._ready.set()

    async def _open(self, stack: contextlib.AsyncExitStack) -> Client:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client
        from mcp.client.streamable_http import streamable_http_client
        from mcp.types import Implementation

        from architect_nb import __version__

        info = Implementation(name="architect-nb", version=__version__)
        config = self.config
        if config.url:
            import httpx2

            headers = {}
            if config.token_env:
                headers["Authorization"] = f"Bearer {os.environ[config.token_env]}"
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0))
            )
            transport = streamable_http_client(config.url, http_client=http)
        else:
            assert config.command is not None
            self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
            params = StdioServerParameters(
                command=config.command, args=list(config.args), env=dict(config.env)
            )
            transport = stdio_client(params, errlog=self._stderr)
        client = Client(transport, cache=None, client_info=info)
        return await stack.enter_async_context(client)

    # -- diagnostics --------------------------------------------------------------------------------------

    def _describe_startup_error(self, error: BaseException | None) -> str:
        where = f"MCP server {self.name!r}"
        leaf = _leaf(error) if error is not None else None
        if isinstance(leaf, FileNotFoundError) and not self.config.url:
            return f"{where} could not start: command {self.config.command!r} was not found; check `command`."
        if isinstance(leaf, PermissionError) and not self.config.url:
            return f"{where} could not start: {self.config.command!r} is not executable ({leaf})."
        if leaf is None:
            return f"{where} closed the connection during start-up{self._stderr_note()}."
        detail = f"{type(leaf).__name__}: {leaf}" if str(leaf) else type(leaf).__name__
        target = f"at {self.config.url}" if self.config.url else f"command {self.config.command!r}"
        hint = ""
        if self.config.url:
            hint = " Check that the server is running at that url"
            if self.config.token_env:
                hint += f" and that the token in ${self.config.token_env} is right"
            hint += "."
        return f"{where} ({target}) could not be initialised ({detail}){self._stderr_note()}.{hint}"

    def _stderr_note(self) -> str:
        tail = self.stderr_tail()
        return f"; its stderr ends with: {tail!r}" if tail else ""

    def stderr_tail(self, limit: int = _STDERR_TAIL, lines: int = 3) -> str:
        """The last `lines` lines (at most `limit` characters) the server wrote to stderr (stdio only)."""
        stream = self._stderr
        if stream is None:
            return ""
        try:
            fd = stream.fileno()
            size = os.fstat(fd).st_size
            # pread leaves the file offset alone: the server process shares it.
            data = os.pread(fd, limit, max(0, size - limit))
        except (OSError, ValueError):
            return ""
        kept = [line for line in data.decode("utf-8", errors="replace").splitlines() if line.strip()]
        return "\n".join(kept[-lines:])[-limit:]


async def _list_all_tools(client: Client) -> list[Tool]:
    tools: list[Tool] = []
    cursor: str | None = None
    for _ in range(_MAX_TOOL_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _wait(future: concurrent.futures.Future[None], timeout: float) -> bool:
    """Whether `future` finished (in any way) within `timeout` seconds."""
    with contextlib.suppress(BaseException):
        future.result(timeout=timeout)
    return future.done()


def _is_connection_closed(exc: Exception) -> bool:
    """The SDK's own "Connection closed" error (its code, -32000, is also a generic server error code)."""
    from mcp.types import CONNECTION_CLOSED

    return getattr(exc, "code", None) == CONNECTION_CLOSED and "connection closed" in str(exc).lower()


def _new_event() -> anyio.Event:
    import anyio

    return anyio.Event()


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (possibly nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _gone_error(what_happened: str) -> MCPCallError:
    return MCPCallError(f"{what_happened} {_GONE_ADVICE}", server_gone=what_happened)

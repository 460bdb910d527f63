"""An ACP client for tests: the protocol SDK's client side, over stdio, against a real `architect-nb-acp`.

`RecordingClient` keeps every session update and permission request it gets, per session, and answers each
question from the session's script (`"approve"`, `"approve_all"`, `"deny"`, `"deny: REASON"`, `"wait"` (never
answer) or a callable), as an editor would. `start_agent` starts the console script from this venv.
`AgentThread` keeps one agent process and its connection on an event loop of their own, so one process
serves every test of a module (each test a session in its own workspace, whose `.architect.yaml` names its
script).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import gc
import os
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from acp import PROTOCOL_VERSION, spawn_agent_process
from acp.core import ClientSideConnection
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    Implementation,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)

ACP_SCRIPT = Path(sys.executable).with_name("architect-nb-acp")
T = TypeVar("T")
Answer = str | Callable[[ToolCallUpdate, list[PermissionOption]], RequestPermissionResponse]


class Recorded:
    """What one session got: its updates and questions, and the answers it gives, in order."""

    def __init__(self, answers: list[Answer] | None = None) -> None:
        self.answers: list[Answer] = list(answers or [])
        self.updates: list[Any] = []
        self.questions: list[tuple[ToolCallUpdate, list[PermissionOption]]] = []

    def of_kind(self, kind: str) -> list[Any]:
        return [u for u in self.updates if getattr(u, "session_update", None) == kind]

    async def quiet(self, still: float = 0.1) -> None:
        """Wait until no update came for `still` seconds. The SDK hands each notification to a task of its
        own, so a response can overtake the updates the agent sent before it."""
        seen = -1
        while seen != len(self.updates):
            seen = len(self.updates)
            await asyncio.sleep(still)

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(getattr(u.content, "text", "") for u in self.of_kind(kind))

    def dump(self) -> str:
        """Everything the agent sent, as JSON text: what a test searches for a secret."""
        parts = [u.model_dump_json(by_alias=True) for u in self.updates]
        parts += [q.model_dump_json(by_alias=True) for q, _ in self.questions]
        return "\n".join(parts)


class RecordingClient:
    """Records what the agent sends, per session; answers each session's questions from its script."""

    def __init__(self) -> None:
        self.sessions: dict[str, Recorded] = {}

    def session(self, session_id: str, answers: list[Answer] | None = None) -> Recorded:
        """The record of `session_id` (made on first use); `answers` replaces its script."""
        record = self.sessions.setdefault(session_id, Recorded())
        if answers is not None:
            record.answers = list(answers)
        return record

    async def request_permission(
        self, options: list[PermissionOption], session_id: str, tool_call: ToolCallUpdate, **_: Any
    ) -> RequestPermissionResponse:
        record = self.session(session_id)
        record.questions.append((tool_call, options))
        answer = record.answers.pop(0) if record.answers else "deny: no answer scripted"
        if callable(answer):
            return answer(tool_call, options)
        if answer == "wait":  # never answer: the test cancels
            await asyncio.Event().wait()
        word, _, reason = answer.partition(":")
        outcome = AllowedOutcome(option_id=word.strip(), outcome="selected")
        if reason.strip():
            outcome.field_meta = {"reason": reason.strip()}
        return RequestPermissionResponse(outcome=outcome)

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.session(session_id).updates.append(update)

    # What this client does not offer: the agent never calls these.
    async def write_text_file(self, **_: Any) -> None:
        raise NotImplementedError

    async def read_text_file(self, **_: Any) -> None:
        raise NotImplementedError

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def on_connect(self, conn: Any) -> None:
        return None


def cancelled() -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


class AgentThread:
    """An `architect-nb-acp` process and its connection, on an event loop in a thread of their own.

    `call(coroutine_function)` runs `coroutine_function(conn)` there and returns its result."""

    def __init__(self, cwd: Path, *args: str) -> None:
        self.client = RecordingClient()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="acp-test-client", daemon=True)
        self._thread.start()
        self._stop = asyncio.Event()
        self._ready: concurrent.futures.Future[tuple[ClientSideConnection, Any]] = concurrent.futures.Future()
        self._main = asyncio.run_coroutine_threadsafe(self._hold(cwd, args), self._loop)
        self.conn, self.process = self._ready.result(timeout=60)

    async def _hold(self, cwd: Path, args: tuple[str, ...]) -> None:
        try:
            async with start_agent(self.client, cwd, *args) as (conn, process):
                self._ready.set_result((conn, process))
                await self._stop.wait()
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            raise

    def call(self, work: Callable[[ClientSideConnection], Awaitable[T]], timeout: float = 60) -> T:
        return asyncio.run_coroutine_threadsafe(work(self.conn), self._loop).result(timeout)

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        with contextlib.suppress(Exception):
            self._main.result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        # Closed and collected now, not by a garbage collection that a later parse happens to start: a
        # finalizer warning inside pytest's `ast.parse` leaves CPython 3.11's AST depth count off (a false
        # "AST constructor recursion depth mismatch", python/cpython#106905).
        self._loop.close()
        gc.collect()


@contextlib.asynccontextmanager
async def start_agent(
    client: RecordingClient, workspace: Path, *args: str, env: dict[str, str] | None = None
) -> AsyncIterator[tuple[ClientSideConnection, asyncio.subprocess.Process]]:
    """`architect-nb-acp ARGS` in `workspace`, initialized; yields the connection and the process.

    The agent's stderr (its log) goes to `agent-stderr.log` beside the workspace, never to an unread pipe."""
    environment = {**os.environ, **(env or {})}
    log = (workspace.parent / "agent-stderr.log").open("ab")
    spawned = spawn_agent_process(
        client, str(ACP_SCRIPT), *args, cwd=workspace, env=environment, transport_kwargs={"stderr": log}
    )
    async with spawned as (conn, process):
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="architect-nb-tests", version="0"),
        )
        try:
            yield conn, process
        finally:
            log.close()

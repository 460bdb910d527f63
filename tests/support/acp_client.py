"""An ACP client for tests: the protocol SDK's client side, over stdio, against a real `architect-nb-acp`.

`RecordingClient` keeps every session update and permission request it gets and answers each question from
a script (`"approve"`, `"approve_all"`, `"deny"`, `"deny: REASON"` or a callable), as an editor would.
`start_agent` starts the console script from this venv in `workspace`, with the scripted model.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

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
Answer = str | Callable[[ToolCallUpdate, list[PermissionOption]], RequestPermissionResponse]


class RecordingClient:
    """Records what the agent sends; answers permission requests from `answers`, in order."""

    def __init__(self, answers: list[Answer] | None = None) -> None:
        self.answers: list[Answer] = list(answers or [])
        self.updates: list[Any] = []
        self.questions: list[tuple[ToolCallUpdate, list[PermissionOption]]] = []
        self.asked = asyncio.Event()

    async def request_permission(
        self, options: list[PermissionOption], session_id: str, tool_call: ToolCallUpdate, **_: Any
    ) -> RequestPermissionResponse:
        self.questions.append((tool_call, options))
        self.asked.set()
        answer = self.answers.pop(0) if self.answers else "deny: no answer scripted"
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
        self.updates.append(update)

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

    # ------------------------------------------------------------------ what the tests read

    def of_kind(self, kind: str) -> list[Any]:
        return [u for u in self.updates if getattr(u, "session_update", None) == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(getattr(u.content, "text", "") for u in self.of_kind(kind))

    def dump(self) -> str:
        """Everything the agent sent, as JSON text: what a test searches for a secret."""
        parts = [u.model_dump_json(by_alias=True) for u in self.updates]
        parts += [q.model_dump_json(by_alias=True) for q, _ in self.questions]
        return "\n".join(parts)


def cancelled() -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


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

"""`ArchitectAgent`: the ACP agent side. Sessions are architect-nb threads; prompts are runs.

- `session/new` starts a thread in the session's `cwd` (its `.architect.yaml` applies, and the workspace is
  that folder); the session id is the thread id, so `session/load` and `session/resume` find it on disk.
- `session/load` replays the conversation (tasks, answers, tool calls) as updates, then continues it;
  `session/list` lists the saved threads of a folder.
- `session/prompt` runs the agent (`AcpSession.run`); a prompt that is `/undo [RUN]` puts files back.
- `session/cancel` stops the run within a second.

When a prompt attaches a notebook (Jupyter AI attaches the one the person has open), its running kernel is
connected for the run and the kernel tools run there; otherwise they are left out, and the model is told so.
"""

from __future__ import annotations

import asyncio
import datetime
import os
import threading
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, start_tool_call, update_agent_message_text
from acp.helpers import update_available_commands, update_user_message_text
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AvailableCommand,
    AvailableCommandInput,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionResumeCapabilities,
    UnstructuredCommandInput,
)

import architect_nb
from architect_nb.acp.mcp_servers import with_offered_servers
from architect_nb.acp.notebook_kernel import notebook_in_prompt
from architect_nb.acp.outbox import Outbox
from architect_nb.acp.permissions import AcpConfirmer
from architect_nb.acp.session import NO_KERNEL_NOTE, AcpSession, SessionOptions
from architect_nb.acp.updates import tool_kind, tool_title
from architect_nb.agent.conversation.thread import Thread, ThreadError
from architect_nb.agent.conversation.thread_store import thread_store
from architect_nb.config import AppConfig, ConfigError, load_config
from architect_nb.log import get_logger
from architect_nb.redaction import default_redactor

__all__ = ["COMMANDS", "ArchitectAgent"]

log = get_logger(__name__)

THREAD_NAME = "acp"
COMMANDS = [
    AvailableCommand(
        name="undo",
        description="Put back the files the last run changed (or those of the run whose id you give)",
        input=AvailableCommandInput(root=UnstructuredCommandInput(hint="run id (optional)")),
    )
]


class ArchitectAgent:
    """The ACP `Agent`: one per connection, holding its sessions."""

    def __init__(self, options: SessionOptions | None = None) -> None:
        self.options = options or SessionOptions()
        self.sessions: dict[str, AcpSession] = {}
        self._conn: Client | None = None

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    # ------------------------------------------------------------------ lifecycle

    async def initialize(self, protocol_version: int, **_: Any) -> InitializeResponse:
        _warm_up()
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                mcp_capabilities=McpCapabilities(http=True),
                prompt_capabilities=PromptCapabilities(embedded_context=True),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(), resume=SessionResumeCapabilities()
                ),
            ),
            agent_info=Implementation(
                name="architect-nb", title="architect-nb", version=architect_nb.__version__
            ),
        )

    async def authenticate(self, method_id: str, **_: Any) -> None:
        return None  # models' keys come from the environment, as everywhere in architect-nb

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> NewSessionResponse:
        config, left_out = self._config_offered(cwd, mcp_servers)
        thread = Thread(name=THREAD_NAME, workspace=str(config.workspace.root), notes=[NO_KERNEL_NOTE])
        self._open(config, thread, left_out)
        return NewSessionResponse(session_id=thread.id)

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> LoadSessionResponse:
        session = self._resume(cwd, session_id, mcp_servers)
        await self._replay(session)
        return LoadSessionResponse()

    async def resume_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> ResumeSessionResponse:
        self._resume(cwd, session_id, mcp_servers)
        return ResumeSessionResponse()

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **_: Any
    ) -> ListSessionsResponse:
        config = self._config(cwd or str(Path.cwd()))
        store = thread_store(config)
        workspace = str(config.workspace.root)
        sessions = []
        for item in store.saved() if store is not None else ():
            if isinstance(item, ThreadError) or item.workspace != workspace:
                continue
            title = next(
                (run.task.strip().splitlines()[0][:80] for run in item.runs if run.task.strip()), None
            )
            updated = datetime.datetime.fromtimestamp(item.updated_at, datetime.UTC).isoformat()
            sessions.append(SessionInfo(session_id=item.id, cwd=workspace, title=title, updated_at=updated))
        return ListSessionsResponse(sessions=sessions)

    async def close_session(self, session_id: str, **_: Any) -> None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            session.cancel()
            session.outbox.close()

    # ------------------------------------------------------------------ prompts

    async def prompt(self, prompt: list[Any], session_id: str, **_: Any) -> PromptResponse:
        session = self._session(session_id)
        task = _prompt_text(prompt)
        command, _sep, rest = task.strip().partition(" ")
        if command == "/undo":
            await session.undo(rest)
            return PromptResponse(stop_reason="end_turn")
        if not task.strip():
            session.outbox.post(update_agent_message_text("Write what the agent should do."))
            await session.outbox.flush()
            return PromptResponse(stop_reason="end_turn")
        notebook = notebook_in_prompt(prompt, Path(session.workspace))
        return PromptResponse(stop_reason=await session.run(task, notebook))

    async def cancel(self, session_id: str, **_: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    # ------------------------------------------------------------------ helpers

    def _config(self, cwd: str) -> AppConfig:
        root = Path(cwd).expanduser()
        if not root.is_absolute() or not root.is_dir():
            raise RequestError.invalid_params({"cwd": f"{cwd!r} is not an existing absolute folder"})
        overrides = {**self.options.overrides, "workspace.root": str(root.resolve())}
        try:
            return load_config(overrides=overrides, search_from=root)
        except ConfigError as exc:
            raise RequestError.invalid_params({"config": str(exc)}) from None

    def _config_offered(self, cwd: str, offered: list[Any] | None) -> tuple[AppConfig, list[str]]:
        """The workspace's config with the MCP servers the client offers, and why any were left out."""
        config, left_out = with_offered_servers(self._config(cwd), offered or [])
        for reason in left_out:
            log.warning("acp_mcp_server_left_out", reason=reason)
        return config, left_out

    def _open(self, config: AppConfig, thread: Thread, left_out: list[str] | None = None) -> AcpSession:
        assert self._conn is not None, "the connection is set before any request"
        conn = self._conn
        outbox = Outbox(asyncio.get_running_loop(), lambda update: conn.session_update(thread.id, update))

        def ask(tool_call: Any, options: Any) -> Any:
            return conn.request_permission(session_id=thread.id, tool_call=tool_call, options=options)

        confirmer = AcpConfirmer(outbox, ask, str(config.workspace.root))
        session = AcpSession(config, thread, self.options, outbox, confirmer)
        self.sessions[thread.id] = session
        # After the response that tells the editor the session id, not before it (as other agents do).
        asyncio.get_running_loop().call_later(0.05, outbox.post, update_available_commands(COMMANDS))
        if left_out:
            told = "Left out: " + "; ".join(left_out) + ".\n\n"
            asyncio.get_running_loop().call_later(0.05, outbox.post, update_agent_message_text(told))
        return session

    def _resume(self, cwd: str, session_id: str, offered: list[Any] | None = None) -> AcpSession:
        known = self.sessions.get(session_id)
        if known is not None:
            return known
        config, left_out = self._config_offered(cwd, offered)
        store = thread_store(config)
        if store is None:
            raise RequestError.invalid_params(
                {"sessionId": "saved conversations are off here (checkpoints.persist: false)"}
            )
        try:
            thread = store.load(session_id)
        except ThreadError as exc:
            raise RequestError.invalid_params({"sessionId": str(exc)}) from None
        thread_workspace = str(config.workspace.root)
        if thread.workspace != thread_workspace:
            raise RequestError.invalid_params(
                {"sessionId": f"session {session_id} belongs to {thread.workspace}, not {thread_workspace}"}
            )
        thread.notes.append(NO_KERNEL_NOTE)
        return self._open(config, thread, left_out)

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": f"no session {session_id}; start or load one"})
        return session

    async def _replay(self, session: AcpSession) -> None:
        """The saved conversation as updates: the tasks, the answers, and each tool call with how it ended."""
        redact = default_redactor().redact
        thread = session.thread
        for run in thread.runs:
            if run.task.strip():  # the task as typed: the notes told with it are not the user's words
                session.outbox.post(update_user_message_text(redact(run.task)))
            for message in thread.messages[run.start : run.end or None]:
                if message.get("role") != "assistant":
                    continue
                content = message.get("content")
                if isinstance(content, str) and content:
                    session.outbox.post(update_agent_message_text(redact(content)))
                for call in message.get("tool_calls") or ():
                    function = call.get("function", {})
                    name = str(function.get("name", ""))
                    arguments = _arguments(function.get("arguments"))
                    session.outbox.post(
                        start_tool_call(
                            str(call.get("id", "")),
                            tool_title(name, arguments),
                            kind=tool_kind(name),
                            status="completed",
                            raw_input=default_redactor().redact_data(arguments),
                        )
                    )
        await session.outbox.flush()


def _warm_up() -> None:
    """Import LiteLLM (seconds) in the background while the editor opens a session, not in the first prompt
    (`ARCHITECT_WARMUP=0` turns it off, as in the notebook)."""
    if os.environ.get("ARCHITECT_WARMUP", "1").strip().lower() in ("0", "false", "no", "off"):
        return

    def warm() -> None:
        try:
            import architect_nb.agent.factory  # noqa: F401 - the engine, the tools, the shell grammar
            from architect_nb.agent.models.litellm_import import import_litellm

            import_litellm()
        except Exception as exc:  # the first prompt imports them itself, and says what is wrong
            log.warning("warm_up_failed", problem=f"{type(exc).__name__}: {exc}")

    threading.Thread(target=warm, name="architect-warm-up", daemon=True).start()


def _arguments(raw: Any) -> dict[str, Any]:
    import json

    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _prompt_text(blocks: list[Any]) -> str:
    """The prompt's text: its text blocks, and embedded text resources (a file the user attached) after it."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if isinstance(text, str):
                parts.append(f"\n[Attached: {resource.uri}]\n{text}")
        elif kind == "resource_link":
            parts.append(f"\n[Attached: {block.uri}]")
    return "\n".join(parts)

"""architect-nb over the Agent Client Protocol: the SDK client over stdio against the real `architect-nb-acp`.

One agent process serves the module; each test is a session in its own workspace, whose `.architect.yaml`
names its scripted model. The resume test restarts the agent in between, as an editor does.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from acp import text_block

from tests.support.acp_client import AgentThread, Recorded, RecordingClient, start_agent

pytestmark = pytest.mark.slow

APP = "def total(items):\n    return 1\n"
SECRET = "ghp_" + "Zq7" * 12  # a GitHub token's shape: redacted wherever it turns up


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AgentThread]:
    started = AgentThread(tmp_path_factory.mktemp("acp-agent"))
    yield started
    started.close()


def workspace_with(root: Path, turns: list[dict[str, Any]] | None = None, **script: Any) -> Path:
    """A workspace holding app.py and an `.architect.yaml` whose model replays `turns` (or `runs`)."""
    workspace = root / "ws"
    workspace.mkdir()
    (workspace / "app.py").write_text(APP)
    path = root / "script.yaml"
    path.write_text(yaml.safe_dump({"turns": turns, **script} if turns is not None else script))
    (workspace / ".architect.yaml").write_text(yaml.safe_dump({"llm": {"model": f"scripted/{path}"}}))
    return workspace


def new_session(
    agent: AgentThread, workspace: Path, answers: list[Any] | None = None
) -> tuple[str, Recorded]:
    async def start(conn: Any) -> str:
        return str((await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id)

    session_id = agent.call(start)
    return session_id, agent.client.session(session_id, answers or [])


def prompt(agent: AgentThread, session_id: str, text: str) -> str:
    """Send `text`; the stop reason, once the updates sent before it have all arrived."""

    async def send(conn: Any) -> str:
        reply = await conn.prompt(session_id=session_id, prompt=[text_block(text)])
        await agent.client.session(session_id).quiet()
        return str(reply.stop_reason)

    return agent.call(send)


EDIT = {"name": "edit_file", "arguments": {"path": "app.py", "old_str": "return 1", "new_str": "return 2"}}


def test_an_edit_asks_with_its_diff_approve_applies_it_and_undo_puts_it_back(
    agent: AgentThread, tmp_path: Path
) -> None:
    workspace = workspace_with(
        tmp_path, [{"content": "I'll fix it.", "tool_calls": [EDIT]}, {"content": "Done."}]
    )
    session_id, record = new_session(agent, workspace, ["approve"])

    assert prompt(agent, session_id, "Make total return 2.") == "end_turn"

    assert (workspace / "app.py").read_text() == APP.replace("return 1", "return 2")
    [(question, options)] = record.questions
    assert [o.kind for o in options] == ["allow_once", "allow_always", "reject_once"]
    [diff] = [c for c in question.content or [] if c.type == "diff"]
    assert (
        diff.path == str(workspace / "app.py") and "return 1" in diff.old_text and "return 2" in diff.new_text
    )
    [start] = record.of_kind("tool_call")
    assert (start.tool_call_id, start.kind, start.title) == (
        question.tool_call_id,
        "edit",
        "edit_file: app.py",
    )
    [done] = [u for u in record.of_kind("tool_call_update") if u.status]
    assert done.status == "completed" and any(c.type == "diff" for c in done.content)
    order = [getattr(u, "session_update", "") for u in record.updates]
    assert order.index("tool_call") < order.index("tool_call_update")
    assert "I'll fix it." in record.text() and "Done." in record.text()
    commands = record.of_kind("available_commands_update")
    assert commands and [c.name for c in commands[0].available_commands] == ["undo"]

    assert prompt(agent, session_id, "/undo") == "end_turn"
    assert (workspace / "app.py").read_text() == APP
    assert "restored 1 file(s)" in record.text()


def test_a_denial_with_a_reason_reaches_the_model_and_nothing_changes(
    agent: AgentThread, tmp_path: Path
) -> None:
    turns = [
        {"tool_calls": [EDIT]},
        {"expect": {"tool_result_contains": "edit a copy instead"}, "content": "Understood, I left it."},
    ]
    workspace = workspace_with(tmp_path, turns)
    session_id, record = new_session(agent, workspace, ["deny: edit a copy instead"])

    assert prompt(agent, session_id, "Make total return 2.") == "end_turn"

    assert (workspace / "app.py").read_text() == APP
    assert "Understood, I left it." in record.text()  # the script's expect held: the model got the reason
    [done] = [u for u in record.of_kind("tool_call_update") if u.status]
    assert done.status == "failed"


def test_approve_all_like_this_asks_once_for_the_session(agent: AgentThread, tmp_path: Path) -> None:
    second = {
        "name": "edit_file",
        "arguments": {"path": "app.py", "old_str": "return 2", "new_str": "return 3"},
    }
    workspace = workspace_with(
        tmp_path, [{"tool_calls": [EDIT]}, {"tool_calls": [second]}, {"content": "ok"}]
    )
    session_id, record = new_session(agent, workspace, ["approve_all"])

    assert prompt(agent, session_id, "Make total return 3, in two steps.") == "end_turn"

    assert len(record.questions) == 1
    assert (workspace / "app.py").read_text() == APP.replace("return 1", "return 3")


def test_a_blocked_command_is_refused_without_asking(agent: AgentThread, tmp_path: Path) -> None:
    call = {"name": "run_command", "arguments": {"command": "sudo ls"}}
    turns = [
        {"tool_calls": [call]},
        {"expect": {"tool_result_contains": "blocked in every mode"}, "content": "ok"},
    ]
    workspace = workspace_with(tmp_path, turns)
    session_id, record = new_session(agent, workspace, ["approve"])

    assert prompt(agent, session_id, "List as root.") == "end_turn"

    assert record.questions == []
    [done] = [u for u in record.of_kind("tool_call_update") if u.status]
    assert done.status == "failed" and "blocked in every mode" in done.content[0].content.text


def test_a_secret_a_tool_reads_never_reaches_the_editor_or_the_saved_thread(
    agent: AgentThread, tmp_path: Path
) -> None:
    turns = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "settings.txt"}}]},
        {"content": "The token is set."},
    ]
    workspace = workspace_with(tmp_path, turns)
    (workspace / "settings.txt").write_text(f"token = {SECRET}\n")
    session_id, record = new_session(agent, workspace)

    assert prompt(agent, session_id, "Is the token set?") == "end_turn"

    [done] = [u for u in record.of_kind("tool_call_update") if u.status]
    assert done.status == "completed" and "token =" in done.content[0].content.text
    assert SECRET not in record.dump()
    state = Path(os.environ["XDG_STATE_HOME"])  # the test run's own (tests/conftest.py), the agent's too
    saved = [p.read_text() for p in state.rglob(f"{session_id}.jsonl")]
    assert saved and all(SECRET not in text for text in saved)


def test_cancel_stops_a_running_command_within_a_second(agent: AgentThread, tmp_path: Path) -> None:
    call = {"name": "run_command", "arguments": {"command": "sleep 30"}}
    workspace = workspace_with(tmp_path, [{"tool_calls": [call]}, {"content": "never reached"}])
    session_id, record = new_session(agent, workspace, ["approve"])

    async def cancel_once_running(conn: Any) -> tuple[str, float]:
        task = asyncio.ensure_future(conn.prompt(session_id=session_id, prompt=[text_block("Wait.")]))
        while not record.of_kind("tool_call"):
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.5)  # the command is running (or asked about and approved)
        started = time.monotonic()
        await conn.cancel(session_id=session_id)
        response = await task
        latency = time.monotonic() - started
        await record.quiet()
        return str(response.stop_reason), latency

    stop, latency = agent.call(cancel_once_running)

    assert stop == "cancelled"
    assert latency < 1.0, f"the prompt answered {latency:.2f} s after the cancel"
    assert "never reached" not in record.text()


def test_cancel_while_a_question_waits_denies_it_within_a_second(agent: AgentThread, tmp_path: Path) -> None:
    workspace = workspace_with(tmp_path, [{"tool_calls": [EDIT]}, {"content": "never reached"}])
    session_id, record = new_session(agent, workspace, ["wait"])

    async def cancel_when_asked(conn: Any) -> tuple[str, float]:
        task = asyncio.ensure_future(conn.prompt(session_id=session_id, prompt=[text_block("Edit.")]))
        while not record.questions:
            await asyncio.sleep(0.02)
        started = time.monotonic()
        await conn.cancel(session_id=session_id)
        response = await task
        latency = time.monotonic() - started
        await record.quiet()
        return str(response.stop_reason), latency

    stop, latency = agent.call(cancel_when_asked)

    assert stop == "cancelled" and latency < 1.0
    assert (workspace / "app.py").read_text() == APP


@pytest.mark.timeout(300)  # two agent processes, each importing LiteLLM: slow on a loaded machine
def test_a_session_resumes_after_the_agent_restarts(tmp_path: Path) -> None:
    runs = [
        {"task": "What does total return?", "turns": [{"content": "total() returns the integer 1."}]},
        {
            "task": "And now?",
            "turns": [{"expect": {"history_contains": "returns the integer 1"}, "content": "Still 1."}],
        },
    ]
    workspace = workspace_with(tmp_path, runs=runs)

    async def first() -> str:
        client = RecordingClient()
        async with start_agent(client, workspace) as (conn, _process):
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            reply = await conn.prompt(
                session_id=session.session_id, prompt=[text_block("What does total return?")]
            )
            assert reply.stop_reason == "end_turn"
            return str(session.session_id)

    async def second(session_id: str) -> tuple[Any, Recorded, str]:
        client = RecordingClient()
        async with start_agent(client, workspace) as (conn, _process):
            listed = await conn.list_sessions(cwd=str(workspace))
            await conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
            replayed = client.session(session_id)
            await replayed.quiet()
            replay = (replayed.text("user_message_chunk"), replayed.text())
            reply = await conn.prompt(session_id=session_id, prompt=[text_block("And now?")])
            await replayed.quiet()
            return listed, replayed, f"{reply.stop_reason}|{replay[0]}|{replay[1]}"

    session_id = asyncio.run(first())
    listed, record, summary = asyncio.run(second(session_id))

    stop, user_replay, agent_replay = summary.split("|")
    assert [s.session_id for s in listed.sessions] == [session_id]
    assert listed.sessions[0].title == "What does total return?"
    assert "What does total return?" in user_replay and "returns the integer 1" in agent_replay
    assert stop == "end_turn" and "Still 1." in record.text()  # the model saw the first run's answer


def test_the_mcp_servers_the_client_offers_join_the_session_and_ask_like_any_sensitive_tool(
    agent: AgentThread, tmp_path: Path
) -> None:
    import sys

    from acp.schema import EnvVariable, McpServerStdio, SseMcpServer

    toy = str(Path(__file__).resolve().parents[2] / "support" / "mcp_toy_server.py")
    workspace = workspace_with(
        tmp_path,
        [
            {"tool_calls": [{"name": "mcp_toy_echo", "arguments": {"text": "from the editor's server"}}]},
            {"expect": {"tool_result_contains": ["from the editor's server"]}, "content": "It echoed."},
        ],
    )
    offered = [
        McpServerStdio(
            name="toy", command=sys.executable, args=[toy, "stdio"], env=[EnvVariable(name="A", value="b")]
        ),
        SseMcpServer(type="sse", name="old", url="http://127.0.0.1:9/sse", headers=[]),
    ]

    async def start(conn: Any) -> str:
        return str((await conn.new_session(cwd=str(workspace), mcp_servers=offered)).session_id)

    session_id = agent.call(start)
    record = agent.client.session(session_id, ["approve"])
    assert prompt(agent, session_id, "Echo something through the toy server.") == "end_turn"

    assert "It echoed." in record.text(), record.text()
    [(question, _options)] = record.questions  # an MCP tool's effects are unknown: it asks first
    assert question.title is not None and "mcp_toy_echo" in question.title
    assert "Left out: MCP server 'old': sse servers are not supported" in record.text()

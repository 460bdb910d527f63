"""The agent loop on the scripted model, with the real engine and real tools."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from architect_nb.agent.events import (
    AgentEvent,
    ConfirmationAnswered,
    ConfirmationAsked,
    CostUpdate,
    RunWarning,
    ToolResultEvent,
)
from architect_nb.tools.base import BaseTool, ToolResult
from tests.support.agent import copy_sample_project, make_loop, write_script
from tests.support.engine import NoopArgs

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_sample_project(tmp_path / "project")


def test_undo_restores_what_the_run_changed(project: Path) -> None:
    original = (project / "shop/cart.py").read_text()
    model = write_script(
        project,
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "shop/cart.py", "content": "broken\n"}}
                ]
            },
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "NEW.md", "content": "new\n"}}]},
            {"content": "done"},
        ],
    )
    loop = make_loop(project, model, mode="yolo")
    result = loop.run("break it")
    assert sorted(result.files_changed) == ["NEW.md", "shop/cart.py"]
    loop.engine.checkpoints.undo(result.run_id)
    assert (project / "shop/cart.py").read_text() == original
    assert not (project / "NEW.md").exists()


def test_deny_reason_reaches_the_model(project: Path) -> None:
    model = write_script(
        project,
        [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "shop/cart.py", "content": "x\n"}}]},
            {
                "expect": {"tool_result_contains": ["declined", "use edit_file instead"]},
                "content": "Understood.",
            },
        ],
    )
    events: list[AgentEvent] = []
    result = make_loop(project, model, answers=["deny: use edit_file instead"], events=events).run("rewrite")
    assert result.stop_reason == "completed"
    assert (project / "shop/cart.py").read_text().startswith('"""A shopping cart')
    answered = [e for e in events if isinstance(e, ConfirmationAnswered)]
    assert [(e.decision, e.reason) for e in answered] == [("deny", "use edit_file instead")]
    assert [e.status for e in events if isinstance(e, ToolResultEvent)] == ["denied"]


def test_abort_stops_the_run(project: Path) -> None:
    model = write_script(
        project,
        [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "x"}}]},
            {"content": "never reached"},
        ],
    )
    result = make_loop(project, model, answers=["abort"]).run("go")
    assert (result.status, result.stop_reason) == ("failed", "aborted")
    assert not (project / "a.txt").exists()


def test_max_steps_stops_cleanly(project: Path) -> None:
    turn = {"tool_calls": [{"name": "list_files", "arguments": {}}]}
    model = write_script(project, [turn, turn, turn, {"content": "done"}])
    result = make_loop(project, model, max_steps=2).run("loop")
    assert (result.status, result.stop_reason, result.steps) == ("partial", "max_steps", 2)
    assert "2 steps" in result.message


def test_token_budget_stops_the_run(project: Path) -> None:
    turn = {"tool_calls": [{"name": "read_file", "arguments": {"path": "shop/cart.py"}}]}
    model = write_script(project, [turn, turn, turn, {"content": "done"}])
    events: list[AgentEvent] = []
    loop = make_loop(project, model, overrides={"costs.budget_tokens": 2500}, events=events)
    result = loop.run("spend")
    assert result.stop_reason == "budget" and result.status == "partial"
    assert "token budget is spent" in result.message
    assert any(isinstance(e, RunWarning) and e.category == "budget" for e in events)
    costs = [e for e in events if isinstance(e, CostUpdate)]
    assert costs[-1].total_tokens >= 2500 and costs[0].prompt_tokens > 0


def test_usd_budget_with_a_priced_script(project: Path) -> None:
    turn = {"tool_calls": [{"name": "read_file", "arguments": {"path": "shop/cart.py"}}]}
    model = write_script(project, [turn] * 5 + [{"content": "done"}], price_as="gpt-4o")
    result = make_loop(project, model, budget_usd=0.004).run("spend")
    assert result.stop_reason == "budget" and 0.004 <= result.cost_usd < 0.02


def test_divergence_is_a_clear_failure(project: Path) -> None:
    model = write_script(
        project,
        [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "shop/cart.py"}}]},
            {"expect": {"tool_result_contains": "class Basket"}, "content": "never"},
        ],
    )
    result = make_loop(project, model).run("go")
    assert (result.status, result.stop_reason) == ("failed", "script_error")
    assert "expects the tool results to contain 'class Basket'" in result.message


def test_context_compression_keeps_the_run_going(project: Path) -> None:
    (project / "big.txt").write_text("".join(f"line {i} " + "x" * 80 + "\n" for i in range(600)))
    read_big = {
        "tool_calls": [{"name": "read_file", "arguments": {"path": "big.txt", "offset": 1, "limit": 150}}]
    }
    model = write_script(project, [read_big] * 6 + [{"content": "done"}])
    events: list[AgentEvent] = []
    loop = make_loop(project, model, events=events)
    loop.llm._context_window = 12_000  # type: ignore[attr-defined]  # a small window forces compression
    result = loop.run("read a lot")
    assert result.stop_reason == "completed"
    notes = [e.message for e in events if isinstance(e, RunWarning) and e.category == "context"]
    assert notes and "Context compressed" in notes[0]
    roles = [m["role"] for m in result.messages]
    assert roles.count("tool") >= 2  # recent results are kept whole, so the pairing below is checked
    for i, message in enumerate(result.messages):  # every tool result still follows its call
        if message["role"] == "tool":
            calls = next(m for m in reversed(result.messages[:i]) if m["role"] == "assistant")["tool_calls"]
            assert message["tool_call_id"] in {c["id"] for c in calls}
    assert roles[:2] == ["system", "user"]
    assert any(str(m.get("content")).startswith("[Summary of") for m in result.messages)


class RendezvousTool(BaseTool):
    """A read-only tool whose calls each wait (10 s at most) until all `parties` calls are inside at once:
    calls run side by side all meet; calls run one after another time out."""

    name = "rendezvous"
    description = "Waits for the other calls of this tool."
    args_model = NoopArgs

    def __init__(self, parties: int) -> None:
        self.barrier = threading.Barrier(parties, timeout=10)
        self.threads: set[int] = set()

    def execute(self, **kwargs: Any) -> ToolResult:
        self.threads.add(threading.get_ident())
        try:
            self.barrier.wait()
        except threading.BrokenBarrierError:
            return ToolResult.fail("The other calls never came in while this one waited.")
        return ToolResult.ok(f"met {kwargs.get('value', '')}")


def test_parallel_read_only_calls(project: Path) -> None:
    """Read-only calls of one turn run side by side: three calls that can only finish together finish."""
    calls = [
        *({"name": "rendezvous", "arguments": {"value": str(i)}} for i in range(3)),
        *(
            {"name": "read_file", "arguments": {"path": p}}
            for p in ("shop/cart.py", "README.md", "missing.py")
        ),
    ]
    model = write_script(
        project,
        [{"tool_calls": calls}, {"expect": {"tool_result_contains": "does not exist"}, "content": "ok"}],
    )
    events: list[AgentEvent] = []
    loop = make_loop(project, model, events=events)
    rendezvous = RendezvousTool(parties=3)
    loop.engine.registry.register(rendezvous)
    result = loop.run("read")
    assert result.stop_reason == "completed"
    statuses = [(e.tool, e.status, e.error) for e in events if isinstance(e, ToolResultEvent)]
    assert [s for s in statuses if s[0] == "rendezvous"] == [("rendezvous", "ok", None)] * 3, statuses
    assert sorted(s[:2] for s in statuses if s[0] == "read_file") == [
        ("read_file", "failed"),
        ("read_file", "ok"),
        ("read_file", "ok"),
    ]
    assert len(rendezvous.threads) == 3


def test_invalid_json_arguments_are_flagged_not_guessed(project: Path) -> None:
    from architect_nb.agent.models.model_reply import make_call

    call = make_call("c1", "read_file", '{"path": ')
    assert call.parse_error and "not valid JSON" in call.parse_error


def test_record_then_replay(project: Path, tmp_path: Path) -> None:
    model = write_script(
        project,
        [
            {"content": "Looking.", "tool_calls": [{"name": "list_files", "arguments": {"path": "shop"}}]},
            {"content": "Two files."},
        ],
    )
    recorded = tmp_path / "recorded.yaml"
    first = make_loop(project, model, record_to=recorded).run("look")
    replay = make_loop(project, f"scripted/{recorded}").run("look")
    assert first.final_text == replay.final_text == "Two files."
    assert [m.get("tool_calls") for m in first.messages] == [m.get("tool_calls") for m in replay.messages]


def test_lifecycle_hooks_fire_in_order(project: Path) -> None:
    log = project.parent / "events.log"
    hook = {"command": f"echo $ARCHITECT_EVENT >> {log}"}
    events = ["session_start", "pre_llm_call", "post_llm_call", "agent_complete", "session_end"]
    model = write_script(
        project, [{"tool_calls": [{"name": "list_files", "arguments": {}}]}, {"content": "done"}]
    )
    overrides = {f"hooks.{name}": [hook] for name in events}
    make_loop(project, model, overrides=overrides).run("go")
    assert log.read_text().split() == [
        "session_start",
        "pre_llm_call",
        "post_llm_call",
        "pre_llm_call",
        "post_llm_call",
        "agent_complete",
        "session_end",
    ]


def test_pre_llm_hook_can_stop_the_run(project: Path) -> None:
    model = write_script(project, [{"content": "never"}])
    overrides = {"hooks.pre_llm_call": [{"name": "gate", "command": "echo no more calls >&2; exit 2"}]}
    result = make_loop(project, model, overrides=overrides).run("go")
    assert result.stop_reason == "aborted" and "no more calls" in result.message


def test_importing_the_agent_does_not_import_litellm() -> None:
    code = "import sys, architect_nb.agent; print('litellm' in sys.modules)"
    assert subprocess.check_output([sys.executable, "-c", code], text=True).strip() == "False"


def test_mcp_tools_join_an_agent_with_an_explicit_tool_list(project: Path) -> None:
    server = shutil.which("mcp-server-git", path=str(Path(sys.executable).parent))
    assert server, "mcp-server-git is a dev dependency"
    for argv in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "initial"]):
        subprocess.run(argv, cwd=project, check=True, env={**os.environ, **GIT_ENV})
    (project / "shop" / "cart.py").write_text("changed\n")
    model = write_script(
        project,
        [
            {"tool_calls": [{"name": "mcp_git_git_status", "arguments": {"repo_path": str(project)}}]},
            {"expect": {"tool_result_contains": "shop/cart.py"}, "content": "cart.py is modified."},
        ],
    )
    overrides = {"mcp.servers": [{"name": "git", "command": server, "args": ["--repository", str(project)]}]}
    events: list[AgentEvent] = []
    loop = make_loop(project, model, answers=["approve"], overrides=overrides, events=events, agent="plan")
    try:
        result = loop.run("What changed?")
    finally:
        loop.close()
    assert result.stop_reason == "completed", result.message
    started = events[0]
    assert "mcp_git_git_status" in started.tools and "write_file" not in started.tools  # type: ignore[attr-defined]
    assert [e.tool for e in events if isinstance(e, ConfirmationAsked)] == ["mcp_git_git_status"]


def test_mcp_server_that_is_down_is_a_warning(project: Path) -> None:
    model = write_script(project, [{"content": "fine without it"}])
    overrides = {"mcp.servers": [{"name": "gone", "command": "/nonexistent/mcp-server"}]}
    events: list[AgentEvent] = []
    loop = make_loop(project, model, overrides=overrides, events=events)
    result = loop.run("go")
    loop.close()
    assert result.stop_reason == "completed"
    assert any(isinstance(e, RunWarning) and e.category == "mcp" and "gone" in e.message for e in events)


def test_on_error_fires_for_a_failed_tool_but_not_for_a_denial(project: Path) -> None:
    log = project.parent / "errors.log"
    model = write_script(
        project,
        [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "missing.py"}}]},
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "x.txt", "content": "x"}}]},
            {"content": "done"},
        ],
    )
    overrides = {"hooks.on_error": [{"command": f"echo $ARCHITECT_TOOL_NAME >> {log}"}]}
    make_loop(project, model, answers=["deny"], overrides=overrides).run("go")
    assert log.read_text().split() == ["read_file"]


def test_a_run_without_the_os_sandbox_says_so_once_and_each_command_says_how_it_ran(project: Path) -> None:
    turns = [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "ls"}}]},
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "ls shop"}}]},
        {"content": "done"},
    ]
    model = write_script(project, turns)
    events: list[AgentEvent] = []
    loop = make_loop(project, model, overrides={"sandbox.program": "/nonexistent/bwrap"}, events=events)
    assert loop.run("look").stop_reason == "completed"
    warnings = [e for e in events if isinstance(e, RunWarning) and e.category == "sandbox"]
    assert (
        len(warnings) == 1 and "not available, so commands run without the OS sandbox" in warnings[0].message
    )
    assert "bubblewrap" in warnings[0].message
    assert [e.sandboxed for e in events if isinstance(e, ToolResultEvent)] == [False, False]
    quiet: list[AgentEvent] = []
    off = {"sandbox.program": "/nonexistent/bwrap", "sandbox.mode": "off"}
    make_loop(
        project, write_script(project, [{"content": "ok"}], name="quiet.yaml"), overrides=off, events=quiet
    ).run("x")
    assert not [e for e in quiet if isinstance(e, RunWarning)]

"""How each call ended is said where it is decided (`ToolResult.outcome`), never rebuilt from flags: a call a
pre_tool_use hook blocked is `blocked`, one that needed a person nobody could ask is `needs_person`, a
malformed one is `invalid`, and `on_error` hooks fire only for a tool that broke."""

from __future__ import annotations

import io
import typing
from pathlib import Path

import pytest

from architect_nb.agent.events import AgentEvent, CallStatus, ToolResultEvent
from architect_nb.config import load_config
from architect_nb.execution.build import build_engine
from architect_nb.execution.confirmation.confirmers import TerminalConfirmer
from architect_nb.tools.base import ToolResult
from architect_nb.tools.outcome import CallOutcome
from tests.support.agent import copy_sample_project, make_loop, write_script


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_sample_project(tmp_path / "ws")


def statuses(events: list[AgentEvent]) -> list[tuple[str, str]]:
    return [(e.tool, e.status) for e in events if isinstance(e, ToolResultEvent)]


def test_the_record_shows_every_outcome_by_its_own_name() -> None:
    assert set(typing.get_args(CallStatus)) == {o.value for o in CallOutcome}


def test_a_hook_blocked_call_is_blocked_and_fires_no_on_error_hook(project: Path) -> None:
    log = project.parent / "errors.log"
    model = write_script(
        project,
        [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "x.txt", "content": "x"}}]},
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "missing.py"}}]},
            {"content": "done"},
        ],
    )
    overrides = {
        "hooks.pre_tool_use": [
            {"name": "no-writes", "command": "echo 'not today' >&2; exit 2", "matcher": "write_file"}
        ],
        "hooks.on_error": [{"command": f"echo $ARCHITECT_TOOL_NAME >> {log}"}],
    }
    events: list[AgentEvent] = []
    result = make_loop(project, model, overrides=overrides, events=events, mode="yolo").run("go")
    assert result.stop_reason == "completed", result.message
    assert statuses(events) == [("write_file", "blocked"), ("read_file", "failed")]
    # Only the tool that broke fired on_error; the hook's refusal is no error (it was, before outcomes).
    assert log.read_text().split() == ["read_file"]
    assert not (project / "x.txt").exists()


def test_malformed_and_unoffered_calls_are_invalid(project: Path) -> None:
    log = project.parent / "errors.log"
    model = write_script(
        project,
        [
            {"tool_calls": [{"name": "no_such_tool", "arguments": {}}]},
            {"tool_calls": [{"name": "read_file", "arguments": {"path": 3}}]},
            {"content": "done"},
        ],
    )
    overrides = {"hooks.on_error": [{"command": f"echo $ARCHITECT_TOOL_NAME >> {log}"}]}
    events: list[AgentEvent] = []
    make_loop(project, model, overrides=overrides, events=events).run("go")
    assert statuses(events) == [("no_such_tool", "invalid"), ("read_file", "invalid")]
    assert not log.exists()


def test_a_call_nobody_can_approve_needs_a_person(project: Path) -> None:
    config = load_config(overrides={"workspace.root": str(project)}, environ={})
    engine = build_engine(config, mode="confirm-all", confirmer=TerminalConfirmer(stdin=io.StringIO()))
    result = engine.execute_tool_call("write_file", {"path": "x.txt", "content": "x"})
    assert result.outcome is CallOutcome.NEEDS_PERSON and not (project / "x.txt").exists()


def test_each_engine_decision_has_its_outcome(project: Path) -> None:
    config = load_config(
        overrides={"workspace.root": str(project), "guardrails.protected_files": ["shop/*.py"]}, environ={}
    )
    engine = build_engine(config, mode="yolo")
    cases = {
        CallOutcome.OK: ("read_file", {"path": "shop/cart.py"}),
        CallOutcome.FAILED: ("read_file", {"path": "nope.py"}),
        CallOutcome.INVALID: ("read_file", {"path": ["a"]}),
        CallOutcome.BLOCKED: ("write_file", {"path": "shop/cart.py", "content": ""}),
    }
    for outcome, (tool, args) in cases.items():
        assert engine.execute_tool_call(tool, args).outcome is outcome, (tool, args)
    assert engine.execute_tool_call("read_file", "{not json").outcome is CallOutcome.INVALID
    dry = build_engine(config, mode="yolo", dry_run=True)
    described = dry.execute_tool_call("write_file", {"path": "new.txt", "content": "x"})
    assert described.success and described.outcome is CallOutcome.DRY_RUN


def test_a_tool_result_says_ok_or_failed_by_itself() -> None:
    assert ToolResult.ok("x").outcome is CallOutcome.OK
    assert ToolResult.fail("no").outcome is CallOutcome.FAILED
    refused = ToolResult.refused(CallOutcome.DENIED, "the user said no")
    assert not refused.success and refused.outcome is CallOutcome.DENIED and not refused.outcome.broke

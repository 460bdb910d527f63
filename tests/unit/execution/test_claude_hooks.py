"""Claude Code's hooks as they are: hook scripts written the way Claude Code's documentation writes them, in
a workspace's `.claude/settings.json`, run by the agent loop on the scripted model with the real engine and
tools. Each test checks what the model saw and what is on disk."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from architect_nb.agent.events import AgentEvent, RunWarning, ToolResultEvent
from architect_nb.execution.build import build_engine
from architect_nb.notebook.state import reset_session
from architect_nb.redaction import default_redactor
from tests.support.agent import make_loop, write_script
from tests.support.claude import (
    BASH_VALIDATOR,
    FORMATTER,
    PROTECT_PATHS,
    RECORD,
    SAFE_RM,
    TESTS_BEFORE_STOP,
    claude_config,
    claude_workspace,
    command_hook,
    seen,
)

ALL = {"hooks.claude_settings": "all"}


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def results(events: list[AgentEvent]) -> list[ToolResultEvent]:
    return [e for e in events if isinstance(e, ToolResultEvent)]


# ---------------------------------------------------------------------------------- the five hooks


def test_bash_validator_from_claude_codes_repository_blocks_grep_with_exit_2(tmp_path: Path) -> None:
    project = claude_workspace(
        tmp_path / "project",
        hooks={"PreToolUse": [{"matcher": "Bash", "hooks": [command_hook("bash_command_validator.py")]}]},
        scripts={"bash_command_validator.py": BASH_VALIDATOR},
    )
    model = write_script(
        project,
        [
            call("run_command", command="grep -n total shop/cart.py > grep_hits.txt"),
            {
                "expect": {
                    "tool_result_contains": ["Blocked by hook", "Use 'rg' (ripgrep) instead of 'grep'"]
                },
                **call("run_command", command="rg -n total shop/cart.py > hits.txt"),
            },
            {"expect": {"tool_result_lacks": "Blocked"}, "content": "Saved the hits to hits.txt."},
        ],
    )
    events: list[AgentEvent] = []
    result = make_loop(project, model, mode="yolo", overrides=ALL, events=events).run("Find the totals.")
    assert result.stop_reason == "completed", result.message
    blocked, ran = results(events)
    assert not blocked.success and ran.success
    assert blocked.error is not None and "• Use 'rg' (ripgrep) instead of 'grep'" in blocked.error
    assert not (project / "grep_hits.txt").exists()  # grep never ran
    assert "total = 0" in (project / "hits.txt").read_text()


def test_pre_tool_use_on_edit_or_write_denies_a_path_through_permission_decision(tmp_path: Path) -> None:
    project = claude_workspace(
        tmp_path / "project",
        hooks={"PreToolUse": [{"matcher": "Edit|Write", "hooks": [command_hook("protect.py")]}]},
        scripts={"protect.py": PROTECT_PATHS},
    )
    env_file = project / ".env"
    model = write_script(
        project,
        [
            call("write_file", path=".env", content="DEBUG=1\n"),
            {
                "expect": {"tool_result_contains": f"{env_file} is a protected file; leave it alone"},
                **call("edit_file", path="shop/cart.py", old_str="total = 0\n", new_str="total = 0.0\n"),
            },
            {"expect": {"tool_result_lacks": "Blocked"}, "content": "Changed the cart instead."},
        ],
    )
    events: list[AgentEvent] = []
    result = make_loop(project, model, mode="yolo", overrides=ALL, events=events).run("Set DEBUG.")
    assert result.stop_reason == "completed", result.message
    assert [r.success for r in results(events)] == [False, True]
    assert not env_file.exists()
    assert "total = 0.0\n" in (project / "shop/cart.py").read_text()


def test_post_tool_use_formatter_reads_tool_input_file_path(tmp_path: Path) -> None:
    project = claude_workspace(
        tmp_path / "project",
        hooks={"PostToolUse": [{"matcher": "Edit|MultiEdit|Write", "hooks": [command_hook("format.sh")]}]},
        scripts={"format.sh": FORMATTER},
    )
    model = write_script(
        project,
        [
            call("write_file", path="shop/discounts.py", content="def   half(x):\n  return x/2\n"),
            {
                "expect": {
                    "tool_result_contains": "Created shop/discounts.py",
                    "tool_result_lacks": "FAILED",
                },
                **call(
                    "edit_file",
                    path="shop/cart.py",
                    old_str="        total = 0\n",
                    new_str="        total=0.0\n",
                ),
            },
            call("write_file", path="NOTES.md", content="x=1\n"),
            {"expect": {"tool_result_lacks": "FAILED"}, "content": "Done."},
        ],
    )
    result = make_loop(project, model, mode="yolo", overrides=ALL).run("Add a discount helper.")
    assert result.stop_reason == "completed", result.message
    assert (project / "shop/discounts.py").read_text() == "def half(x):\n    return x / 2\n"
    assert "        total = 0.0\n" in (project / "shop/cart.py").read_text()
    assert (project / "NOTES.md").read_text() == "x=1\n"  # not a .py file: left alone


def test_updated_input_rewrites_a_command_in_our_names(tmp_path: Path) -> None:
    project = claude_workspace(
        tmp_path / "project",
        hooks={"PreToolUse": [{"matcher": "Bash", "hooks": [command_hook("safe_rm.py")]}]},
        scripts={"safe_rm.py": SAFE_RM},
    )
    (project / "notes.txt").write_text("keep me\n")
    model = write_script(
        project,
        [
            call("run_command", command="rm notes.txt"),
            {"expect": {"tool_result_contains": "changed the arguments: command"}, "content": "Removed."},
        ],
    )
    events: list[AgentEvent] = []
    result = make_loop(project, model, mode="yolo", overrides=ALL, events=events).run("Delete notes.txt.")
    assert result.stop_reason == "completed", result.message
    (ran,) = results(events)
    assert ran.success
    assert not (project / "notes.txt").exists()
    assert (project / ".trash" / "notes.txt").read_text() == "keep me\n"


def test_stop_hook_keeps_the_run_going_once_and_reads_the_transcript(tmp_path: Path) -> None:
    project = claude_workspace(
        tmp_path / "project",
        hooks={"Stop": [{"hooks": [command_hook("tests_before_stop.py")]}]},
        scripts={"tests_before_stop.py": TESTS_BEFORE_STOP},
    )
    model = write_script(
        project,
        [
            {"content": "All done."},
            call("run_command", command="python -m pytest -q"),
            {"expect": {"tool_result_contains": "2 passed"}, "content": "The tests pass; done."},
        ],
    )
    events: list[AgentEvent] = []
    result = make_loop(project, model, mode="yolo", overrides=ALL, events=events).run("Check the cart.")
    assert result.stop_reason == "completed", result.message
    assert result.steps == 3 and result.final_text == "The tests pass; done."
    told = [m["content"] for m in result.messages if m["role"] == "user"][1:]
    assert len(told) == 1 and told[0].startswith("[Stop hook ")
    assert told[0].endswith("Run the tests (python -m pytest -q) before you finish.")
    assert [e.message for e in events if isinstance(e, RunWarning) and e.category == "hook"] == [
        f"Stop hook {command_hook('tests_before_stop.py')['command']}: "
        "Run the tests (python -m pytest -q) before you finish."
    ]
    transcript = Path(os.environ["XDG_STATE_HOME"]) / "architect-nb/checkpoints" / result.run_id
    saved = json.loads((transcript / "transcript.json").read_text())
    assert saved["run_id"] == result.run_id
    assert any(e["kind"] == "tool_call" and e["tool"] == "run_command" for e in saved["events"])
    assert stat.S_IMODE((transcript / "transcript.json").stat().st_mode) == 0o600
    assert stat.S_IMODE(transcript.stat().st_mode) == 0o700


# ---------------------------------------------------------------------------------- the run's start


SESSION_START = """#!/bin/sh
echo "Team rule: money is a Decimal, never a float."
"""

PROMPT_CHECK = """#!/usr/bin/env python3
import json
import sys

prompt = json.load(sys.stdin)["prompt"]
if "deploy" in prompt.lower():
    print("Deploys go through CI, not through the agent.", file=sys.stderr)
    sys.exit(2)
context = {"hookEventName": "UserPromptSubmit", "additionalContext": "Ticket SHOP-12."}
print(json.dumps({"hookSpecificOutput": context}))
"""


@pytest.fixture
def greeted(tmp_path: Path) -> Path:
    return claude_workspace(
        tmp_path / "project",
        hooks={
            "UserPromptSubmit": [{"hooks": [command_hook("prompt_check.py")]}],
            "SessionStart": [{"matcher": "startup", "hooks": [command_hook("session_start.sh")]}],
        },
        scripts={"session_start.sh": SESSION_START, "prompt_check.py": PROMPT_CHECK},
    )


def test_session_start_and_user_prompt_submit_add_context(greeted: Path) -> None:
    model = write_script(greeted, [{"content": "Noted."}])
    result = make_loop(greeted, model, mode="yolo", overrides=ALL).run("Fix the totals.")
    assert result.stop_reason == "completed", result.message
    _system, task, context, _answer = result.messages
    assert task == {"role": "user", "content": "Fix the totals."}
    assert context["role"] == "user"
    # SessionStart runs before UserPromptSubmit, though the file lists it second.
    assert context["content"].index("money is a Decimal") < context["content"].index("Ticket SHOP-12.")


def test_user_prompt_submit_exit_2_refuses_the_task_before_any_model_call(greeted: Path) -> None:
    model = write_script(greeted, [])  # a model call would end the run with script_error
    result = make_loop(greeted, model, mode="yolo", overrides=ALL).run("Deploy to production.")
    assert result.stop_reason == "aborted" and result.steps == 0
    assert "refused the task: Deploys go through CI, not through the agent." in result.message


def test_a_follow_up_cell_is_a_resumed_session(tmp_path: Path) -> None:
    """SessionStart says `startup` for a new thread and `resume` for a run that continues one, so a
    `matcher: resume` hook fires only on follow-ups, as in Claude Code."""
    project = claude_workspace(
        tmp_path / "project",
        hooks={"SessionStart": [{"matcher": "resume", "hooks": [command_hook("record.sh")]}]},
        scripts={"record.sh": RECORD},
    )
    first = make_loop(project, write_script(project, [{"content": "a"}], "a.yaml"), overrides=ALL).run("one")
    assert seen(project) == []
    make_loop(project, write_script(project, [{"content": "b"}], "b.yaml"), overrides=ALL).run(
        "two", thread=first.thread
    )
    [resumed] = seen(project)
    assert resumed["hook_event_name"] == "SessionStart" and resumed["source"] == "resume"


# ---------------------------------------------------------------------------------- on, off, status


def test_hooks_run_only_when_the_workspace_config_says_all_while_deny_rules_apply_by_default(
    tmp_path: Path,
) -> None:
    project = claude_workspace(
        tmp_path / "project",
        hooks={"PreToolUse": [{"matcher": "*", "hooks": [command_hook("record.sh")]}]},
        scripts={"record.sh": RECORD},
        permissions={"deny": ["Read(./.env)"]},
    )
    (project / ".env").write_text("TOKEN=1\n")
    default = build_engine(claude_config(project, use="permissions"), mode="yolo")
    assert default.execute_tool_call("read_file", {"path": "shop/cart.py"}).success
    assert seen(project) == []  # the repository's program did not run
    refused = default.execute_tool_call("read_file", {"path": ".env"})
    assert not refused.success and "sensitive file" in (refused.error or "")

    off = build_engine(claude_config(project, use="off"), mode="yolo")
    assert off.execute_tool_call("read_file", {"path": ".env"}).output.startswith("TOKEN=1")
    assert seen(project) == []

    (project / ".architect.yaml").write_text("hooks:\n  claude_settings: all\n")
    from architect_nb.config import load_config

    on = build_engine(load_config(search_from=project, environ={}), mode="yolo")
    assert on.execute_tool_call("read_file", {"path": "shop/cart.py"}).success
    assert [s["tool_name"] for s in seen(project)] == ["Read"]


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[InteractiveShell, Path]]:
    ws = claude_workspace(
        tmp_path / "ws",
        hooks={
            "PreToolUse": [{"matcher": "Bash", "hooks": [command_hook("bash_command_validator.py")]}],
            "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
        },
        scripts={"bash_command_validator.py": BASH_VALIDATOR},
        permissions={"deny": ["Read(./.env)"], "ask": ["Bash(git push:*)"], "allow": ["Bash(npm test:*)"]},
    )
    (ws / ".claude" / "settings.local.json").write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "Done?"}]}]}})
    )
    monkeypatch.chdir(ws)
    reset_session()
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "architect_nb")
    yield ip, ws
    ip.run_line_magic("unload_ext", "architect_nb")
    reset_session()


def test_status_lists_the_claude_hooks_and_rules_found(shell: tuple[InteractiveShell, Path]) -> None:
    ip, _ws = shell
    status = repr(ip.run_line_magic("architect", "status"))
    assert (
        "Claude Code settings: .claude/settings.json, .claude/settings.local.json "
        "(hooks.claude_settings: permissions)"
    ) in status
    assert "hooks, found, not run (hooks.claude_settings: all runs them):" in status
    assert (
        'PreToolUse [Bash]: python3 "$CLAUDE_PROJECT_DIR"/.claude/hooks/bash_command_validator.py' in status
    )
    assert "permission rules: deny Read(./.env), ask Bash(git push:*)" in status
    assert "not applied: allow Bash(npm test:*) (allow rules never lower the confirmation)" in status
    assert "not applied: .claude/settings.json: hooks.Notification (no such event here" in status
    assert "hooks.Stop[0].hooks[0] has type 'prompt'; only `command` hooks run here" in status
    ip.run_line_magic("architect", "config hooks.claude_settings=all")
    assert "  hooks, run:" in repr(ip.run_line_magic("architect", "status"))


# ---------------------------------------------------------------------------------- what hooks get


def test_claude_hooks_get_claude_codes_input_and_no_more_secrets_than_native_hooks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "s3cr3t-value-for-the-test"
    monkeypatch.setenv("SHOP_API_KEY", secret)
    default_redactor().refresh()
    try:
        project = claude_workspace(
            tmp_path / "project",
            hooks={
                "PreToolUse": [{"matcher": "Write", "hooks": [command_hook("record.sh")]}],
                "PostToolUse": [{"matcher": "Write", "hooks": [command_hook("record.sh")]}],
            },
            scripts={"record.sh": RECORD},
        )
        model = write_script(
            project,
            [call("write_file", path="config.txt", content=f"key={secret}\n"), {"content": "Saved."}],
        )
        result = make_loop(project, model, mode="yolo", overrides=ALL).run(f"Save the key {secret}.")
    finally:
        monkeypatch.delenv("SHOP_API_KEY")
        default_redactor().refresh()
    assert result.stop_reason == "completed", result.message
    pre, post = seen(project)
    common = {
        "session_id": result.run_id,
        "cwd": str(project),
        "tool_name": "Write",
        "tool_input": {
            "file_path": str(project / "config.txt"),
            "content": f"key={secret}\n",
            "mode": "overwrite",
        },
    }
    assert pre == {**common, "hook_event_name": "PreToolUse", "transcript_path": pre["transcript_path"]}
    assert post == {
        **common,
        "hook_event_name": "PostToolUse",
        "transcript_path": pre["transcript_path"],
        "tool_response": {
            "success": True,
            "output": post["tool_response"]["output"],
            "filePath": str(project / "config.txt"),
        },
    }
    assert post["tool_response"]["output"].startswith("Created config.txt")
    # The arguments are the call's, as native hooks get them; the transcript file is redacted.
    transcript = Path(pre["transcript_path"]).read_text()
    assert "[REDACTED:SHOP_API_KEY]" in transcript and secret not in transcript

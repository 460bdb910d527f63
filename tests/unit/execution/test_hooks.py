"""HookExecutor with real shell scripts: exit codes, native and Claude Code JSON, timeouts, process groups."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from architect_nb.config.schema import HooksConfig
from architect_nb.execution.hooks.executor import HookDecision, HookEvent, HookExecutor
from tests.support.engine import hook, script


def run(workspace: Path, event: HookEvent, hooks: list, **context: object) -> list:
    executor = HookExecutor(HooksConfig.model_validate({event.value: hooks}), workspace)
    return executor.run_event(event, {"tool_name": "write_file", "tool_input": {"path": "a.py"}, **context})


def test_ten_events() -> None:
    assert [e.value for e in HookEvent] == [
        "pre_tool_use",
        "post_tool_use",
        "pre_llm_call",
        "post_llm_call",
        "session_start",
        "session_end",
        "on_error",
        "budget_warning",
        "context_compress",
        "agent_complete",
    ]
    assert {e for e in HookEvent if e.can_block} == {HookEvent.PRE_TOOL_USE, HookEvent.PRE_LLM_CALL}


def test_exit_0_allows_and_receives_env_and_stdin(workspace: Path, tmp_path: Path) -> None:
    seen = tmp_path / "seen"
    cmd = script(
        tmp_path,
        "allow.sh",
        f"cat > {seen}.json\n"
        f'echo "$ARCHITECT_EVENT|$ARCHITECT_TOOL_NAME|$ARCHITECT_FILE_PATH|$PWD" > {seen}.env\n',
    )
    (result,) = run(workspace, HookEvent.PRE_TOOL_USE, [hook(cmd, "h")], files=["a.py"])
    assert result.decision is HookDecision.ALLOW and not result.warning
    payload = json.loads(Path(f"{seen}.json").read_text())
    assert payload["hook_event_name"] == "pre_tool_use"
    assert payload["tool_name"] == "write_file"
    assert payload["tool_input"] == {"path": "a.py"}
    assert (
        Path(f"{seen}.env").read_text().strip() == f"pre_tool_use|write_file|{workspace / 'a.py'}|{workspace}"
    )


def test_exit_2_blocks_with_stderr_reason(workspace: Path, tmp_path: Path) -> None:
    cmd = script(tmp_path, "block.sh", "echo 'secrets found' >&2; exit 2\n")
    (result,) = run(workspace, HookEvent.PRE_TOOL_USE, [hook(cmd, "secrets")])
    assert result.decision is HookDecision.BLOCK
    assert result.reason == "secrets found"


def test_exit_2_after_the_fact_is_a_visible_failure_not_a_block(workspace: Path, tmp_path: Path) -> None:
    cmd = script(tmp_path, "post.sh", "echo 'F841 unused x'; exit 2\n")
    (result,) = run(workspace, HookEvent.POST_TOOL_USE, [hook(cmd, "python-lint")])
    assert result.decision is HookDecision.ALLOW
    assert result.report() == "[Hook python-lint: FAILED (exit 2)]\nF841 unused x"


def test_other_exit_codes_are_warnings(workspace: Path, tmp_path: Path) -> None:
    cmd = script(tmp_path, "crash.sh", "echo boom >&2; exit 3\n")
    (result,) = run(workspace, HookEvent.PRE_TOOL_USE, [hook(cmd, "crashy")])
    assert result.decision is HookDecision.ALLOW
    assert result.warning == "FAILED (exit 3)"
    assert "boom" in result.report()


def test_updated_input_modifies(workspace: Path, tmp_path: Path) -> None:
    cmd = script(
        tmp_path, "mod.sh", """echo '{"updatedInput": {"path": "b.py"}, "additionalContext": "moved"}'\n"""
    )
    (result,) = run(workspace, HookEvent.PRE_TOOL_USE, [hook(cmd, "mover")])
    assert result.decision is HookDecision.MODIFY
    assert result.updated_input == {"path": "b.py"}
    assert result.additional_context == "moved"


def test_bad_json_is_a_warning(workspace: Path, tmp_path: Path) -> None:
    cmd = script(tmp_path, "bad.sh", "echo '{not json'\n")
    (result,) = run(workspace, HookEvent.PRE_TOOL_USE, [hook(cmd, "bad")])
    assert result.decision is HookDecision.ALLOW
    assert "invalid JSON" in result.warning
    assert "{not json" in result.report()


def test_plain_text_stdout_is_ignored(workspace: Path, tmp_path: Path) -> None:
    cmd = script(tmp_path, "chatty.sh", "echo 'all good'\n")
    (result,) = run(workspace, HookEvent.PRE_TOOL_USE, [hook(cmd, "chatty")])
    assert result.decision is HookDecision.ALLOW and not result.warning and not result.report()


@pytest.mark.parametrize(
    ("output", "decision", "ask", "reason"),
    [
        (
            {"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "no"}},
            HookDecision.BLOCK,
            False,
            "no",
        ),
        (
            {"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "check it"}},
            HookDecision.ALLOW,
            True,
            "check it",
        ),
        ({"hookSpecificOutput": {"permissionDecision": "allow"}}, HookDecision.ALLOW, False, ""),
        ({"decision": "block", "reason": "tests first"}, HookDecision.BLOCK, False, "tests first"),
        (
            {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "allow",
                    "updatedInput": {"path": "c.py"},
                    "additionalContext": "ctx",
                }
            },
            HookDecision.MODIFY,
            False,
            "",
        ),
    ],
)
def test_claude_code_json(
    workspace: Path, tmp_path: Path, output: dict, decision: HookDecision, ask: bool, reason: str
) -> None:
    cmd = script(tmp_path, "claude.sh", f"cat <<'EOF'\n{json.dumps(output)}\nEOF\n")
    (result,) = run(workspace, HookEvent.PRE_TOOL_USE, [hook(cmd, "claude")])
    assert result.decision is decision
    assert result.ask is ask
    assert result.reason == reason
    if decision is HookDecision.MODIFY:
        assert result.updated_input == {"path": "c.py"}
        assert result.additional_context == "ctx"


def test_claude_block_after_the_fact_becomes_context(workspace: Path, tmp_path: Path) -> None:
    cmd = script(tmp_path, "post.sh", """echo '{"decision": "block", "reason": "fix the lint"}'\n""")
    (result,) = run(workspace, HookEvent.POST_TOOL_USE, [hook(cmd, "lint")])
    assert result.decision is HookDecision.ALLOW
    assert result.additional_context == "fix the lint"


def test_timeout_kills_the_hook(workspace: Path, tmp_path: Path) -> None:
    cmd = script(tmp_path, "slow.sh", "sleep 30\n")
    started = time.monotonic()
    (result,) = run(workspace, HookEvent.PRE_TOOL_USE, [hook(cmd, "slow", timeout=1)])
    assert time.monotonic() - started < 5
    assert result.decision is HookDecision.ALLOW
    assert result.warning.startswith("TIMED OUT after 1s")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is dead for our purpose.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def _wait_dead(pid: int) -> bool:
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return False


def test_timed_out_hook_takes_its_grandchildren_with_it(workspace: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    cmd = script(tmp_path, "tree.sh", f"sleep 60 &\necho $! > {pid_file}\nsleep 60\n")
    started = time.monotonic()
    (result,) = run(workspace, HookEvent.PRE_TOOL_USE, [hook(cmd, "tree", timeout=1)])
    assert time.monotonic() - started < 5
    assert "TIMED OUT" in result.warning
    assert _wait_dead(int(pid_file.read_text()))


def test_grandchild_left_running_does_not_hang_and_is_killed(workspace: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    # The background sleep inherits stdout: a pipe-based runner would wait the full 60 s for it.
    cmd = script(tmp_path, "leaky.sh", f"sleep 60 &\necho $! > {pid_file}\necho done\nexit 0\n")
    started = time.monotonic()
    (result,) = run(workspace, HookEvent.PRE_TOOL_USE, [hook(cmd, "leaky", timeout=10)])
    assert time.monotonic() - started < 3
    assert result.decision is HookDecision.ALLOW and not result.warning
    assert _wait_dead(int(pid_file.read_text()))


def test_first_block_stops_the_chain_and_rewrites_compose(workspace: Path, tmp_path: Path) -> None:
    marker = tmp_path / "third-ran"
    first = script(tmp_path, "first.sh", """echo '{"updatedInput": {"path": "x.py", "extra": 1}}'\n""")
    # The second hook sees the first rewrite on stdin and rewrites again based on it.
    second = script(
        tmp_path,
        "second.sh",
        'grep -q \'"path": "x.py"\' && echo \'{"updatedInput": {"path": "y.py"}}\'\n',
    )
    blocker = script(tmp_path, "block.sh", "echo stop >&2; exit 2\n")
    third = script(tmp_path, "third.sh", f"touch {marker}\n")
    results = run(workspace, HookEvent.PRE_TOOL_USE, [hook(first, "1"), hook(second, "2")])
    assert [r.updated_input for r in results] == [{"path": "x.py", "extra": 1}, {"path": "y.py"}]
    results = run(workspace, HookEvent.PRE_TOOL_USE, [hook(blocker, "b"), hook(third, "3")])
    assert [r.decision for r in results] == [HookDecision.BLOCK]
    assert not marker.exists()


def test_matcher_and_file_patterns(workspace: Path, tmp_path: Path) -> None:
    cmd = script(tmp_path, "ok.sh", "exit 0\n")
    hooks = [
        hook(cmd, "py-only", file_patterns=["*.py"]),
        hook(cmd, "edit-only", matcher="edit_file"),
        hook(cmd, "write", matcher="write_file|edit_file"),
        hook(cmd, "prefix-is-not-enough", matcher="write"),
        hook(cmd, "disabled", enabled=False),
        hook(f"{cmd} {{file}}", "needs-file"),
    ]
    names = [r.name for r in run(workspace, HookEvent.PRE_TOOL_USE, hooks, files=["src/a.py"])]
    assert names == ["py-only", "write", "needs-file"]
    names = [r.name for r in run(workspace, HookEvent.PRE_TOOL_USE, hooks, files=["README.md"])]
    assert names == ["write", "needs-file"]
    names = [r.name for r in run(workspace, HookEvent.PRE_TOOL_USE, hooks)]
    assert names == ["write"]  # no file: file-pattern hooks and {file} hooks are skipped


def test_file_placeholder_is_shell_quoted(workspace: Path, tmp_path: Path) -> None:
    out = tmp_path / "arg"
    cmd = script(tmp_path, "show.sh", f'printf "%s" "$1" > {out}\n')
    nasty = "a b$(touch pwned);'q'.py"
    (result,) = run(workspace, HookEvent.POST_TOOL_USE, [hook(f"{cmd} {{file}}", "q")], files=[nasty])
    assert not result.warning
    assert out.read_text() == str(workspace / nasty)
    assert not (workspace / "pwned").exists()


def test_legacy_post_edit_maps_to_post_tool_use(workspace: Path, tmp_path: Path) -> None:
    cmd = script(tmp_path, "lint.sh", "echo 'x.py:1: bad'; exit 1\n")
    executor = HookExecutor(HooksConfig.model_validate({"post_edit": [hook(cmd, "python-lint")]}), workspace)
    assert executor.run_event(HookEvent.POST_TOOL_USE, {"tool_name": "read_file"}) == []
    (result,) = executor.run_event(HookEvent.POST_TOOL_USE, {"tool_name": "edit_file"})
    assert result.report() == "[Hook python-lint: FAILED (exit 1)]\nx.py:1: bad"


def test_async_hooks_run_in_background_and_cannot_block(workspace: Path, tmp_path: Path) -> None:
    marker = tmp_path / "async-ran"
    cmd = script(tmp_path, "async.sh", f"sleep 0.5; touch {marker}; exit 2\n")
    executor = HookExecutor(
        HooksConfig.model_validate({"pre_tool_use": [hook(cmd, "bg", **{"async": True})]}), workspace
    )
    started = time.monotonic()
    assert executor.run_event(HookEvent.PRE_TOOL_USE, {"tool_name": "x"}) == []
    assert time.monotonic() - started < 0.4
    time.sleep(0.7)  # finished before anyone waits: its result is still collected
    (result,) = executor.wait_async(timeout=5)
    assert marker.exists()
    assert result.decision is HookDecision.ALLOW and result.warning == "FAILED (exit 2)"
    executor.close()


def test_missing_command_is_a_warning(workspace: Path) -> None:
    (result,) = run(workspace, HookEvent.PRE_TOOL_USE, [hook("/nonexistent/hook-xyz", "ghost")])
    assert result.decision is HookDecision.ALLOW
    assert result.warning == "FAILED (exit 127)"


def test_invalid_matcher_names_the_hook(workspace: Path) -> None:
    with pytest.raises(ValueError, match="'broken'"):
        HookExecutor(
            HooksConfig.model_validate({"pre_tool_use": [hook("true", "broken", matcher="(")]}), workspace
        )


def test_odd_context_keys_do_not_break_the_environment(workspace: Path, tmp_path: Path) -> None:
    cmd = script(tmp_path, "ok.sh", "cat > /dev/null; exit 0\n")
    (result,) = run(workspace, HookEvent.PRE_TOOL_USE, [hook(cmd, "ok")], **{"bad key=": "x", "ünï": 1})
    assert result.decision is HookDecision.ALLOW and not result.warning

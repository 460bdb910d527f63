"""run_command's execution layers: blocklist and allowed_only refusals, process groups, timeouts, bounded
output, cwd sandboxing and the environment. Real processes, nothing mocked."""

from __future__ import annotations

import os
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from architect_nb.config import CommandsConfig, SandboxConfig, WorkspaceConfig
from architect_nb.tools.base import ToolResult
from architect_nb.tools.commands.process import OutputBuffer, run_process
from architect_nb.tools.commands.run_command import RunCommandTool
from architect_nb.tools.registry import ToolRegistry
from architect_nb.tools.setup import register_command_tools
from tests.support.sandbox import require_bwrap


def make_tool(workspace: Path, *, sandbox: str = "auto", **config: Any) -> RunCommandTool:
    return RunCommandTool(workspace, CommandsConfig(**config), sandbox_config=SandboxConfig(mode=sandbox))


def alive(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting for a reaper counts as dead)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return "\nState:\tZ" not in status


# ---------------------------------------------------------------- running


def test_runs_and_reports_the_exit_code(workspace: Path) -> None:
    result = make_tool(workspace).execute(command="echo hello && echo err >&2")
    assert result.success, result
    assert result.output == "exit code: 0\nhello\nerr"
    assert result.metadata["exit_code"] == 0
    assert result.metadata["sensitivity"] == "safe"


def test_nonzero_exit_is_a_failure_with_the_output(workspace: Path) -> None:
    result = make_tool(workspace).execute(command="ls no-such-file")
    assert not result.success
    assert result.metadata["exit_code"] == 2
    assert "exited with code 2" in (result.error or "")
    assert "no-such-file" in result.output


def test_stdin_is_closed(workspace: Path) -> None:
    start = time.monotonic()
    result = make_tool(workspace).execute(command="cat", timeout=5)
    assert result.success and time.monotonic() - start < 3


def test_bash_features_match_the_parser(workspace: Path) -> None:
    (workspace / "a.txt").write_text("1\n2\n3\n")
    result = make_tool(workspace).execute(command="cat <(head -n 2 a.txt) | wc -l")
    assert result.success and result.output.endswith("\n2"), result


# ---------------------------------------------------------------- the blocklist and allowed_only


@pytest.mark.parametrize("command", ["rm -rf ~; touch marker", "touch marker && sudo id", ":(){ :|:& };:"])
def test_blocked_commands_never_run(workspace: Path, command: str) -> None:
    result = make_tool(workspace).execute(command=command)
    assert not result.success
    assert "Blocked" in (result.error or "") and "every mode" in (result.error or "")
    assert result.metadata["blocked"] is True
    assert not (workspace / "marker").exists()


def test_allowed_only_refuses_dangerous_commands_before_running(workspace: Path) -> None:
    tool = make_tool(workspace, allowed_only=True)
    result = tool.execute(command="touch marker")
    assert not result.success
    assert "'dangerous' and allowed_only=True" in (result.error or "")
    assert not (workspace / "marker").exists()
    assert tool.execute(command="echo ok").success
    assert tool.execute(command="true && echo dev", env=None).success


def test_allowed_only_lets_dev_commands_run(workspace: Path) -> None:
    (workspace / "Makefile").write_text("all:\n\t@echo built\n")
    result = make_tool(workspace, allowed_only=True).execute(command="make")
    # Under `make test` a nested make also prints "Entering directory" lines, so look for the line itself.
    assert result.success and "built" in result.output.splitlines(), result


def test_dangerous_commands_run_without_allowed_only(workspace: Path) -> None:
    result = make_tool(workspace).execute(command="touch marker")
    assert result.success and (workspace / "marker").exists()


# ---------------------------------------------------------------- timeouts and process groups


def running_with(marker: str) -> list[int]:
    """Host pids of live processes whose command line holds `marker` (pids seen inside the sandbox's own
    pid namespace mean nothing out here)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline and alive(int(entry.name)):
                found.append(int(entry.name))
    return found


def wait_none_running(marker: str, seconds: float = 3.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := running_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left


@pytest.mark.parametrize("sandbox", ["off", "auto"])
def test_timeout_kills_the_whole_tree(workspace: Path, sandbox: str) -> None:
    if sandbox == "auto":
        require_bwrap()
    command = "sleep 61.17 & (sleep 62.17 & wait) & wait"
    start = time.monotonic()
    result = make_tool(workspace, sandbox=sandbox).execute(command=command, timeout=1)
    assert time.monotonic() - start < 4
    assert not result.success and result.metadata["timed_out"] is True
    assert "Timed out after 1 s" in (result.error or "")
    assert result.metadata["exit_code"] is None
    assert result.metadata["sandboxed"] is (sandbox == "auto")
    assert not wait_none_running("61.17") and not wait_none_running("62.17"), "a child survived the timeout"


@pytest.mark.parametrize("sandbox", ["off", "auto"])
def test_background_jobs_do_not_outlive_the_call(workspace: Path, sandbox: str) -> None:
    if sandbox == "auto":
        require_bwrap()
    start = time.monotonic()
    tool = make_tool(workspace, sandbox=sandbox)
    result = tool.execute(command="sleep 63.17 & echo started", timeout=30)
    assert result.success and time.monotonic() - start < 3
    assert not wait_none_running("63.17")


def test_default_timeout_comes_from_the_config(workspace: Path) -> None:
    result = make_tool(workspace, default_timeout=1).execute(command="sleep 5")
    assert result.metadata["timed_out"] is True


@pytest.mark.parametrize("timeout", [0, 601, -1])
def test_timeout_bounds(workspace: Path, timeout: int) -> None:
    result = make_tool(workspace).execute(command="true", timeout=timeout)
    assert not result.success and "timeout" in (result.error or "")


# ---------------------------------------------------------------- output


def test_truncation_keeps_head_and_tail_with_a_marker(workspace: Path) -> None:
    result = make_tool(workspace, max_output_lines=10).execute(command="seq 1 1000")
    assert result.success
    lines = result.output.splitlines()
    assert lines[0] == "exit code: 0"
    assert lines[1:6] == ["1", "2", "3", "4", "5"]
    assert lines[6] == "[... 990 lines omitted ...]"
    assert lines[7:] == ["996", "997", "998", "999", "1000"]
    assert result.metadata["lines_omitted"] == 990


def test_output_bomb_is_bounded_in_memory(workspace: Path) -> None:
    tracemalloc.start()
    try:
        start = time.monotonic()
        result = make_tool(workspace, max_output_lines=20).execute(command="yes", timeout=20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.monotonic() - start < 15  # stopped by the byte limit, not the timeout
    assert not result.success and "Stopped after" in (result.error or "")
    assert len(result.output) < 1000
    assert "lines omitted" in result.output
    assert peak < 8 * 1024 * 1024, peak


def test_one_endless_line_is_cut(workspace: Path) -> None:
    result = make_tool(workspace).execute(command="head -c 5000000 /dev/urandom | base64 -w0")
    assert result.success
    assert len(result.output) < 5000
    assert "line cut" in result.output


def test_output_bomb_in_the_runner(tmp_path: Path) -> None:
    outcome = run_process(
        ["bash", "-c", "cat /dev/urandom | base64"],
        cwd=tmp_path,
        env=os.environ,
        timeout=30,
        max_lines=50,
        max_bytes=20 * 1024 * 1024,
    )
    assert outcome.output_limited and not outcome.timed_out
    assert outcome.output.count("\n") <= 51


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [
        ([b"a\nb\nc\n"], "a\nb\nc"),
        ([b"a\nb", b"\nc"], "a\nb\nc"),
        ([b"1\n2\n3\n4\n5\n6\n7\n"], "1\n2\n[... 3 lines omitted ...]\n6\n7"),
        ([b"1\n2\n3\n4\n5\n6\n7"], "1\n2\n[... 3 lines omitted ...]\n6\n7"),
        ([b"1\n2\n3\n4\n"], "1\n2\n3\n4"),
        ([b"\xff\xfe\n"], "\ufffd\ufffd"),
    ],
)
def test_output_buffer(chunks: list[bytes], expected: str) -> None:
    buffer = OutputBuffer(max_lines=4)
    for chunk in chunks:
        buffer.feed(chunk)
    assert buffer.render()[0] == expected


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=3000), split=st.integers(min_value=1, max_value=50), lines=st.integers(2, 12))
def test_output_buffer_matches_a_plain_reference(data: bytes, split: int, lines: int) -> None:
    buffer = OutputBuffer(max_lines=lines, line_bytes=40)
    for i in range(0, len(data), split):
        buffer.feed(data[i : i + split])
    text, omitted = buffer.render()
    every = data.decode("utf-8", "replace").split("\n") if data else []
    if data.endswith(b"\n"):
        every.pop()
    head, tail = lines // 2, lines - lines // 2
    assert omitted == max(len(every) - head - tail, 0)
    if omitted == 0:
        assert text.count("\n") == max(len(every) - 1, 0)


# ---------------------------------------------------------------- cwd and env


def test_cwd_inside_the_workspace(workspace: Path) -> None:
    (workspace / "sub").mkdir()
    result = make_tool(workspace).execute(command="pwd", cwd="sub")
    assert result.success and result.output.endswith(str(workspace / "sub"))
    assert result.metadata["cwd"] == "sub"


@pytest.mark.parametrize("cwd", ["..", "../outside", "/", "~", "link", "sub/../..", "missing", "file.txt"])
def test_cwd_escapes_are_refused(workspace: Path, outside: Path, cwd: str) -> None:
    (workspace / "sub").mkdir()
    (workspace / "file.txt").write_text("x")
    (workspace / "link").symlink_to(outside)
    result = make_tool(workspace).execute(command="touch marker", cwd=cwd)
    assert not result.success, cwd
    assert not (outside / "marker").exists() and not (workspace.parent / "marker").exists()


def test_env_adds_variables(workspace: Path) -> None:
    result = make_tool(workspace).execute(command='echo "$GREETING-$HOME"', env={"GREETING": "hi"})
    assert result.success and result.output.endswith(f"hi-{os.environ['HOME']}"), result


def test_env_with_a_safe_command_is_refused(workspace: Path) -> None:
    """The engine may run a 'safe' command unconfirmed; env variables could make `ls` run anything."""
    result = make_tool(workspace).execute(command="ls", env={"LD_PRELOAD": "/tmp/x.so"})
    assert not result.success and "NAME=value cmd" in (result.error or "")


@pytest.mark.parametrize("env", [{"1BAD": "x"}, {"A=B": "x"}, {"NUL": "a\x00b"}, {"": "x"}])
def test_bad_env_is_refused(workspace: Path, env: dict[str, str]) -> None:
    result = make_tool(workspace).execute(command="true", env=env)
    assert not result.success and "env" in (result.error or "")


def test_inherited_bash_env_is_not_sourced(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = workspace / "startup.sh"
    script.write_text(f"touch {workspace / 'sourced'}\n")
    monkeypatch.setenv("BASH_ENV", str(script))
    assert make_tool(workspace).execute(command="true").success
    assert not (workspace / "sourced").exists()


# ---------------------------------------------------------------- the tool itself


def test_registration_follows_enabled(workspace: Path) -> None:
    registry = ToolRegistry()
    register_command_tools(registry, WorkspaceConfig(root=workspace), CommandsConfig(enabled=False))
    assert "run_command" not in registry.names()
    config = CommandsConfig(allowed_only=True)
    register_command_tools(registry, WorkspaceConfig(root=workspace), config)
    tool = registry.get("run_command")
    assert isinstance(tool, RunCommandTool) and tool.commands_config is config


def test_schema_is_short_and_documented(workspace: Path) -> None:
    schema = make_tool(workspace).get_schema()["function"]
    assert len(schema["description"]) < 250
    assert set(schema["parameters"]["properties"]) == {"command", "cwd", "timeout", "env"}
    assert schema["parameters"]["required"] == ["command"]
    assert all(p.get("description") for p in schema["parameters"]["properties"].values())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    command=st.one_of(
        st.text(max_size=60), st.sampled_from(["ls", "echo $(id)", "cat /etc/hostname", "sudo"])
    ),
    cwd=st.one_of(st.none(), st.sampled_from([".", "..", "sub", "/etc", "\x00"])),
    timeout=st.one_of(st.none(), st.integers(-3, 3)),
)
def test_the_tool_never_raises(workspace: Path, command: str, cwd: str | None, timeout: int | None) -> None:
    (workspace / "sub").mkdir(exist_ok=True)
    tool = make_tool(workspace, allowed_only=True, default_timeout=1)
    result = tool.execute(command=command, cwd=cwd, timeout=timeout)
    assert isinstance(result, ToolResult)
    if not result.success:
        assert result.error


def test_output_has_no_forced_colour(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # ipykernel sets FORCE_COLOR=1; colour codes would reach the model's context and saved transcripts.
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("CLICOLOR_FORCE", "1")
    result = make_tool(workspace).execute(
        command="echo ${FORCE_COLOR:-unset} ${CLICOLOR_FORCE:-unset} $NO_COLOR"
    )
    assert result.success and result.output.splitlines()[-1] == "unset unset 1", result

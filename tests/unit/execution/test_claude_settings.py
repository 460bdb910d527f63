"""Reading `.claude/settings.json` (bad, hostile and huge files never raise; every problem is said), the
transcript file Claude-style hooks read, and the edges of the protocol: timeouts, a Stop hook that never lets
go, an updatedInput of the wrong types."""

from __future__ import annotations

import gc
import json
import os
import stat
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from architect_nb.agent.events import AgentEvent, RunWarning
from architect_nb.execution.build import build_engine
from architect_nb.execution.checkpoints.files import CheckpointFiles
from architect_nb.execution.guardrails.claude_permissions import ClaudePermissions, claude_status
from architect_nb.execution.hooks.claude_settings import ClaudeSettings, read_claude_settings
from architect_nb.execution.hooks.claude_shape import claude_call, our_changes
from architect_nb.execution.hooks.transcript import HookTranscript
from tests.support.agent import make_loop, write_script
from tests.support.claude import claude_config, claude_workspace, command_hook


def write_settings(root: Path, data: Any, name: str = "settings.json") -> None:
    (root / ".claude").mkdir(exist_ok=True)
    text = data if isinstance(data, str | bytes) else json.dumps(data)
    path = root / ".claude" / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())


def test_no_settings_is_empty(workspace: Path) -> None:
    assert read_claude_settings(workspace) == ClaudeSettings()
    assert claude_status(workspace, "permissions") == [
        "Claude Code settings: none in the workspace (.claude/settings.json)"
    ]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", ".claude/settings.json is not valid JSON (Expecting property name"),
        ("[1, 2]", ".claude/settings.json holds a JSON list, not an object; it was ignored"),
        (b"\xff\xfe{}", ".claude/settings.json is not valid JSON ("),
        ("{" + " " * (1 << 20) + "}", ".claude/settings.json is larger than 1024 KiB; it was ignored"),
    ],
)
def test_a_file_that_cannot_be_read_is_ignored_and_said(workspace: Path, content: str, problem: str) -> None:
    write_settings(workspace, content)
    found = read_claude_settings(workspace)
    assert found.files == (".claude/settings.json",) and found.hooks == ()
    assert len(found.unreadable) == 1 and found.unreadable[0].startswith(problem)
    assert found.problems == found.unreadable


def test_every_entry_that_is_not_understood_is_said_and_the_rest_is_read(workspace: Path) -> None:
    write_settings(
        workspace,
        {
            "hooks": {
                "PreToolUse": [
                    {"matcher": "Bash(", "hooks": [{"type": "command", "command": "a"}]},
                    {"matcher": 5, "hooks": [{"type": "command", "command": "b"}]},
                    {"matcher": "*", "hooks": [{"type": "command", "command": "c", "timeout": True}]},
                    {"matcher": "Edit", "hooks": "nope"},
                    "nope",
                ],
                "PostToolUse": {"matcher": "x"},
                "Stop": [
                    {
                        "matcher": "ignored for Stop",
                        "hooks": [
                            {"type": "prompt", "prompt": "done?"},
                            {"type": "command", "command": "  "},
                            {"type": "command", "command": "d", "timeout": 9999},
                            {"type": "command", "command": "e", "timeout": 0.2},
                        ],
                    }
                ],
                "Notification": [],
            },
            "permissions": {"allow": "Bash", "deny": ["Read(./.env)", 3, ""], "defaultMode": "plan"},
        },
    )
    found = read_claude_settings(workspace)
    assert [(h.event.name, h.matcher, h.command, h.timeout) for h in found.hooks] == [
        ("PreToolUse", "*", "c", 60),
        ("Stop", "", "d", 600),
        ("Stop", "", "e", 1),
    ]
    where = ".claude/settings.json: hooks."
    assert found.problems == (
        f"{where}PreToolUse[0]: `matcher` 'Bash(' is not a valid regex "
        "(missing ), unterminated subpattern at position 4)",
        f"{where}PreToolUse[1]: `matcher` is not a string",
        f"{where}PreToolUse[3] has no `hooks` list",
        f"{where}PreToolUse[4] has no `hooks` list",
        f"{where}PostToolUse is not a list",
        f"{where}Stop[0].hooks[0] has type 'prompt'; only `command` hooks run here",
        f"{where}Stop[0].hooks[1] has no command",
        f"{where}Notification (no such event here; see docs/hooks.md)",
        ".claude/settings.json: permissions.defaultMode (only allow, deny and ask are read)",
        ".claude/settings.json: permissions.allow is not a list",
        ".claude/settings.json: permissions.deny holds 3, not a rule",
        ".claude/settings.json: permissions.deny holds '', not a rule",
    )
    assert found.deny == ("Read(./.env)",) and found.allow == ()


def test_both_files_are_read_and_session_start_runs_before_user_prompt_submit(workspace: Path) -> None:
    write_settings(
        workspace,
        {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "shared-prompt"}]}]}},
    )
    write_settings(
        workspace,
        {
            "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "local-start"}]}]},
            "permissions": {"ask": ["Bash(git push:*)"]},
        },
        "settings.local.json",
    )
    found = read_claude_settings(workspace)
    assert found.files == (".claude/settings.json", ".claude/settings.local.json")
    assert [(h.event.name, h.command, h.source) for h in found.hooks] == [
        ("SessionStart", "local-start", ".claude/settings.local.json"),
        ("UserPromptSubmit", "shared-prompt", ".claude/settings.json"),
    ]
    assert found.ask == ("Bash(git push:*)",)


def test_rules_that_do_not_map_are_listed(workspace: Path) -> None:
    write_settings(
        workspace,
        {
            "permissions": {
                "deny": ["Read(//etc/passwd)", "Read(~/.ssh/**)", "WebFetch(domain:example.com)", "Bash(("],
                "ask": [f"Edit(//{workspace}/src/**)", "Read(**/secrets/*)"],
                "allow": ["Edit"],
            }
        },
    )
    rules = ClaudePermissions(read_claude_settings(workspace), workspace)
    assert rules.not_applied == [
        "allow Edit (allow rules never lower the confirmation)",
        "deny Read(//etc/passwd) (outside the workspace, which no tool reaches)",
        "deny Read(~/.ssh/**) (outside the workspace, which no tool reaches)",
        "deny WebFetch(domain:example.com) (no such specifier here)",
        "deny Bash(( (not a rule: write Tool or Tool(specifier))",
    ]
    assert rules.sensitive_files == [] and rules.protected_files == []
    # An absolute path inside the workspace is a workspace path; `**/` matches at any depth anyway.
    assert rules.ask_reason("edit_file", {"path": "src/a.py"}) is not None
    assert rules.ask_reason("read_file", {"path": "deep/secrets/key.txt"}) is not None
    assert rules.ask_reason("read_file", {"path": "secrets/key.txt"}) is not None
    assert rules.ask_reason("read_file", {"path": "src/a.py"}) is None


def test_status_off_and_unreadable(workspace: Path) -> None:
    write_settings(workspace, "{")
    assert claude_status(workspace, "off") == [
        "Claude Code settings: .claude/settings.json (hooks.claude_settings: off)",
        "  not read: set hooks.claude_settings to permissions or all to use them",
    ]
    assert claude_status(workspace, "all")[1].startswith(
        "  not applied: .claude/settings.json is not valid JSON"
    )


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)
events = st.sampled_from(["PreToolUse", "PostToolUse", "Stop", "SessionStart", "UserPromptSubmit", "Other"])
hook_entries = st.fixed_dictionaries(
    {"type": st.sampled_from(["command", "prompt", 3]), "command": json_values | st.text(max_size=10)},
    optional={"timeout": json_values},
)
groups = st.fixed_dictionaries(
    {"hooks": st.lists(hook_entries | json_values, max_size=3)},
    optional={"matcher": st.sampled_from(["*", "", "Bash", "Edit|Write", "(", "mcp__.*"]) | json_values},
)
rules = st.sampled_from(
    ["Bash", "Bash(curl:*)", "Read(./.env)", "Edit(/x/**)", "mcp__s", "mcp__s__*", "Read(//etc)", "Bash(a *)"]
) | st.text(max_size=15)
settings_data = st.fixed_dictionaries(
    {},
    optional={
        "hooks": st.dictionaries(events, st.lists(groups | json_values, max_size=3), max_size=3)
        | json_values,
        "permissions": st.dictionaries(
            st.sampled_from(["allow", "deny", "ask", "other"]), st.lists(rules | json_values, max_size=4)
        )
        | json_values,
    },
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=settings_data | json_values, tool=st.sampled_from(["run_command", "read_file", "edit_file", "x"]))
def test_any_settings_file_is_read_without_raising(workspace: Path, data: Any, tool: str) -> None:
    write_settings(workspace, data)
    found = read_claude_settings(workspace)
    rules = ClaudePermissions(found, workspace)
    for arguments in ({"command": "curl x && rm y"}, {"path": ".env"}, {"path": 5}, {}):
        rules.refusal(tool, arguments)
        rules.ask_reason(tool, arguments)
    found.status_lines("all", rules.not_applied)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    tool=st.sampled_from(["run_command", "read_file", "apply_patch", "grep", "edit_notebook_cell", "zzz"]),
    arguments=st.dictionaries(
        st.sampled_from(["path", "command", "timeout", "patch", "case_sensitive", "old_str", "x"]),
        json_values,
        max_size=4,
    ),
    updated=st.dictionaries(
        st.sampled_from(["file_path", "command", "timeout", "-i", "edits", "new_source", "edit_mode", "x"]),
        json_values,
        max_size=4,
    ),
)
def test_the_mapping_never_raises_on_hostile_values(
    workspace: Path, tool: str, arguments: dict[str, Any], updated: dict[str, Any]
) -> None:
    call = claude_call(tool, arguments, workspace)
    json.dumps(call.tool_input, default=str)
    our_changes(call, updated, workspace)


# ---------------------------------------------------------------------------------- the transcript file


def test_without_saved_checkpoints_the_transcript_lives_in_a_private_temporary_folder(
    workspace: Path,
) -> None:
    transcript = HookTranscript(None, workspace)
    path = Path(
        transcript.write("abc123", lambda: {"run_id": "abc123", "events": [{"kind": "x", "text": "hi"}]})
    )
    assert json.loads(path.read_text()) == {"run_id": "abc123", "events": [{"kind": "x", "text": "hi"}]}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.parent.stat().st_mode) == 0o700
    folder = path.parent.parent
    assert json.loads(Path(transcript.write("abc123", None)).read_text()) == {
        "run_id": "abc123",
        "events": [],
    }
    del transcript
    gc.collect()
    assert not folder.exists()


def test_a_rewritten_transcript_is_current_and_redacted_item_by_item(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from architect_nb.redaction import default_redactor

    secret = "hunter2-hunter2-hunter2"
    monkeypatch.setenv("SHOP_TOKEN", secret)
    default_redactor().refresh()
    try:
        files = CheckpointFiles(tmp_path / "state", workspace)
        transcript = HookTranscript(files, workspace)
        events: list[dict[str, Any]] = [{"kind": "text", "text": f"key {secret}"}]

        def source() -> dict[str, Any]:
            return {"version": 1, "run_id": "run1", "events": list(events)}

        first = json.loads(Path(transcript.write("run1", source)).read_text())
        events[0] = {"kind": "text", "text": f"key {secret} and more"}  # a streamed text grows
        events.append({"kind": "tool", "arguments": {"content": secret}})
        second = json.loads(Path(transcript.write("run1", source)).read_text())
    finally:
        monkeypatch.delenv("SHOP_TOKEN")
        default_redactor().refresh()
    assert first["events"] == [{"kind": "text", "text": "key [REDACTED:SHOP_TOKEN]"}]
    assert second == {
        "version": 1,
        "run_id": "run1",
        "events": [
            {"kind": "text", "text": "key [REDACTED:SHOP_TOKEN] and more"},
            {"kind": "tool", "arguments": {"content": "[REDACTED:SHOP_TOKEN]"}},
        ],
    }


def test_runs_holding_only_a_transcript_are_pruned_with_the_others(workspace: Path, tmp_path: Path) -> None:
    files = CheckpointFiles(tmp_path / "state", workspace, keep_days=1)
    path = files.save_transcript("old", b"{}")
    files.save_transcript("new", b"{}")
    (tmp_path / "state" / "stray").mkdir()
    long_ago = time.time() - 3 * 86400
    os.utime(path, (long_ago, long_ago))
    assert [run["run_id"] for run in files.prune()] == ["old"]
    assert sorted(p.name for p in (tmp_path / "state").iterdir()) == ["new", "stray"]


# ---------------------------------------------------------------------------------- the protocol's edges


def test_a_claude_hook_that_times_out_is_a_warning_and_never_blocks(tmp_path: Path) -> None:
    project = claude_workspace(
        tmp_path / "project",
        hooks={"PreToolUse": [{"matcher": "Write", "hooks": [{**command_hook("slow.sh"), "timeout": 1}]}]},
        scripts={"slow.sh": "#!/bin/sh\nsleep 30\nexit 2\n"},
    )
    started = time.monotonic()
    result = build_engine(claude_config(project), mode="yolo").execute_tool_call(
        "write_file", {"path": "a.txt", "content": "x\n"}
    )
    assert time.monotonic() - started < 10
    assert result.success and (project / "a.txt").read_text() == "x\n"
    assert "TIMED OUT after 1s and was killed" in result.output


def test_an_updated_input_of_the_wrong_types_fails_the_call_clearly(tmp_path: Path) -> None:
    bad = '#!/bin/sh\necho \'{"hookSpecificOutput": {"updatedInput": {"file_path": 5, "content": null}}}\'\n'
    project = claude_workspace(
        tmp_path / "project",
        hooks={"PreToolUse": [{"matcher": "Write", "hooks": [command_hook("bad.sh")]}]},
        scripts={"bad.sh": bad},
    )
    result = build_engine(claude_config(project), mode="yolo").execute_tool_call(
        "write_file", {"path": "a.txt", "content": "x\n"}
    )
    assert not result.success and not (project / "a.txt").exists()
    assert result.error is not None
    assert result.error.startswith("A pre_tool_use hook rewrote the arguments into invalid ones.")
    assert "path" in result.error and "content" in result.error


def test_a_stop_hook_that_never_lets_go_is_bounded_by_max_steps(tmp_path: Path) -> None:
    project = claude_workspace(
        tmp_path / "project",
        hooks={"Stop": [{"hooks": [command_hook("never.sh")]}]},
        scripts={"never.sh": "#!/bin/sh\necho 'Not yet.' >&2\nexit 2\n"},
    )
    model = write_script(project, [{"content": "Done."}] * 3)
    result = make_loop(
        project, model, mode="yolo", overrides={"hooks.claude_settings": "all"}, max_steps=3
    ).run("Finish.")
    assert result.stop_reason == "max_steps" and result.steps == 3


def test_an_unreadable_settings_file_is_a_warning_when_the_run_starts(tmp_path: Path) -> None:
    project = claude_workspace(tmp_path / "project")
    (project / ".claude" / "settings.json").write_text("{oops")
    model = write_script(project, [{"content": "Done."}])
    seen: list[AgentEvent] = []
    result = make_loop(project, model, mode="yolo", events=seen).run("Hello.")
    assert result.stop_reason == "completed"
    warnings = [e.message for e in seen if isinstance(e, RunWarning) and e.category == "hook"]
    assert len(warnings) == 1
    assert warnings[0].startswith("Claude Code settings: .claude/settings.json is not valid JSON")

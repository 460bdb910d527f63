"""The project's AGENTS.md and CLAUDE.md: in the system prompt, capped, nested ones told when touched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from architect_nb.agent.conversation.instructions import MAX_FILE_BYTES, ProjectInstructions
from architect_nb.agent.events import AgentEvent, RunStarted, RunWarning
from architect_nb.config import ConfigError, InstructionsConfig, load_config
from architect_nb.notebook.output.event_view import Header, run_view
from architect_nb.notebook.output.text_render import view_lines
from tests.support.agent import make_loop, write_script


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "pkg" / "inner").mkdir(parents=True)
    (root / "AGENTS.md").write_text("Use tabs for YAML. Never touch vendor/.\n")
    (root / "CLAUDE.md").write_text("Run `make check` before you finish.\n")
    (root / "pkg" / "AGENTS.md").write_text("pkg: every function needs a docstring.\n")
    (root / "pkg" / "inner" / "mod.py").write_text("x = 1\n")
    (root / "other.py").write_text("y = 2\n")
    return root


def test_root_files_go_into_the_system_prompt_and_the_header_names_them(workspace: Path) -> None:
    model = write_script(workspace, [{"content": "done"}])
    events: list[AgentEvent] = []
    result = make_loop(workspace, model, events=events).run("hello")
    system = result.messages[0]["content"]
    assert "Use tabs for YAML" in system and "make check" in system
    assert "docstring" not in system  # a subfolder's file waits until a tool goes there
    started = next(e for e in events if isinstance(e, RunStarted))
    assert started.instructions == ("AGENTS.md (39 chars)", "CLAUDE.md (35 chars)")
    header = run_view(result.transcript.to_payload()["events"]).parts[0]
    assert isinstance(header, Header)
    assert "Instructions: AGENTS.md (39 chars), CLAUDE.md (35 chars)" in view_lines(header)


def test_a_subfolders_file_is_told_once_when_a_tool_touches_it(workspace: Path) -> None:
    read = {"name": "read_file", "arguments": {"path": "pkg/inner/mod.py"}}
    model = write_script(
        workspace,
        [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "other.py"}}]},
            {"expect": {"history_lacks": ["every function needs a docstring"]}, "tool_calls": [read]},
            {"expect": {"history_contains": ["pkg: every function needs a docstring"]}, "tool_calls": [read]},
            {"content": "done"},
        ],
    )
    events: list[AgentEvent] = []
    result = make_loop(workspace, model, events=events).run("read")
    assert result.stop_reason == "completed", result.message
    notes = [m for m in result.messages if m["role"] == "user" and "docstring" in str(m["content"])]
    assert len(notes) == 1
    assert notes[0]["content"].startswith("[Project instructions for pkg/ (pkg/AGENTS.md)")
    reads = [e.message for e in events if isinstance(e, RunWarning) and e.category == "instructions_read"]
    assert reads == ["Read instructions pkg/AGENTS.md (38 chars)."]
    # A follow-up in the same thread does not tell it again.
    again = write_script(workspace, [{"tool_calls": [read]}, {"content": "ok"}], name="again.yaml")
    follow = make_loop(workspace, again).run("again", thread=result.thread)
    told = [m for m in follow.thread.messages if "pkg: every function" in str(m.get("content"))]
    assert len(told) == 1


def test_the_cap_cuts_and_says_so(workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text("A" * 700)
    (workspace / "CLAUDE.md").write_text("B" * 700)
    instructions = ProjectInstructions(workspace, InstructionsConfig(max_chars=1000))
    files = instructions.at_start()
    assert [(f.path, f.cut) for f in files] == [("AGENTS.md", False), ("CLAUDE.md", True)]
    assert files[1].text.count("B") == 300 and "400 more characters" in files[1].text
    assert instructions.problems == [
        "Instructions CLAUDE.md cut to 300 of 700 characters (instructions.max_chars is 1,000)."
    ]
    assert files[1].label() == "CLAUDE.md (700 chars, cut)"


def test_huge_binary_and_escaping_files_are_left_out_with_a_reason(workspace: Path, tmp_path: Path) -> None:
    (workspace / "AGENTS.md").write_bytes(b"x" * (MAX_FILE_BYTES + 1))
    (workspace / "CLAUDE.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    secret = tmp_path / "outside.md"
    secret.write_text("outside rules")
    os.symlink(secret, workspace / "pkg" / "AGENTS.md.link")
    (workspace / "pkg" / "AGENTS.md").unlink()
    os.symlink(secret, workspace / "pkg" / "AGENTS.md")
    instructions = ProjectInstructions(workspace, InstructionsConfig(files=["../outside.md", "missing.md"]))
    assert instructions.at_start() == []
    problems = instructions.problems
    assert f"Instructions AGENTS.md left out: it is {MAX_FILE_BYTES + 1:,} bytes" in problems[0]
    assert problems[1] == "Instructions CLAUDE.md left out: it is not UTF-8 text."
    assert "escapes the workspace" in problems[2]
    assert problems[3] == "Instructions missing.md left out: it is not a file in the workspace."
    files, note = instructions.for_paths(["pkg/inner/mod.py"])
    assert files == [] and note is None
    last = instructions.problems[-1]
    assert "pkg/AGENTS.md" in last and "escapes the workspace" in last
    assert secret.read_text() == "outside rules"  # nothing changed


def test_bad_instructions_warn_and_the_run_goes_on(workspace: Path) -> None:
    (workspace / "AGENTS.md").write_bytes(b"\xff\xfe\x00bad")
    model = write_script(workspace, [{"content": "done"}])
    events: list[AgentEvent] = []
    result = make_loop(workspace, model, events=events).run("hello")
    assert result.stop_reason == "completed"
    warnings = [e.message for e in events if isinstance(e, RunWarning) and e.category == "instructions"]
    assert warnings == ["Instructions AGENTS.md left out: it is not UTF-8 text."]
    assert "make check" in result.messages[0]["content"]


def test_secrets_in_instructions_are_redacted(workspace: Path) -> None:
    key = "sk-ant-api03-" + "Q" * 80
    (workspace / "AGENTS.md").write_text(f"Deploy with ANTHROPIC_API_KEY={key}\n")
    files = ProjectInstructions(workspace).at_start()
    assert key not in files[0].text and "Deploy with" in files[0].text


def test_the_config_turns_it_off_or_adds_files(workspace: Path) -> None:
    (workspace / "docs").mkdir()
    (workspace / "docs" / "rules.md").write_text("Prefer pathlib.\n")
    off = load_config(overrides={"workspace.root": str(workspace), "instructions": False}, environ={})
    assert ProjectInstructions(workspace, off.instructions).at_start() == []
    assert ProjectInstructions(workspace, off.instructions).for_paths(["pkg/x.py"]) == ([], None)
    overrides = {"workspace.root": str(workspace), "instructions": ["docs/rules.md"]}
    more = load_config(overrides=overrides, environ={})
    paths = [f.path for f in ProjectInstructions(workspace, more.instructions).at_start()]
    assert paths == ["AGENTS.md", "CLAUDE.md", "docs/rules.md"]
    with pytest.raises(ConfigError, match="max_chars"):
        load_config(overrides={"instructions": {"max_chars": 10}}, environ={})

"""Every row of the tool table (`execution.hooks.claude_shape.TOOLS`, reproduced in docs/hooks.md),
both ways, through real hook scripts in `.claude/settings.json`: a shell hook (jq) that records what it
reads, with the row's Claude Code name as its matcher, and a Python hook that rewrites the input with
`updatedInput`. Then Claude Code's permission rules as guardrails and confirmation reasons."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from architect_nb.config.schema import MCPConfig, MCPServerConfig
from architect_nb.execution.build import build_engine
from architect_nb.execution.confirmation.confirmers import ScriptedConfirmer
from architect_nb.execution.engine import ExecutionEngine
from architect_nb.execution.hooks.claude_shape import TOOLS, markdown_table
from architect_nb.mcp import MCPManager
from architect_nb.tools.outcome import CallOutcome
from tests.support.claude import RECORD, claude_config, claude_workspace, command_hook, seen
from tests.support.engine import NoopTool

ROOT = Path(__file__).resolve().parents[3]
WS = "{ws}"  # stands for the workspace's absolute path in the rows below
ONE_HUNK = "@@ -1 +1 @@\n-a\n+b\n"
TWO_HUNKS = "@@ -1,2 +1,2 @@\n-a\n+b\n c\n@@ -9 +9 @@\n-x\n+y\n"

# (our tool, its arguments, Claude Code's tool_name, the tool_input a Claude-style hook reads)
FORWARD: list[tuple[str, dict[str, Any], str, dict[str, Any]]] = [
    ("run_command", {"command": "echo hi", "timeout": 5}, "Bash", {"command": "echo hi", "timeout": 5000}),
    (
        "run_command",
        {"command": "ls", "cwd": "shop", "env": {"LANG": "C"}},
        "Bash",
        {"command": "ls", "cwd": "shop", "env": {"LANG": "C"}},
    ),
    (
        "read_file",
        {"path": "shop/cart.py", "offset": 2, "limit": 3},
        "Read",
        {"file_path": f"{WS}/shop/cart.py", "offset": 2, "limit": 3},
    ),
    (
        "read_notebook",
        {"path": "nb.ipynb"},
        "Read",
        {"file_path": f"{WS}/nb.ipynb", "include_outputs": False},
    ),
    (
        "write_file",
        {"path": "docs/new.txt", "content": "x\n"},
        "Write",
        {"file_path": f"{WS}/docs/new.txt", "content": "x\n", "mode": "overwrite"},
    ),
    (
        "edit_file",
        {"path": "shop/cart.py", "old_str": "total = 0", "new_str": "total = 0.0"},
        "Edit",
        {
            "file_path": f"{WS}/shop/cart.py",
            "old_string": "total = 0",
            "new_string": "total = 0.0",
            "replace_all": False,
        },
    ),
    (
        "apply_patch",
        {"path": "shop/cart.py", "patch": ONE_HUNK},
        "Edit",
        {
            "file_path": f"{WS}/shop/cart.py",
            "patch": ONE_HUNK,
            "old_string": "a\n",
            "new_string": "b\n",
            "replace_all": False,
        },
    ),
    (
        "apply_patch",
        {"path": "shop/cart.py", "patch": TWO_HUNKS},
        "MultiEdit",
        {
            "file_path": f"{WS}/shop/cart.py",
            "patch": TWO_HUNKS,
            "edits": [
                {"old_string": "a\nc\n", "new_string": "b\nc\n", "replace_all": False},
                {"old_string": "x\n", "new_string": "y\n", "replace_all": False},
            ],
        },
    ),
    (
        "grep",
        {"pattern": "total", "path": "shop", "case_sensitive": False},
        "Grep",
        {
            "pattern": "total",
            "path": f"{WS}/shop",
            "glob": "*",
            "recursive": True,
            "-i": True,
            "head_limit": 100,
            "include_outputs": False,
        },
    ),
    (
        "search_code",
        {"pattern": r"def \w+", "context_lines": 1},
        "Grep",
        {
            "pattern": r"def \w+",
            "path": WS,
            "glob": "*.{py,ipynb}",
            "-C": 1,
            "head_limit": 50,
            "include_outputs": False,
        },
    ),
    ("find_files", {"pattern": "*.py"}, "Glob", {"pattern": "*.py", "path": WS, "recursive": True}),
    ("list_files", {"path": "shop", "recursive": True}, "LS", {"path": f"{WS}/shop", "recursive": True}),
    (
        "edit_notebook_cell",
        {"path": "nb.ipynb", "cell_id": "c1", "old_str": "1", "new_str": "2"},
        "NotebookEdit",
        {
            "notebook_path": f"{WS}/nb.ipynb",
            "cell_id": "c1",
            "old_string": "1",
            "new_source": "2",
            "edit_mode": "replace",
        },
    ),
    (
        "insert_notebook_cell",
        {"path": "nb.ipynb", "after_cell_id": "c1", "source": "print(1)"},
        "NotebookEdit",
        {
            "notebook_path": f"{WS}/nb.ipynb",
            "cell_id": "c1",
            "index": -1,
            "cell_type": "code",
            "new_source": "print(1)",
            "edit_mode": "insert",
        },
    ),
    (
        "delete_notebook_cell",
        {"path": "nb.ipynb", "cell_id": "c1"},
        "NotebookEdit",
        {"notebook_path": f"{WS}/nb.ipynb", "cell_id": "c1", "edit_mode": "delete"},
    ),
    ("delete_file", {"path": "shop/cart.py"}, "delete_file", {"file_path": f"{WS}/shop/cart.py"}),
    ("noop", {"value": "x"}, "noop", {"value": "x"}),  # a tool of yours: its own names
]

# (our tool, its arguments, the hook's updatedInput changes, what the call then runs with, in our names)
BACKWARD: list[tuple[str, dict[str, Any], dict[str, Any], list[str]]] = [
    (
        "run_command",
        {"command": "echo hi"},
        {"command": "echo changed", "timeout": 7000},
        ["command='echo changed'", "timeout=7"],
    ),
    (
        "read_file",
        {"path": "shop/cart.py"},
        {"file_path": f"{WS}/shop/__init__.py", "offset": 2},
        ["path='shop/__init__.py'", "offset=2"],
    ),
    ("read_notebook", {"path": "a.ipynb"}, {"file_path": f"{WS}/b.ipynb"}, ["path='b.ipynb'"]),
    (
        "write_file",
        {"path": "a.txt", "content": "x"},
        {"file_path": f"{WS}/docs/b.txt", "content": "y"},
        ["path='docs/b.txt'", "content='y'"],
    ),
    (
        "edit_file",
        {"path": "shop/cart.py", "old_str": "a", "new_str": "b"},
        {"old_string": "total = 0", "new_string": "total = 0.0"},
        ["old_str='total = 0'", "new_str='total = 0.0'"],
    ),
    (
        "apply_patch",
        {"path": "shop/cart.py", "patch": ONE_HUNK},
        {"file_path": f"{WS}/shop/other.py"},
        ["path='shop/other.py'"],
    ),
    (
        "grep",
        {"pattern": "a"},
        {"-i": True, "glob": "*.py", "head_limit": 5, "path": f"{WS}/shop"},
        ["case_sensitive=False", "file_pattern='*.py'", "max_results=5", "path='shop'"],
    ),
    ("search_code", {"pattern": "a"}, {"-C": 3, "pattern": "b"}, ["context_lines=3", "pattern='b'"]),
    (
        "find_files",
        {"pattern": "*.py"},
        {"pattern": "*.md", "path": f"{WS}/shop"},
        ["pattern='*.md'", "path='shop'"],
    ),
    ("list_files", {}, {"path": f"{WS}/shop"}, ["path='shop'"]),
    (
        "edit_notebook_cell",
        {"path": "nb.ipynb", "cell_id": "c1", "old_str": "1", "new_str": "2"},
        {"new_source": "3", "old_string": "x", "cell_id": "c2"},
        ["new_str='3'", "old_str='x'", "cell_id='c2'"],
    ),
    (
        "insert_notebook_cell",
        {"path": "nb.ipynb", "source": "print(1)"},
        {"cell_id": "c9", "new_source": "print(2)", "cell_type": "markdown"},
        ["after_cell_id='c9'", "source='print(2)'", "cell_type='markdown'"],
    ),
    ("delete_notebook_cell", {"path": "nb.ipynb", "cell_id": "c1"}, {"cell_id": "c3"}, ["cell_id='c3'"]),
    ("delete_file", {"path": "a.txt"}, {"file_path": f"{WS}/b.txt"}, ["path='b.txt'"]),
    ("noop", {"value": "x"}, {"value": "y"}, ["value='y'"]),
]

REWRITE = """#!/usr/bin/env python3
import json
import sys

UPDATE = json.loads({update!r})
data = json.load(sys.stdin)
output = {{
    "hookSpecificOutput": {{
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "updatedInput": {{**data["tool_input"], **UPDATE}},
    }}
}}
print(json.dumps(output))
"""


def fill(value: Any, ws: Path) -> Any:
    return json.loads(json.dumps(value).replace(WS, str(ws)))


def engine_for(project: Path, *, dry_run: bool = True, **overrides: Any) -> ExecutionEngine:
    config = claude_config(project, **{"workspace.allow_delete": True, **overrides})
    engine = build_engine(config, mode="yolo", dry_run=dry_run)
    engine.registry.register(NoopTool())
    return engine


def test_the_docs_reproduce_the_table() -> None:
    assert markdown_table() in (ROOT / "docs" / "hooks.md").read_text()


def test_every_row_of_the_table_is_tested_both_ways() -> None:
    assert {shape.ours for shape in TOOLS} <= {row[0] for row in FORWARD}
    assert {shape.ours for shape in TOOLS} <= {row[0] for row in BACKWARD}


@pytest.mark.parametrize(
    ("tool", "arguments", "claude_name", "claude_input"), FORWARD, ids=lambda v: str(v)[:30]
)
def test_a_claude_style_hook_reads_the_call_in_claude_codes_names(
    tmp_path: Path, tool: str, arguments: dict[str, Any], claude_name: str, claude_input: dict[str, Any]
) -> None:
    project = claude_workspace(
        tmp_path / "project",
        hooks={"PreToolUse": [{"matcher": claude_name, "hooks": [command_hook("record.sh")]}]},
        scripts={"record.sh": RECORD},
    )
    result = engine_for(project).execute_tool_call(tool, arguments)
    assert result.success, result.error
    (payload,) = seen(project)  # the matcher is Claude Code's name: the hook ran once
    assert payload["hook_event_name"] == "PreToolUse"
    assert payload["tool_name"] == claude_name
    assert payload["tool_input"] == fill(claude_input, project)


@pytest.mark.parametrize(("tool", "arguments", "update", "runs_with"), BACKWARD, ids=lambda v: str(v)[:30])
def test_updated_input_comes_back_in_our_names(
    tmp_path: Path, tool: str, arguments: dict[str, Any], update: dict[str, Any], runs_with: list[str]
) -> None:
    project = claude_workspace(
        tmp_path / "project",
        hooks={"PreToolUse": [{"matcher": "*", "hooks": [command_hook("rewrite.py")]}]},
        scripts={"rewrite.py": REWRITE.format(update=json.dumps(fill(update, project_path(tmp_path))))},
    )
    result = engine_for(project).execute_tool_call(tool, arguments)
    assert result.success, result.error
    first_line = result.output.splitlines()[0]
    assert first_line.startswith(f"[DRY-RUN] would run {tool}(")
    for argument in runs_with:
        assert argument in first_line
    assert "changed the arguments" in result.output and "cannot be changed" not in result.output


def project_path(tmp_path: Path) -> Path:
    return (tmp_path / "project").resolve()


@pytest.mark.parametrize(
    ("tool", "arguments", "update", "refused"),
    [
        ("edit_file", {"path": "a.py", "old_str": "a", "new_str": "b"}, {"replace_all": True}, "replace_all"),
        ("apply_patch", {"path": "a.py", "patch": ONE_HUNK}, {"new_string": "c\n"}, "new_string"),
        ("delete_notebook_cell", {"path": "nb.ipynb", "cell_id": "c1"}, {"edit_mode": "insert"}, "edit_mode"),
    ],
)
def test_fields_claude_code_has_and_we_lack_cannot_be_rewritten(
    tmp_path: Path, tool: str, arguments: dict[str, Any], update: dict[str, Any], refused: str
) -> None:
    project = claude_workspace(
        tmp_path / "project",
        hooks={"PreToolUse": [{"matcher": "*", "hooks": [command_hook("rewrite.py")]}]},
        scripts={"rewrite.py": REWRITE.format(update=json.dumps(update))},
    )
    result = engine_for(project).execute_tool_call(tool, arguments)
    assert result.success and "changed the arguments" not in result.output
    assert f"returned updatedInput fields that cannot be changed here ({refused}); they were ignored" in (
        result.output
    )


def test_a_rewrite_is_checked_by_the_guardrails_again(tmp_path: Path) -> None:
    project = claude_workspace(
        tmp_path / "project",
        hooks={"PreToolUse": [{"matcher": "Write", "hooks": [command_hook("rewrite.py")]}]},
        scripts={
            "rewrite.py": REWRITE.format(
                update=json.dumps({"file_path": str(project_path(tmp_path) / ".env")})
            )
        },
        permissions={"deny": ["Read(./.env)"]},
    )
    result = engine_for(project, dry_run=False).execute_tool_call(
        "write_file", {"path": "a.txt", "content": "K=1\n"}
    )
    assert not result.success
    assert result.error is not None and result.error.startswith("Guardrail: '.env' is a sensitive file")
    assert "[Hook " in result.output and "changed the arguments: path]" in result.output
    assert not (project / ".env").exists() and not (project / "a.txt").exists()


def test_mcp_tools_are_mcp__server__tool_both_ways(tmp_path: Path) -> None:
    toy = ROOT / "tests" / "support" / "mcp_toy_server.py"
    project = claude_workspace(
        tmp_path / "project",
        hooks={
            "PreToolUse": [
                {"matcher": "mcp__toy__.*", "hooks": [command_hook("record.sh"), command_hook("rewrite.py")]}
            ]
        },
        scripts={"record.sh": RECORD, "rewrite.py": REWRITE.format(update=json.dumps({"text": "rewritten"}))},
    )
    engine = engine_for(project, dry_run=False)
    with MCPManager(
        MCPConfig(servers=[MCPServerConfig(name="toy", command=sys.executable, args=[str(toy), "stdio"])])
    ) as manager:
        assert manager.register_tools(engine.registry) == []
        result = engine.execute_tool_call("mcp_toy_echo", {"text": "hello"})
    assert result.success and result.output.startswith("rewritten")
    (payload,) = seen(project)
    assert payload["tool_name"] == "mcp__toy__echo" and payload["tool_input"] == {"text": "hello"}


# ---------------------------------------------------------------------------------- permission rules


@pytest.fixture
def ruled(tmp_path: Path) -> Path:
    project = claude_workspace(
        tmp_path / "project",
        permissions={
            "deny": [
                "Read(./.env)",
                "Edit(/shop/**)",
                "Bash(curl:*)",
                "Bash(git reset --hard)",
                "LS",
                "Read(//etc/passwd)",
            ],
            "ask": ["Bash(git push:*)", "Write(docs/**)"],
            "allow": ["Bash(rm:*)", "Edit"],
        },
    )
    (project / ".env").write_text("TOKEN=1\n")
    return project


def test_deny_rules_are_guardrails_in_every_mode(ruled: Path) -> None:
    engine = build_engine(claude_config(ruled, use="permissions"), mode="yolo")
    for tool, arguments, why in [
        ("read_file", {"path": ".env"}, "'.env' is a sensitive file"),
        ("run_command", {"command": "cat .env"}, "mentions '.env', a sensitive file"),
        (
            "edit_file",
            {"path": "shop/cart.py", "old_str": "total = 0", "new_str": "total = 1"},
            "protected file",
        ),
        ("run_command", {"command": "curl -s https://example.invalid"}, "deny Bash(curl:*), so this command"),
        ("run_command", {"command": "true && curl x"}, "deny Bash(curl:*)"),
        ("run_command", {"command": "git reset --hard"}, "deny Bash(git reset --hard)"),
        ("list_files", {"path": "shop"}, "deny LS, so list_files may not be called"),
    ]:
        result = engine.execute_tool_call(tool, arguments)
        assert not result.success and result.error is not None and result.error.startswith("Guardrail: "), (
            tool
        )
        assert why in result.error, result.error
    assert "total = 0\n" in (ruled / "shop/cart.py").read_text()
    allowed = engine.execute_tool_call("run_command", {"command": "echo curling"})
    assert allowed.success, allowed.error


def test_ask_rules_ask_a_person_even_in_yolo_and_allow_rules_never_skip_asking(ruled: Path) -> None:
    confirmer = ScriptedConfirmer(["deny: not now", "deny: no", "approve"])
    engine = build_engine(claude_config(ruled, use="permissions"), mode="yolo", confirmer=confirmer)
    pushed = engine.execute_tool_call("run_command", {"command": "git push origin main"})
    assert pushed.outcome is CallOutcome.DENIED and "not now" in (pushed.error or "")
    written = engine.execute_tool_call("write_file", {"path": "docs/notes.md", "content": "x\n"})
    assert written.outcome is CallOutcome.DENIED and not (ruled / "docs").exists()
    asked = [request.reasons for request in confirmer.requests]
    assert asked == [
        ("the workspace's Claude Code settings ask before Bash(git push:*)",),
        ("the workspace's Claude Code settings ask before Write(docs/**)",),
    ]
    strict = build_engine(
        claude_config(ruled, use="permissions"), mode="confirm-sensitive", confirmer=confirmer
    )
    strict.execute_tool_call("run_command", {"command": "rm -f nothing-here"})
    assert len(confirmer.requests) == 3  # `allow Bash(rm:*)` did not skip the question

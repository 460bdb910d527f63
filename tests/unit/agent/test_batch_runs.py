"""Unattended runs: allow rules answer the approvals, a summary is written, a failed run raises."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from architect_nb.agent.batch import UnattendedRunFailed, run_unattended
from architect_nb.execution.confirmation.allow_rules import MAX_RULES, AllowRule, AllowRules, RuleError

SECRET = "sk-proj-" + "Zx81QwErTy7UiOpAsDfGhJkL0123456789abcd"
GREET = """price_as: gpt-4o-mini
turns:
  - tool_calls:
      - name: edit_file
        arguments: {path: greeting.txt, old_str: "hello\\n", new_str: "hello, world\\n"}
  - expect: {tool_result_contains: "hello, world"}
    content: "Greeted the world."
"""


def workspace(tmp_path: Path, script: str = GREET) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "greeting.txt").write_text("hello\n")
    (ws / "run.yaml").write_text(script)
    return ws


# --------------------------------------------------------------------------- the rules


@pytest.mark.parametrize(
    ("rule", "tool", "args", "allowed"),
    [
        ("edit_file", "edit_file", {"path": "anything/at/all.py"}, True),
        ("edit_file", "write_file", {"path": "a.py"}, False),
        ("edit_file(src/**)", "edit_file", {"path": "src/pkg/deep/a.py"}, True),
        ("edit_file(src/*)", "edit_file", {"path": "src/pkg/a.py"}, False),  # * stays in one folder
        ("edit_file(src/*)", "edit_file", {"path": "./src/a.py"}, True),
        ("edit_file(src/**)", "edit_file", {"path": "src/../secrets/key.txt"}, False),  # walked out of src
        ("edit_file(**)", "edit_file", {"path": "../outside.txt"}, False),
        ("edit_file(**)", "edit_file", {"path": "/etc/passwd"}, False),
        ("edit_file(src/**)", "edit_file", {"path": 7}, False),
        ("edit_file(src/**)", "edit_file", {}, False),  # nothing to match the pattern against
        ("move_file(data/*)", "move_file", {"source": "data/a", "destination": "../b"}, False),  # every path
        ("run_command(python -m pytest*)", "run_command", {"command": "python -m pytest -q tests"}, True),
        (
            "run_command(python -m pytest*)",
            "run_command",
            {"command": "pip install x; python -m pytest"},
            False,
        ),
        ("run_command(python -m pytest*)", "run_command", {"command": ["python", "-m", "pytest"]}, False),
        ("run_command(a[b]c)", "run_command", {"command": "a[b]c"}, True),  # brackets are literal
        ("run_command(a[b]c)", "run_command", {"command": "abc"}, False),
    ],
)
def test_a_rule_allows_its_tool_and_pattern_only(
    rule: str, tool: str, args: dict[str, Any], allowed: bool
) -> None:
    assert AllowRule.parse(rule).allows(tool, args) is allowed


@pytest.mark.parametrize(
    "bad", ["", "edit_file(", "(src/**)", "two words", "edit_file(a))x", 42, None, "x" * 5000]
)
def test_an_unreadable_rule_is_refused_with_the_form_to_use(bad: object) -> None:
    with pytest.raises(RuleError, match=r"edit_file\(src/\*\*\)"):
        AllowRule.parse(bad)


def test_too_many_rules_are_refused() -> None:
    with pytest.raises(RuleError, match=f"at most {MAX_RULES}"):
        AllowRules.from_texts(["read_file"] * (MAX_RULES + 1))


# --------------------------------------------------------------------------- whole runs


def test_an_allowed_edit_runs_and_the_summary_says_what_changed(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    out = tmp_path / "out" / "ws.summary.json"
    summary = run_unattended(
        f"Greet the world. (The key {SECRET} is not for you.)",
        workspace=ws,
        model="scripted/run.yaml",
        allow=["edit_file(*.txt)"],
        summary_path=out,
    )
    assert (ws / "greeting.txt").read_text() == "hello, world\n"
    written = json.loads(out.read_text())
    assert written["status"] == summary["status"] == "success"
    assert written["steps"] == 2 and written["files_changed"] == ["greeting.txt"]
    assert written["cost_usd"] > 0 and written["total_tokens"] > 0
    assert [(a["tool"], a["decision"], a["rule"]) for a in written["approvals"]] == [
        ("edit_file", "approve", "edit_file(*.txt)")
    ]
    assert SECRET not in out.read_text() and "Greet the world." in written["task"]
    assert not list(out.parent.glob(".*.tmp"))


def test_a_call_no_rule_allows_is_denied_and_the_failed_run_raises(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    out = tmp_path / "ws.summary.json"
    with pytest.raises(UnattendedRunFailed, match=r"ended failed \(script_error\)") as raised:
        run_unattended(
            "Greet the world.",
            workspace=ws,
            model="scripted/run.yaml",
            allow=["edit_file(src/**)"],
            summary_path=out,
        )
    assert (ws / "greeting.txt").read_text() == "hello\n"
    written = json.loads(out.read_text())
    assert written == raised.value.summary | {"task": written["task"]}
    assert written["status"] == "failed" and written["files_changed"] == []
    assert [(a["tool"], a["decision"]) for a in written["approvals"]] == [("edit_file", "deny")]


def test_the_blocklist_holds_whatever_the_rules_allow(tmp_path: Path) -> None:
    script = """turns:
  - tool_calls: [{name: run_command, arguments: {command: "rm -rf ~"}}]
  - content: "Stopped."
"""
    ws = workspace(tmp_path, script)
    summary = run_unattended("Clean up.", workspace=ws, model="scripted/run.yaml", allow=["run_command(*)"])
    assert summary["status"] == "success" and summary["approvals"] == []  # refused before any question


def test_a_run_that_cannot_start_writes_its_summary_too(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    out = tmp_path / "ws.summary.json"
    with pytest.raises(UnattendedRunFailed, match="could not start"):
        run_unattended(
            "Greet.", workspace=ws, model="scripted/run.yaml", allow=["edit_file("], summary_path=out
        )
    written = json.loads(out.read_text())
    assert (written["status"], written["stop_reason"]) == ("failed", "not_started")
    assert "RuleError" in written["message"]

"""The engine with the real built-in tools, built by `build_engine`: run_command, edits, search, undo."""

from __future__ import annotations

from pathlib import Path

import pytest

from architect_nb.config.schema import AppConfig
from architect_nb.execution.build import build_engine
from architect_nb.execution.confirmation.confirmers import ScriptedConfirmer
from architect_nb.execution.engine import ExecutionEngine
from architect_nb.tools.outcome import CallOutcome
from tests.support.sandbox import require_bwrap


def engine_for(
    workspace: Path, mode: str = "yolo", **sections: object
) -> tuple[ExecutionEngine, ScriptedConfirmer]:
    confirmer = ScriptedConfirmer(default="y")
    config = AppConfig.model_validate(
        {"workspace": {"root": str(workspace), "allow_delete": True}, **sections}
    )
    return build_engine(config, mode=mode, confirmer=confirmer), confirmer


_NO_SANDBOX = {"mode": "off"}


@pytest.mark.parametrize(
    ("command", "mode", "sandbox", "asks"),
    [
        ("ls", "confirm-sensitive", _NO_SANDBOX, False),
        ("ls", "confirm-all", _NO_SANDBOX, True),
        ("python -m pytest --version", "confirm-sensitive", _NO_SANDBOX, True),
        ("python -m pytest --version", "yolo", _NO_SANDBOX, False),
        ("touch made.txt", "confirm-sensitive", _NO_SANDBOX, True),
        # In the OS sandbox without network a dev command runs without asking, unless switched off
        ("python -m pytest --version", "confirm-sensitive", {}, False),
        ("python -m pytest --version", "confirm-sensitive", {"dev_without_asking": False}, True),
        ("python -m pytest --version", "confirm-sensitive", {"network": True}, True),
        ("python -m pytest --version", "confirm-all", {}, True),
        ("touch made.txt", "confirm-sensitive", {}, True),
        ("pytest ../elsewhere", "confirm-sensitive", {}, True),
    ],
)
def test_run_command_confirmation_is_dynamic(
    workspace: Path, command: str, mode: str, sandbox: dict[str, object], asks: bool
) -> None:
    if sandbox.get("mode") != "off":
        require_bwrap()
    engine, confirmer = engine_for(workspace, mode, sandbox=sandbox)
    engine.execute_tool_call("run_command", {"command": command})
    assert bool(confirmer.requests) is asks
    if asks:
        assert confirmer.requests[0].command is not None
        assert confirmer.requests[0].sensitivity == confirmer.requests[0].command.sensitivity


# The document's "sensitivity by default" table, in confirm-sensitive mode.
DOC_TABLE = {
    "read_file": False,
    "list_files": False,
    "search_code": False,
    "grep": False,
    "find_files": False,
    "write_file": True,
    "delete_file": True,
    "edit_file": True,
    "apply_patch": True,
}


def test_built_in_tools_follow_the_documents_table(workspace: Path) -> None:
    engine, _ = engine_for(workspace, "confirm-sensitive")
    for name, asks in DOC_TABLE.items():
        assert engine.policy.should_confirm(engine.registry.get(name)) is asks, name


def test_extra_env_is_never_safe(workspace: Path) -> None:
    engine, confirmer = engine_for(workspace, "confirm-sensitive")
    engine.execute_tool_call("run_command", {"command": "ls", "env": {"LD_PRELOAD": "x.so"}})
    assert confirmer.requests and confirmer.requests[0].sensitivity == "dangerous"


@pytest.mark.parametrize("mode", ["yolo", "confirm-all"])
def test_real_blocklist_refuses_in_every_mode(workspace: Path, mode: str) -> None:
    engine, confirmer = engine_for(workspace, mode)
    result = engine.execute_tool_call("run_command", {"command": "sudo ls"})
    assert not result.success and result.error is not None
    assert result.error.startswith("Guardrail: the command is blocked in every mode")
    assert confirmer.requests == []


def _sensitive_workspace(workspace: Path, **sandbox: object) -> ExecutionEngine:
    (workspace / ".env").write_text("API=hunter2\n")
    (workspace / "app.py").write_text("API = 'public'\n")
    engine, _ = engine_for(workspace, guardrails={"sensitive_files": [".env"]}, sandbox=sandbox)
    return engine


def test_sensitive_files_stay_out_of_reads_searches_and_commands(workspace: Path) -> None:
    engine = _sensitive_workspace(workspace)
    assert not engine.execute_tool_call("read_file", {"path": ".env"}).success
    assert not engine.execute_tool_call("grep", {"pattern": "API", "path": ".env"}).success
    assert not engine.execute_tool_call("run_command", {"command": "cat .env"}).success
    searches = [("grep", {"pattern": "API"}), ("search_code", {"pattern": "API", "file_pattern": "*"})]
    for name, args in searches:
        result = engine.execute_tool_call(name, args)
        # Not asserting success: output is filtered on failure too (it reaches the model either way).
        assert "hunter2" not in result.to_model_text(), name
        assert "app.py" in result.output, name


# A command that reads sensitive files without naming them (grep -r) runs only where the sandbox hides them.
def test_a_command_that_reads_sensitive_files_unnamed_runs_with_them_hidden_in_the_sandbox(
    workspace: Path,
) -> None:
    require_bwrap()
    engine = _sensitive_workspace(workspace)
    result = engine.execute_tool_call("run_command", {"command": "grep -rn API ."})
    assert result.success and result.metadata["sandboxed"] is True, result
    assert "app.py" in result.output and "hunter2" not in result.to_model_text()


@pytest.mark.parametrize("sandbox", [{"program": "/nonexistent/bwrap"}, {"mode": "off"}])
def test_without_the_sandbox_a_command_that_reads_sensitive_files_unnamed_is_refused(
    workspace: Path, sandbox: dict[str, object]
) -> None:
    engine = _sensitive_workspace(workspace, **sandbox)
    result = engine.execute_tool_call("run_command", {"command": "grep -rn API ."})
    assert not result.success and result.outcome is CallOutcome.BLOCKED and result.output == ""
    assert (result.error or "").startswith("Guardrail: The command would read a sensitive file without")
    assert "hunter2" not in result.to_model_text()


def test_reading_a_named_file_is_not_filtered(workspace: Path) -> None:
    (workspace / "notes.txt").write_text(".env:1:looks like grep output\n")
    engine, _ = engine_for(workspace, guardrails={"sensitive_files": [".env"]})
    assert engine.execute_tool_call("read_file", {"path": "notes.txt"}).output == (
        ".env:1:looks like grep output\n"
    )


def test_protected_files_refuse_commands_that_write_them(workspace: Path) -> None:
    (workspace / "data").mkdir()
    engine, _ = engine_for(workspace, guardrails={"protected_files": ["data/*"]})
    result = engine.execute_tool_call("run_command", {"command": "echo x | tee data/out.csv"})
    assert not result.success and "protected file" in (result.error or "")
    assert not (workspace / "data" / "out.csv").exists()


def test_edits_are_previewed_dry_run_and_undone(workspace: Path) -> None:
    target = workspace / "main.py"
    target.write_text("def f():\n    return 1\n")
    config = AppConfig.model_validate({"workspace": {"root": str(workspace)}})
    dry = build_engine(config, mode="yolo", dry_run=True)
    result = dry.execute_tool_call(
        "edit_file", {"path": "main.py", "old_str": "return 1", "new_str": "return 2"}
    )
    assert result.output.startswith("[DRY-RUN] would run edit_file(path='main.py'")
    assert "-    return 1\n+    return 2" in result.output
    assert target.read_text() == "def f():\n    return 1\n"

    engine, confirmer = engine_for(workspace, "confirm-sensitive")
    assert engine.execute_tool_call(
        "edit_file", {"path": "main.py", "old_str": "return 1", "new_str": "return 2"}
    ).success
    assert confirmer.requests[0].preview is not None and "+    return 2" in confirmer.requests[0].preview
    patch = "--- a/main.py\n+++ b/main.py\n@@ -1,2 +1,2 @@\n-def f():\n+def g():\n     return 2\n"
    assert engine.execute_tool_call("apply_patch", {"path": "main.py", "patch": patch}).success, (
        engine.audit.records()[-1]
    )
    assert target.read_text() == "def g():\n    return 2\n"
    assert engine.execute_tool_call("write_file", {"path": "pkg/new.py", "content": "x = 1\n"}).success
    report = engine.checkpoints.undo(engine.run_id)
    assert report.ok
    assert target.read_text() == "def f():\n    return 1\n"
    assert not (workspace / "pkg").exists()


def test_edit_limits_with_real_edits(workspace: Path) -> None:
    (workspace / "a.txt").write_text("".join(f"line {i}\n" for i in range(10)))
    engine, _ = engine_for(workspace, guardrails={"max_lines_changed": 2})
    ok = engine.execute_tool_call("edit_file", {"path": "a.txt", "old_str": "line 1\n", "new_str": "one\n"})
    assert ok.success
    result = engine.execute_tool_call(
        "edit_file", {"path": "a.txt", "old_str": "line 2\n", "new_str": "two\n"}
    )
    assert not result.success and "max_lines_changed" in (result.error or "")

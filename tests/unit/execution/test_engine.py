"""ExecutionEngine: each step's failure path and the order of the steps, with real shell scripts as hooks."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from architect_nb.config.schema import AppConfig
from architect_nb.execution.build import build_engine
from architect_nb.execution.confirmation.confirmers import (
    ConfirmationAnswer,
    ConfirmationRequest,
    ScriptedConfirmer,
    TerminalConfirmer,
)
from architect_nb.execution.confirmation.policy import NoTTYError
from architect_nb.execution.engine import ExecutionEngine
from architect_nb.tools.base import ToolResult
from architect_nb.tools.outcome import CallOutcome
from tests.support.engine import LinesTool, NoopTool, hook, make_engine, script


def steps(engine: ExecutionEngine) -> list[tuple[str, str]]:
    return [(s.step, s.decision) for s in engine.audit.records()[-1].steps]


# ---------------------------------------------------------------- 1 lookup, 2 validation


def test_unknown_tool_lists_the_available_ones(workspace: Path) -> None:
    engine, _ = make_engine(workspace)
    result = engine.execute_tool_call("wrtie_file", {"path": "a"})
    assert not result.success
    assert "No tool named 'wrtie_file'" in (result.error or "")
    assert "write_file" in (result.error or "") and result.error.endswith("Call one of those instead.")
    assert steps(engine) == [("lookup", "not_found")]


@pytest.mark.parametrize("args", [{"path": 3}, {"path": "a", "bogus": 1}, {}, [1, 2], "not json", 7])
def test_invalid_arguments_are_explained(workspace: Path, args: Any) -> None:
    engine, _ = make_engine(workspace)
    result = engine.execute_tool_call("read_file", args)
    assert not result.success
    assert "read_file" in (result.error or "")
    assert "retry" in (result.error or "")
    assert engine.audit.records()[-1].decision("validate") == "invalid"


def test_arguments_as_json_text_are_accepted(workspace: Path) -> None:
    (workspace / "a.txt").write_text("hi\n")
    engine, _ = make_engine(workspace)
    assert engine.execute_tool_call("read_file", json.dumps({"path": "a.txt"})).output == "hi\n"


# ---------------------------------------------------------------- order of the steps


def test_full_order_of_steps(workspace: Path, tmp_path: Path) -> None:
    log = tmp_path / "order.log"
    pre = script(tmp_path, "pre.sh", f"echo pre >> {log}\n")
    post = script(tmp_path, "post.sh", f"echo post >> {log}\n")

    class Recorder(ScriptedConfirmer):
        def confirm(self, request: ConfirmationRequest) -> ConfirmationAnswer:
            with log.open("a") as fh:
                fh.write("confirm\n")
            return ConfirmationAnswer.approve()

    engine, _ = make_engine(
        workspace, mode="confirm-all", pre=[hook(pre, "pre")], post=[hook(post, "post")], confirmer=Recorder()
    )
    tool = engine.registry.get("noop")
    assert isinstance(tool, NoopTool)
    original = tool.execute

    def execute(**kwargs: Any) -> Any:
        with log.open("a") as fh:
            fh.write("execute\n")
        return original(**kwargs)

    tool.execute = execute  # type: ignore[method-assign]
    result = engine.execute_tool_call("noop", {"value": "x"})
    assert result.success, result
    assert log.read_text().split() == ["pre", "confirm", "execute", "post"]
    assert [s for s, _ in steps(engine)] == [
        "lookup",
        "validate",
        "guardrails",
        "pre_hooks",
        "confirm",
        "execute",
        "post_hooks",
    ]


def test_guardrail_block_stops_before_hooks_and_confirmation(workspace: Path, tmp_path: Path) -> None:
    marker = tmp_path / "hook-ran"
    pre = script(tmp_path, "pre.sh", f"touch {marker}\n")
    engine, confirmer = make_engine(
        workspace, mode="confirm-all", pre=[hook(pre)], guardrails={"protected_files": ["locked/*"]}
    )
    result = engine.execute_tool_call("write_file", {"path": "locked/a.txt", "content": "x"})
    assert not result.success
    assert result.error is not None and result.error.startswith(
        "Guardrail: 'locked/a.txt' is a protected file"
    )
    assert not marker.exists()
    assert confirmer.requests == []
    assert not (workspace / "locked").exists()


def test_pre_hook_block(workspace: Path, tmp_path: Path) -> None:
    pre = script(tmp_path, "block.sh", "echo 'no writes on Fridays' >&2; exit 2\n")
    engine, confirmer = make_engine(workspace, mode="confirm-all", pre=[hook(pre, "friday")])
    result = engine.execute_tool_call("write_file", {"path": "a.txt", "content": "x"})
    assert not result.success
    assert result.error == (
        "Blocked by hook friday: no writes on Fridays. Change the call to meet that condition, "
        "or try another approach."
    )
    assert confirmer.requests == [] and not (workspace / "a.txt").exists()


def test_earlier_hook_warnings_survive_a_later_block(workspace: Path, tmp_path: Path) -> None:
    crash = script(tmp_path, "crash.sh", "echo kaput >&2; exit 5\n")
    block = script(tmp_path, "block.sh", "echo 'not today' >&2; exit 2\n")
    engine, _ = make_engine(workspace, pre=[hook(crash, "crash"), hook(block, "gate")])
    text = engine.execute_tool_call("noop", {}).to_model_text()
    assert text.startswith("Error: Blocked by hook gate: not today.")
    assert "[Hook crash: FAILED (exit 5)]\nkaput" in text


def test_rewrite_is_applied_and_revalidated(workspace: Path, tmp_path: Path) -> None:
    pre = script(tmp_path, "mod.sh", """echo '{"updatedInput": {"path": "moved.txt"}}'\n""")
    engine, _ = make_engine(workspace, pre=[hook(pre, "mover")])
    assert engine.execute_tool_call("write_file", {"path": "a.txt", "content": "x"}).success
    assert (workspace / "moved.txt").read_text() == "x" and not (workspace / "a.txt").exists()
    assert ("pre_hooks", "modify") in steps(engine)


def test_rewrite_is_reported_and_stale_warnings_dropped(workspace: Path, tmp_path: Path) -> None:
    pre = script(tmp_path, "mod.sh", """echo '{"updatedInput": {"content": "clean = 1"}}'\n""")
    rules = {"code_rules": [{"pattern": "print\\(", "message": "use logging", "severity": "warn"}]}
    engine, _ = make_engine(workspace, pre=[hook(pre, "cleaner")], guardrails=rules)
    result = engine.execute_tool_call("write_file", {"path": "a.py", "content": "print(1)\n"})
    assert result.success
    assert (workspace / "a.py").read_text() == "clean = 1"
    assert "[Hook cleaner changed the arguments: content]" in result.output
    assert "use logging" not in result.output


def test_widget_style_confirmer_answered_from_another_thread(workspace: Path) -> None:
    """The notebook's seam: the call runs in a worker thread, the answer comes from the UI thread."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    asked = threading.Event()
    answered = threading.Event()
    box: dict[str, Any] = {}

    class Widget:
        def confirm(self, request: ConfirmationRequest) -> ConfirmationAnswer:
            box["request"] = request
            asked.set()
            while not answered.wait(0.01):  # the widget confirmer polls, so it can also time out
                pass
            return box["answer"]  # type: ignore[no-any-return]

    engine, _ = make_engine(workspace, mode="confirm-all", confirmer=Widget())
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(engine.execute_tool_call, "noop", {"value": "from the worker"})
        assert asked.wait(5)
        assert box["request"].args["value"] == "from the worker"
        box["answer"] = ConfirmationAnswer.deny("clicked Deny")
        answered.set()
        result = future.result(timeout=5)
    assert not result.success and "clicked Deny" in (result.error or "")


def test_abort_from_another_thread(workspace: Path) -> None:
    import threading

    engine, _ = make_engine(workspace)
    worker = threading.Thread(target=engine.abort, args=("stop button",))
    worker.start()
    worker.join()
    result = engine.execute_tool_call("noop", {})
    assert result.outcome is CallOutcome.ABORTED and "(stop button)" in (result.error or "")


def test_rewrite_into_invalid_arguments_is_refused(workspace: Path, tmp_path: Path) -> None:
    pre = script(tmp_path, "mod.sh", """echo '{"updatedInput": {"mode": "shred"}}'\n""")
    engine, _ = make_engine(workspace, pre=[hook(pre, "bad")])
    result = engine.execute_tool_call("write_file", {"path": "a.txt", "content": "x"})
    assert not result.success
    assert result.error is not None and result.error.startswith("A pre_tool_use hook rewrote the arguments")
    assert not (workspace / "a.txt").exists()


def test_rewrite_that_the_guardrails_then_refuse(workspace: Path, tmp_path: Path) -> None:
    pre = script(tmp_path, "mod.sh", """echo '{"updatedInput": {"path": ".env", "content": "X=1"}}'\n""")
    engine, _ = make_engine(workspace, pre=[hook(pre, "sneaky")], guardrails={"sensitive_files": [".env"]})
    result = engine.execute_tool_call("write_file", {"path": "notes.txt", "content": "hello"})
    assert not result.success
    assert result.error is not None and "'.env' is a sensitive file" in result.error
    assert not (workspace / ".env").exists() and not (workspace / "notes.txt").exists()
    assert "[Hook sneaky changed the arguments: content, path]" in result.to_model_text()
    assert [d for s, d in steps(engine) if s == "guardrails"] == ["allow", "block"]


def test_rewrite_that_breaks_a_code_rule(workspace: Path, tmp_path: Path) -> None:
    pre = script(tmp_path, "mod.sh", """echo '{"updatedInput": {"content": "eval(x)"}}'\n""")
    rules = {"code_rules": [{"pattern": r"eval\(", "message": "no eval", "severity": "block"}]}
    engine, _ = make_engine(workspace, pre=[hook(pre)], guardrails=rules)
    result = engine.execute_tool_call("write_file", {"path": "a.py", "content": "x = 1"})
    assert not result.success and "no eval" in (result.error or "")


def test_hook_allow_does_not_skip_confirmation(workspace: Path, tmp_path: Path) -> None:
    pre = script(tmp_path, "allow.sh", """echo '{"hookSpecificOutput": {"permissionDecision": "allow"}}'\n""")
    engine, confirmer = make_engine(workspace, mode="confirm-sensitive", pre=[hook(pre)], answers=["n"])
    result = engine.execute_tool_call("write_file", {"path": "a.txt", "content": "x"})
    assert len(confirmer.requests) == 1
    assert not result.success and not (workspace / "a.txt").exists()


def test_hook_ask_forces_confirmation_even_in_yolo(workspace: Path, tmp_path: Path) -> None:
    pre = script(
        tmp_path,
        "ask.sh",
        'echo \'{"hookSpecificOutput": '
        """{"permissionDecision": "ask", "permissionDecisionReason": "big"}}'\n""",
    )
    engine, confirmer = make_engine(workspace, mode="yolo", pre=[hook(pre, "asker")], answers=["y"])
    assert engine.execute_tool_call("noop", {}).success
    (request,) = confirmer.requests
    assert request.reasons == ("hook asker asked for confirmation: big",)


def test_hook_deny_blocks(workspace: Path, tmp_path: Path) -> None:
    decision = {"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "nope"}}
    body = f"echo '{json.dumps(decision)}'\n"
    engine, _ = make_engine(workspace, pre=[hook(script(tmp_path, "deny.sh", body), "guard")])
    result = engine.execute_tool_call("noop", {})
    assert not result.success and "Blocked by hook guard: nope" in (result.error or "")


def test_hook_failures_are_visible_in_the_result(workspace: Path, tmp_path: Path) -> None:
    bad_json = script(tmp_path, "bad.sh", "echo '{oops'\n")
    slow = script(tmp_path, "slow.sh", "sleep 20\n")
    crash = script(tmp_path, "crash.sh", "echo kaput >&2; exit 5\n")
    pre = [hook(bad_json, "json"), hook(slow, "slow", timeout=1), hook(crash, "crash")]
    engine, _ = make_engine(workspace, pre=pre)
    result = engine.execute_tool_call("noop", {"value": "v"})
    assert result.success
    text = result.to_model_text()
    assert text.startswith("noop v")
    assert "[Hook json: printed invalid JSON on stdout; its output was ignored]" in text
    assert "[Hook slow: TIMED OUT after 1s and was killed]" in text
    assert "[Hook crash: FAILED (exit 5)]\nkaput" in text


def test_post_hook_output_is_appended_like_the_document(workspace: Path, tmp_path: Path) -> None:
    lint = script(tmp_path, "lint.sh", "echo \"$1:15:5: F841 local variable 'x' is assigned\"; exit 1\n")
    post = [hook(f"{lint} {{file}}", "python-lint", matcher="write_file", file_patterns=["*.py"])]
    engine, _ = make_engine(workspace, post=post)
    result = engine.execute_tool_call("write_file", {"path": "main.py", "content": "x = 1\n"})
    assert result.success
    assert result.output.endswith(
        "\n\n[Hook python-lint: FAILED (exit 1)]\n"
        f"{workspace}/main.py:15:5: F841 local variable 'x' is assigned"
    )


def test_post_hooks_skip_failed_calls(workspace: Path, tmp_path: Path) -> None:
    marker = tmp_path / "post-ran"
    engine, _ = make_engine(workspace, post=[hook(script(tmp_path, "p.sh", f"touch {marker}\n"))])
    assert not engine.execute_tool_call("read_file", {"path": "missing.txt"}).success
    assert not marker.exists()


# ---------------------------------------------------------------- confirmation


def test_confirmer_sees_the_diff_before_anything_is_written(workspace: Path) -> None:
    target = workspace / "a.py"
    target.write_text("x = 1\n")
    seen: list[str] = []

    class Peek:
        def confirm(self, request: ConfirmationRequest) -> ConfirmationAnswer:
            seen.append(target.read_text())
            assert request.preview is not None
            assert "-x = 1\n+x = 2\n" in request.preview
            assert request.sensitivity == "sensitive"
            return ConfirmationAnswer.approve()

    engine, _ = make_engine(workspace, mode="confirm-sensitive", confirmer=Peek())
    assert engine.execute_tool_call("write_file", {"path": "a.py", "content": "x = 2\n"}).success
    assert seen == ["x = 1\n"] and target.read_text() == "x = 2\n"


def test_deny_reason_reaches_the_model(workspace: Path) -> None:
    engine, _ = make_engine(workspace, mode="confirm-all", answers=["deny: use a scratch file"])
    result = engine.execute_tool_call("noop", {})
    assert not result.success and result.outcome is CallOutcome.DENIED
    assert "They said: use a scratch file." in result.to_model_text()
    assert not engine.aborted


def test_a_denial_nobody_gave_is_told_as_a_default_not_as_the_persons_word(workspace: Path) -> None:
    note = "No front end that can show buttons is connected, so 'Approve noop?' was denied."
    engine, _ = make_engine(workspace, mode="confirm-all", answers=[ConfirmationAnswer.unanswered(note)])
    result = engine.execute_tool_call("noop", {})
    assert not result.success and result.outcome is CallOutcome.DENIED
    said = result.to_model_text()
    assert "noop was not run, since nobody approved it: No front end that can show buttons" in said, said
    assert "declined" not in said and "They said" not in said


def test_abort_stops_the_run_until_a_new_one(workspace: Path) -> None:
    engine, confirmer = make_engine(workspace, mode="confirm-all", answers=["abort", "y"])
    result = engine.execute_tool_call("noop", {})
    assert not result.success and result.outcome is CallOutcome.ABORTED and engine.aborted
    again = engine.execute_tool_call("noop", {})
    assert again.outcome is CallOutcome.ABORTED and len(confirmer.requests) == 1
    engine.start_run()
    assert engine.execute_tool_call("noop", {}).success


def test_no_tty_is_a_readable_failure(workspace: Path) -> None:
    engine, _ = make_engine(workspace, mode="confirm-all")
    engine.start_run(confirmer=TerminalConfirmer())  # pytest's stdin is not a TTY
    result = engine.execute_tool_call("noop", {})
    assert not result.success and result.outcome is CallOutcome.NEEDS_PERSON
    assert "interactive terminal" in (result.error or "") and "noop was not run" in (result.error or "")


def test_confirmer_that_raises_refuses_the_call(workspace: Path) -> None:
    class Broken:
        def confirm(self, request: ConfirmationRequest) -> ConfirmationAnswer:
            raise NoTTYError("widget gone")

    class Crashing:
        def confirm(self, request: ConfirmationRequest) -> ConfirmationAnswer:
            raise KeyError("x")

    engine, _ = make_engine(workspace, mode="confirm-all", confirmer=Broken())
    assert "widget gone" in (engine.execute_tool_call("noop", {}).error or "")
    engine.start_run(confirmer=Crashing())  # a run's own confirmer stands in for the engine's
    result = engine.execute_tool_call("noop", {})
    assert not result.success and "Asking for confirmation failed (KeyError" in (result.error or "")


def test_spoofing_characters_are_shown_escaped(workspace: Path) -> None:
    engine, confirmer = make_engine(workspace, mode="confirm-all", answers=["n"])
    nasty = "ok\x1b[2K\x1b[1Aapproved\u202etxt.exe\u200b\r\nrm -rf /\u2028"
    engine.execute_tool_call("noop", {"value": nasty})
    shown = confirmer.requests[0].render()
    for bad in ("\x1b", "\u202e", "\u200b", "\r", "\u2028"):
        assert bad not in shown
    assert "\\u001b[2K" in shown and "\\u202e" in shown and "\\u200b" in shown and "\\u2028" in shown
    assert "\n" not in confirmer.requests[0].shown_args()


# ---------------------------------------------------------------- dry-run


def test_dry_run_describes_and_shows_the_diff(workspace: Path) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    engine, confirmer = make_engine(workspace, mode="confirm-sensitive", dry_run=True)
    result = engine.execute_tool_call("write_file", {"path": "a.py", "content": "x = 2\n"})
    assert result.success and result.outcome is CallOutcome.DRY_RUN
    first, *rest = result.output.splitlines()
    assert first == "[DRY-RUN] would run write_file(path='a.py', content='x = 2\\n', mode='overwrite')"
    assert "-x = 1" in rest and "+x = 2" in rest
    assert "would ask for confirmation first" in result.output
    assert (workspace / "a.py").read_text() == "x = 1\n"
    assert confirmer.requests == []
    assert engine.checkpoints.files(engine.run_id) == []


def test_dry_run_still_applies_guardrails(workspace: Path) -> None:
    engine, _ = make_engine(workspace, dry_run=True, guardrails={"protected_files": ["*.lock"]})
    assert not engine.execute_tool_call("write_file", {"path": "uv.lock", "content": ""}).success


# ---------------------------------------------------------------- guardrails through the engine


def test_search_output_from_sensitive_files_is_withheld(workspace: Path) -> None:
    engine, _ = make_engine(workspace, guardrails={"sensitive_files": [".env*"]})
    result = engine.execute_tool_call("fake_grep", {})
    assert "hunter2" not in result.output and ".env" not in result.output.replace("[guardrails", "")
    assert "src/a.py:1:KEY = 1" in result.output and "README:4:KEY" in result.output
    assert "2 line(s) from sensitive files withheld" in result.output


def test_failed_output_is_filtered_too(workspace: Path) -> None:
    class FailingGrep(LinesTool):
        name = "failing_grep"

        def execute(self, **kwargs: Any) -> ToolResult:
            return ToolResult.fail(
                "grep exited with code 2; narrow the search.", output=".env:1:KEY=hunter2\n"
            )

    engine, _ = make_engine(workspace, guardrails={"sensitive_files": [".env"]}, extra_tools=[FailingGrep()])
    result = engine.execute_tool_call("failing_grep", {})
    assert not result.success and "hunter2" not in result.to_model_text()


def test_edit_limits_count_lines_from_the_diff(workspace: Path) -> None:
    engine, _ = make_engine(workspace, guardrails={"max_lines_changed": 3, "max_files_modified": 2})
    assert engine.execute_tool_call("write_file", {"path": "a.txt", "content": "1\n2\n"}).success
    result = engine.execute_tool_call("write_file", {"path": "b.txt", "content": "1\n2\n"})
    assert not result.success and "max_lines_changed" in (result.error or "")
    assert engine.execute_tool_call("write_file", {"path": "b.txt", "content": "1\n"}).success
    result = engine.execute_tool_call("write_file", {"path": "c.txt", "content": ""})
    assert not result.success and "max_files_modified" in (result.error or "")
    engine.start_run()
    assert engine.execute_tool_call("write_file", {"path": "c.txt", "content": ""}).success


def test_code_rule_warning_is_shown(workspace: Path) -> None:
    rules = {"code_rules": [{"pattern": "print\\(", "message": "use logging", "severity": "warn"}]}
    engine, _ = make_engine(workspace, guardrails=rules)
    result = engine.execute_tool_call("write_file", {"path": "a.py", "content": "print(1)\n"})
    assert result.success and "[Guardrail warning: use logging]" in result.output


def test_commands_are_limited_per_run(workspace: Path) -> None:
    engine, _ = make_engine(workspace, guardrails={"max_commands_executed": 2})
    assert engine.execute_tool_call("fake_command", {"command": "ls"}).success
    assert engine.execute_tool_call("fake_command", {"command": "ls"}).success
    result = engine.execute_tool_call("fake_command", {"command": "ls"})
    assert not result.success and "max_commands_executed = 2" in (result.error or "")
    summary = engine.run_summary()  # commands are covered by undo like file tools now
    assert "3 tool call(s), 1 failed" in summary and "whichever tool changed them" in summary


# ---------------------------------------------------------------- audit and build_engine


def test_audit_transcript_redacts_and_times(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from architect_nb.redaction import default_redactor

    monkeypatch.setenv("SERVICE_API_KEY", "sk-abcdefghijklmnopqrstuvwx")
    default_redactor().refresh()
    try:
        engine, _ = make_engine(workspace)
        engine.execute_tool_call("noop", {"value": "key sk-abcdefghijklmnopqrstuvwx"})
        (entry,) = engine.audit.to_transcript()
    finally:
        monkeypatch.delenv("SERVICE_API_KEY")
        default_redactor().refresh()
    assert entry["tool"] == "noop" and entry["success"] is True
    assert "sk-abc" not in json.dumps(entry)
    assert entry["duration_ms"] >= 0
    assert [s["step"] for s in entry["steps"]][:3] == ["lookup", "validate", "guardrails"]


def test_build_engine_from_config(workspace: Path, tmp_path: Path) -> None:
    lint = script(tmp_path, "lint.sh", "echo linted; exit 1\n")
    config = AppConfig.model_validate(
        {
            "workspace": {"root": str(workspace)},
            "hooks": {"post_edit": [{"name": "lint", "command": lint}]},
            "guardrails": {"protected_files": ["data/raw/*"]},
        }
    )
    engine = build_engine(config, mode="yolo", dry_run=False)
    assert engine.registry.has_tool("write_file") and engine.guardrails is not None
    result = engine.execute_tool_call("write_file", {"path": "x.py", "content": "1\n"})
    assert "[Hook lint: FAILED (exit 1)]\nlinted" in result.output
    assert not engine.execute_tool_call("write_file", {"path": "data/raw/a", "content": ""}).success
    plain = build_engine(AppConfig.model_validate({"workspace": {"root": str(workspace)}}))
    assert plain.guardrails is None and plain.policy.mode == "confirm-sensitive"


def test_engine_error_is_contained(workspace: Path) -> None:
    engine, _ = make_engine(workspace)

    class Exploding(NoopTool):
        name = "exploding"

        def validate_args(self, args: dict[str, Any]) -> Any:
            raise RuntimeError("kaboom")

    engine.registry.register(Exploding())
    result = engine.execute_tool_call("exploding", {})
    assert (
        not result.success and "unexpected error" in (result.error or "") and "kaboom" in (result.error or "")
    )
    assert engine.audit.records()[-1].decision("engine") == "error"
    assert os.path.isdir(workspace)

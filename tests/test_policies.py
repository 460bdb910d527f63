"""ConfirmationPolicy against the design document's table, the blocklist in every mode, and the confirmers."""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from engine_support import FakeCommandTool, NoopTool, SensitiveNoopTool, make_engine

from architect_nb.execution.confirmation import policy as policies
from architect_nb.execution.confirmation.confirmers import (
    Approval,
    ConfirmationAnswer,
    ConfirmationRequest,
    Confirmer,
    ScriptedConfirmer,
    ScriptExhaustedError,
    TerminalConfirmer,
    show,
    show_block,
)
from architect_nb.execution.confirmation.policy import ConfirmationPolicy, NoTTYError, classify_command_call

# The document's table: run_command classification x mode -> asks?
TABLE = {
    ("safe", "yolo"): False,
    ("safe", "confirm-sensitive"): False,
    ("safe", "confirm-all"): True,
    ("dev", "yolo"): False,
    ("dev", "confirm-sensitive"): True,
    ("dev", "confirm-all"): True,
    ("dangerous", "yolo"): False,
    ("dangerous", "confirm-sensitive"): True,
    ("dangerous", "confirm-all"): True,
}
COMMAND_OF = {"safe": "ls -la", "dev": "pytest -q", "dangerous": "curl example.invalid"}


@pytest.mark.parametrize(("sensitivity", "mode"), list(TABLE))
def test_policy_matches_the_table(sensitivity: str, mode: str) -> None:
    policy = ConfirmationPolicy(mode)
    assert policy.should_confirm_command(sensitivity) is TABLE[sensitivity, mode]
    tool = FakeCommandTool()
    check = classify_command_call(tool, COMMAND_OF[sensitivity])
    assert check is not None and check.sensitivity == sensitivity
    assert policy.should_confirm(tool, check) is TABLE[sensitivity, mode]


@pytest.mark.parametrize(("sensitivity", "mode"), list(TABLE))
def test_engine_follows_the_table(workspace: Path, sensitivity: str, mode: str) -> None:
    engine, confirmer = make_engine(workspace, mode=mode, answers=["y"])
    assert engine.execute_tool_call("fake_command", {"command": COMMAND_OF[sensitivity]}).success
    assert bool(confirmer.requests) is TABLE[sensitivity, mode]
    if confirmer.requests:
        assert confirmer.requests[0].sensitivity == sensitivity
        assert confirmer.requests[0].command is not None


@pytest.mark.parametrize(
    ("tool", "mode", "asks"),
    [
        (NoopTool(), "yolo", False),
        (NoopTool(), "confirm-sensitive", False),
        (NoopTool(), "confirm-all", True),
        (SensitiveNoopTool(), "yolo", False),
        (SensitiveNoopTool(), "confirm-sensitive", True),
        (SensitiveNoopTool(), "confirm-all", True),
    ],
)
def test_static_tools_follow_their_flag(tool: Any, mode: str, asks: bool) -> None:
    assert ConfirmationPolicy(mode).should_confirm(tool) is asks


def test_unknown_mode_is_named() -> None:
    with pytest.raises(ValueError, match="'sometimes'"):
        ConfirmationPolicy("sometimes")


def test_unknown_classification_counts_as_dangerous() -> None:
    class Odd(FakeCommandTool):
        def classify_sensitivity(self, command: str) -> str:
            return "weird"

    check = classify_command_call(Odd(), "x")
    assert check is not None and check.sensitivity == "dangerous"
    assert ConfirmationPolicy("confirm-sensitive").should_confirm(Odd(), check)


class BlockingRunCommand(FakeCommandTool):
    name = "run_command"


@pytest.mark.parametrize("mode", ["yolo", "confirm-sensitive", "confirm-all"])
def test_blocked_commands_are_refused_in_every_mode(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    def classify_command(command: str, config: Any) -> Any:
        blocked = command.startswith("sudo")
        return SimpleNamespace(
            blocked=blocked, reason="sudo is never run" if blocked else "", sensitivity="safe"
        )

    monkeypatch.setattr(policies, "_module_classifier", lambda: classify_command)
    tool = BlockingRunCommand()
    engine, confirmer = make_engine(workspace, mode=mode, answers=["y"], extra_tools=[tool])
    result = engine.execute_tool_call("run_command", {"command": "sudo rm -rf /"})
    assert not result.success
    assert result.error == (
        "Guardrail: the command is blocked in every mode (sudo is never run). "
        "Do not retry it; find a safer way."
    )
    assert confirmer.requests == [] and tool.ran == []
    assert engine.execute_tool_call("run_command", {"command": "ls"}).success


def test_module_classifier_is_used_for_run_command(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []

    def classify_command(command: str, config: Any) -> Any:
        seen.append(config)
        return SimpleNamespace(blocked=False, reason="", sensitivity="dev")

    monkeypatch.setattr(policies, "_module_classifier", lambda: classify_command)
    check = classify_command_call(BlockingRunCommand(), "make")
    assert check is not None and check.sensitivity == "dev" and not check.blocked
    assert seen and seen[0].__class__.__name__ == "CommandsConfig"


# ---------------------------------------------------------------- confirmers


def request(**overrides: Any) -> ConfirmationRequest:
    fields: dict[str, Any] = {"tool_name": "write_file", "args": {"path": "a.py"}, "sensitivity": "sensitive"}
    return ConfirmationRequest(**{**fields, **overrides})


def test_request_is_read_only() -> None:
    args = {"path": "a.py"}
    req = request(args=args)
    args["path"] = "changed"
    assert req.args["path"] == "a.py"
    with pytest.raises(TypeError):
        req.args["path"] = "x"  # type: ignore[index]


@pytest.mark.parametrize(
    ("text", "decision", "reason"),
    [
        ("y", Approval.APPROVE, ""),
        ("YES", Approval.APPROVE, ""),
        ("n", Approval.DENY, ""),
        ("n: wrong file", Approval.DENY, "wrong file"),
        ("a", Approval.ABORT, ""),
        ("abort: enough", Approval.ABORT, "enough"),
    ],
)
def test_answers_parse(text: str, decision: Approval, reason: str) -> None:
    answer = ConfirmationAnswer.parse(text)
    assert (answer.decision, answer.reason) == (decision, reason)


def test_terminal_confirmer_without_tty_raises_no_tty() -> None:
    with pytest.raises(NoTTYError, match="yolo"):
        TerminalConfirmer(stdin=io.StringIO("y\n"), stdout=io.StringIO()).confirm(request())


def test_terminal_confirmer_asks_until_it_understands() -> None:
    answers = iter(["maybe\n", "n: not that file\n"])
    out = io.StringIO()
    answer = TerminalConfirmer(read=lambda: next(answers), stdout=out).confirm(
        request(preview="--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+\x1b[31my\n")
    )
    assert answer == ConfirmationAnswer.deny("not that file")
    text = out.getvalue()
    assert "[y]es / [n]o[: reason] / [a]bort run" in text and "Please answer y, n or a." in text
    assert "+\\x1b[31my" in text and "\x1b" not in text


def test_terminal_confirmer_end_of_input_aborts() -> None:
    answer = TerminalConfirmer(read=lambda: "", stdout=io.StringIO()).confirm(request())
    assert answer.decision is Approval.ABORT


def test_scripted_confirmer_records_and_runs_out() -> None:
    confirmer = ScriptedConfirmer(["y", False])
    assert isinstance(confirmer, Confirmer)
    assert confirmer.confirm(request()).decision is Approval.APPROVE
    assert confirmer.confirm(request()).decision is Approval.DENY
    with pytest.raises(ScriptExhaustedError, match="write_file"):
        confirmer.confirm(request())
    assert len(confirmer.requests) == 3
    assert ScriptedConfirmer(default="a").confirm(request()).decision is Approval.ABORT


def test_show_escapes_everything_that_can_spoof() -> None:
    assert show("a\x1b[31mb") == "a\\x1b[31mb"
    assert show("x\u202ey\u2066z\u200d") == "x\\u202ey\\u2066z\\u200d"
    assert show("line\nnext\r\u2029\x85\x9b") == "line\\x0anext\\x0d\\u2029\\x85\\x9b"
    assert show_block("a\n\tb\x07") == "a\n\tb\\x07"

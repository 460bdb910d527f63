"""ConfirmationPolicy against the design document's table, the blocklist in every mode, and the confirmers."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from architect_nb.config import load_config
from architect_nb.execution.build import build_engine
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
from architect_nb.tools.commands import RunCommandTool
from architect_nb.tools.commands.classifier import CommandVerdict
from architect_nb.tools.commands.command_tool import as_command_tool
from architect_nb.tools.outcome import CallOutcome
from tests.support.engine import FakeCommandTool, NoopTool, SensitiveNoopTool, make_engine

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
        def classify(self, command: str, env: Any = None) -> Any:
            return CommandVerdict(sensitivity="weird")  # type: ignore[arg-type]

    check = classify_command_call(Odd(), "x")
    assert check.sensitivity == "dangerous"
    assert ConfirmationPolicy("confirm-sensitive").should_confirm(Odd(), check)


@pytest.mark.parametrize("mode", ["yolo", "confirm-sensitive", "confirm-all"])
def test_blocked_commands_are_refused_in_every_mode(workspace: Path, mode: str) -> None:
    """The real run_command and its real blocklist, through the engine: refused before anyone is asked."""
    config = load_config(overrides={"workspace.root": str(workspace), "sandbox.mode": "off"}, environ={})
    confirmer = ScriptedConfirmer(default="approve")
    engine = build_engine(config, mode=mode, confirmer=confirmer)
    (workspace / "keep.txt").write_text("kept\n")
    result = engine.execute_tool_call("run_command", {"command": "ls && sudo rm -f keep.txt"})
    assert not result.success and result.outcome is CallOutcome.BLOCKED
    assert (result.error or "").startswith("Guardrail: the command is blocked in every mode (")
    assert "Do not retry it; find a safer way." in (result.error or "")
    assert confirmer.requests == [] and (workspace / "keep.txt").read_text() == "kept\n"
    ran = engine.execute_tool_call("run_command", {"command": "cat keep.txt"})
    assert ran.success and "kept" in ran.output


def test_a_tool_is_a_command_tool_by_what_it_offers_not_by_its_name(workspace: Path) -> None:
    class NamedLikeOne(NoopTool):
        """Called run_command, but offers no classifier: the engine judges it as any other tool."""

        name = "run_command"

    assert as_command_tool(NamedLikeOne()) is None
    assert as_command_tool(FakeCommandTool()) is not None
    assert as_command_tool(RunCommandTool(workspace)) is not None
    engine, confirmer = make_engine(workspace, mode="confirm-sensitive", extra_tools=[NamedLikeOne()])
    assert engine.execute_tool_call("run_command", {"value": "rm -rf /"}).success  # not sensitive: no ask
    assert confirmer.requests == []
    engine, confirmer = make_engine(workspace, mode="confirm-sensitive", answers=["n"])
    refused = engine.execute_tool_call("fake_command", {"command": "curl example.invalid"})
    assert refused.outcome is CallOutcome.DENIED and confirmer.requests[0].command is not None
    assert confirmer.requests[0].command.sensitivity == "dangerous"


def test_the_classifier_sees_the_extra_environment(workspace: Path) -> None:
    tool = RunCommandTool(workspace)
    assert classify_command_call(tool, "ls").sensitivity == "safe"
    assert classify_command_call(tool, "ls", {"LD_PRELOAD": "x.so"}).sensitivity == "dangerous"


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

"""`ConfirmationPolicy`: which tool calls need a person's approval, and `NoTTYError`.

The modes, with `run_command` classified per call as the design document's table says:

| run_command is | yolo | confirm-sensitive        | confirm-all |
|---|---|---|---|
| safe           | no   | no                       | yes         |
| dev            | no   | yes (no when contained)  | yes         |
| dangerous      | no   | yes                      | yes         |

A command is *contained* when it will run in the OS sandbox without network and `sandbox.dev_without_asking`
is on (`RunCommandTool.runs_contained`): a test run or a build then cannot reach the person's keys or send
anything out, so it runs without asking. `dangerous` commands always ask.

Other tools follow their static `sensitive` flag in `confirm-sensitive`. A command the blocklist refuses
(`CommandVerdict.blocked`) is refused in every mode, yolo included; the engine never asks about it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args

from architect_nb.tools.base import BaseTool
from architect_nb.tools.commands.command_tool import CommandTool

__all__ = [
    "MODES",
    "CommandCheck",
    "ConfirmMode",
    "ConfirmationPolicy",
    "NoTTYError",
    "classify_command_call",
]

ConfirmMode = Literal["yolo", "confirm-sensitive", "confirm-all"]
MODES: tuple[str, ...] = get_args(ConfirmMode)
_SENSITIVITIES = frozenset({"safe", "dev", "dangerous"})


class NoTTYError(RuntimeError):
    """A confirmation was needed but there is no interactive terminal to ask on."""

    def __init__(self, message: str | None = None) -> None:
        super().__init__(
            message
            or "Confirmation needs an interactive terminal, and there is none. "
            "In CI or scripts use mode 'yolo' or dry-run, or pass another confirmer."
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandCheck:
    """How a shell command was judged before it runs.

    Attributes:
        command: The command text.
        sensitivity: 'safe', 'dev' or 'dangerous'.
        blocked: The blocklist refuses it in every mode.
        reason: Why it is blocked (or how it was classified).
        contained: It will run in the OS sandbox without network, and the configuration lets that stand in
            for asking about `dev` commands.
        sandboxed: It will run in the OS sandbox, which hides sensitive files and keeps protected ones
            read-only (the guardrails then leave to it what no word of the command names).
    """

    command: str
    sensitivity: str
    blocked: bool = False
    reason: str = ""
    contained: bool = False
    sandboxed: bool = False


def classify_command_call(
    tool: CommandTool, command: str, env: Mapping[str, str] | None = None
) -> CommandCheck:
    """Judge `command` (run with extra `env`) with the tool's own classifier.

    A sensitivity other than safe, dev and dangerous counts as dangerous, so an unknown class is always asked
    about.
    """
    verdict = tool.classify(command, env)
    sensitivity = verdict.sensitivity if verdict.sensitivity in _SENSITIVITIES else "dangerous"
    return CommandCheck(
        command=command,
        sensitivity=sensitivity,
        blocked=verdict.blocked,
        reason=verdict.reason or "",
        contained=tool.runs_contained(),
        sandboxed=tool.runs_sandboxed(),
    )


class ConfirmationPolicy:
    """Decides whether a call needs approval. Pure: it asks nobody (the engine's `Confirmer` does).

    Args:
        mode: 'yolo' (never ask), 'confirm-sensitive' (ask for sensitive tools and non-safe commands)
            or 'confirm-all' (always ask).
    """

    __slots__ = ("mode",)

    def __init__(self, mode: str = "confirm-sensitive") -> None:
        if mode not in MODES:
            raise ValueError(f"Unknown confirmation mode {mode!r}; use one of {', '.join(MODES)}.")
        self.mode = mode

    def should_confirm(self, tool: BaseTool, command: CommandCheck | None = None) -> bool:
        """True if running `tool` (with `command`'s classification, for run_command) needs approval."""
        if self.mode == "yolo":
            return False
        if self.mode == "confirm-all":
            return True
        if command is not None:
            return self.should_confirm_command(command.sensitivity, contained=command.contained)
        return tool.sensitive

    def should_confirm_command(self, sensitivity: str, *, contained: bool = False) -> bool:
        """The document's table for run_command; an unknown class counts as dangerous."""
        if self.mode == "yolo":
            return False
        if self.mode == "confirm-all":
            return True
        return sensitivity not in (("safe", "dev") if contained else ("safe",))

    def __repr__(self) -> str:
        return f"ConfirmationPolicy({self.mode!r})"

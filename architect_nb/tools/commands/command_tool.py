"""`CommandTool`: what a tool that runs shell commands offers the engine, so each command is judged first.

The engine knows a command tool by this protocol, not by its name: it classifies the `command` argument
before confirming (`classify`), lets a contained `dev` command run without asking (`runs_contained`), and
tells the guardrails whether commands run in the OS sandbox (`runs_sandboxed`), which hides sensitive files
and keeps protected ones read-only, so that what no word names cannot reach them.
`RunCommandTool` is the one in the package; an integrator's own shell tool joins the same checks by
implementing these three methods.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, cast, runtime_checkable

from architect_nb.tools.commands.classifier import CommandVerdict

__all__ = ["CommandTool", "as_command_tool"]


@runtime_checkable
class CommandTool(Protocol):
    def classify(self, command: str, env: Mapping[str, str] | None = None) -> CommandVerdict:
        """The verdict on `command`, run with the extra variables `env`. Runs nothing."""
        ...

    def runs_contained(self) -> bool:
        """Whether commands run in the OS sandbox without network, and that may stand in for asking."""
        ...

    def runs_sandboxed(self) -> bool:
        """Whether commands run in the OS sandbox (sensitive files hidden, protected ones read-only)."""
        ...


def as_command_tool(tool: object) -> CommandTool | None:
    """`tool` as a `CommandTool`, or None when its class is not one (decided once per class: an
    `isinstance` check against a protocol costs microseconds, which every call would pay)."""
    cls = type(tool)
    known = _command_tool_classes.get(cls)
    if known is None:
        known = _command_tool_classes[cls] = issubclass(cls, CommandTool)
    return cast(CommandTool, tool) if known else None


_command_tool_classes: dict[type, bool] = {}

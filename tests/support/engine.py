"""Small tools and helpers shared by the execution-engine tests (not a test module itself)."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from architect_nb.config.schema import AppConfig, GuardrailsConfig, HookConfig, HooksConfig
from architect_nb.execution.confirmation.confirmers import Confirmer, ScriptedConfirmer
from architect_nb.execution.confirmation.policy import ConfirmationPolicy
from architect_nb.execution.engine import ExecutionEngine
from architect_nb.execution.guardrails.rails import GuardrailsEngine
from architect_nb.execution.hooks.executor import HookExecutor
from architect_nb.tools.base import BaseTool, ToolResult
from architect_nb.tools.commands.classifier import CommandVerdict
from architect_nb.tools.filesystem.file_tools import DeleteFileTool, ReadFileTool, WriteFileTool
from architect_nb.tools.registry import ToolRegistry
from architect_nb.tools.workspace import ToolArgs


class NoopArgs(ToolArgs):
    value: str = Field("", description="Anything.")


class NoopTool(BaseTool):
    name = "noop"
    description = "Does nothing."
    args_model = NoopArgs

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def execute(self, **kwargs: Any) -> ToolResult:
        self.calls.append(kwargs)
        return ToolResult.ok(f"noop {kwargs.get('value', '')}")


class SensitiveNoopTool(NoopTool):
    name = "sensitive_noop"
    sensitive = True


class CommandArgs(ToolArgs):
    command: str = Field(description="Shell command.")
    cwd: str | None = Field(None, description="Folder.")


class FakeCommandTool(BaseTool):
    """Classifies like run_command (by first word) but only records what it would run."""

    name = "fake_command"
    description = "Pretends to run a command."
    args_model = CommandArgs
    sensitive = True
    SAFE: ClassVar[set[str]] = {"ls", "cat", "echo", "git"}
    DEV: ClassVar[set[str]] = {"pytest", "make", "ruff"}

    def __init__(self) -> None:
        self.ran: list[str] = []

    def classify(self, command: str, env: Mapping[str, str] | None = None) -> CommandVerdict:
        """An integrator's own shell tool: it joins the engine's command checks through `CommandTool`."""
        word = command.split(maxsplit=1)[0] if command.strip() else ""
        if word in self.SAFE and not env:
            return CommandVerdict(sensitivity="safe")
        if word in self.DEV:
            return CommandVerdict(sensitivity="dev", reason="a development tool")
        return CommandVerdict(sensitivity="dangerous", reason="not on the fake's lists")

    def runs_contained(self) -> bool:
        return False

    def runs_sandboxed(self) -> bool:
        return False

    def execute(self, **kwargs: Any) -> ToolResult:
        self.ran.append(kwargs["command"])
        return ToolResult.ok(f"ran {kwargs['command']}")


class LinesTool(BaseTool):
    """Prints search-like output, to test that lines from sensitive files are withheld."""

    name = "fake_grep"
    description = "Returns canned grep output."
    args_model = NoopArgs

    def execute(self, **kwargs: Any) -> ToolResult:
        return ToolResult.ok("src/a.py:1:KEY = 1\n.env:2:KEY=hunter2\nsub/.env-3-context\nREADME:4:KEY\n")


def script(tmp_path: Path, name: str, body: str) -> str:
    """Write an executable shell script and return the command to run it."""
    path = tmp_path / "hooks" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


def hook(command: str, name: str = "", **extra: Any) -> HookConfig:
    return HookConfig.model_validate({"name": name, "command": command, **extra})


def make_engine(
    workspace: Path,
    *,
    mode: str = "yolo",
    answers: list[Any] | None = None,
    pre: list[HookConfig] | None = None,
    post: list[HookConfig] | None = None,
    guardrails: dict[str, Any] | None = None,
    dry_run: bool = False,
    extra_tools: list[BaseTool] | None = None,
    confirmer: Confirmer | None = None,
) -> tuple[ExecutionEngine, ScriptedConfirmer]:
    """An engine on `workspace` with the filesystem tools, test tools and a scripted confirmer (answering
    `answers`), or `confirmer` instead (the scripted one is then returned unused)."""
    root = Path(os.path.realpath(workspace))
    registry = ToolRegistry()
    for tool in (
        ReadFileTool(root),
        WriteFileTool(root),
        DeleteFileTool(root, allow_delete=True),
        NoopTool(),
        SensitiveNoopTool(),
        FakeCommandTool(),
        LinesTool(),
        *(extra_tools or []),
    ):
        registry.register(tool, allow_override=True)
    config = AppConfig.model_validate({"workspace": {"root": str(root)}})
    hooks = HookExecutor(HooksConfig(pre_tool_use=pre or [], post_tool_use=post or []), root)
    rails = GuardrailsEngine(GuardrailsConfig.model_validate(guardrails), root) if guardrails else None
    scripted = ScriptedConfirmer(answers or [])
    engine = ExecutionEngine(
        registry,
        config,
        policy=ConfirmationPolicy(mode),
        dry_run=dry_run,
        hook_executor=hooks,
        guardrails=rails,
        confirmer=confirmer or scripted,
    )
    return engine, scripted


def engine_for(workspace: Path, **overrides: Any) -> ExecutionEngine:
    """A yolo engine built from a config on `workspace` (dotted `overrides`), as the notebook builds one."""
    from architect_nb.config import load_config
    from architect_nb.execution.build import build_engine

    config = load_config(
        overrides={"workspace.root": str(workspace), "commands.default_timeout": 60, **overrides}, environ={}
    )
    return build_engine(config, mode="yolo")


def run_tool(engine: ExecutionEngine, tool: str, step: int = 1, **arguments: Any) -> ToolResult:
    """Run one call through `engine`, failing the test if it did not succeed."""
    result = engine.execute_tool_call(tool, arguments, step=step)
    assert result.success, result.error
    return result

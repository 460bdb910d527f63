"""architect-nb: a tool-calling coding agent for Jupyter notebooks.

`%load_ext architect_nb` gives a notebook the `%architect` magic and `%%architect` cells. The Python API below
them is exported here, and each name loads its module on first use: importing this package loads no tool,
model client or widget library.

- Runs: `create_loop`, `AgentLoop`, `RunResult`; `load_config`, `AppConfig`, `ConfigError`.
- The engine: `build_engine`, `ExecutionEngine`, `ConfirmationPolicy`, `HookExecutor`, `GuardrailsEngine`;
  who is asked: `Confirmer`, `ScriptedConfirmer`, `TerminalConfirmer`.
- Tools: `BaseTool`, `ToolResult`, `ToolArgs`, `WorkspaceTool`, `ToolRegistry`, `MCPToolAdapter`; the
  workspace sandbox: `validate_path`, `PathTraversalError`; the kernel without a notebook: `PlainKernel`.
"""

from __future__ import annotations

from architect_nb._lazy import lazy_exports

TYPE_CHECKING = False  # `typing` costs milliseconds to import; annotations here are only for type checkers
if TYPE_CHECKING:
    from typing import Any

    from architect_nb.agent.factory import create_loop
    from architect_nb.agent.loop import AgentLoop
    from architect_nb.agent.run_result import RunResult
    from architect_nb.config.loader import ConfigError, load_config
    from architect_nb.config.schema import AppConfig
    from architect_nb.execution.build import build_engine
    from architect_nb.execution.confirmation.confirmers import Confirmer, ScriptedConfirmer, TerminalConfirmer
    from architect_nb.execution.confirmation.policy import ConfirmationPolicy
    from architect_nb.execution.engine import ExecutionEngine
    from architect_nb.execution.guardrails.rails import GuardrailsEngine
    from architect_nb.execution.hooks.executor import HookExecutor
    from architect_nb.mcp.adapter import MCPToolAdapter
    from architect_nb.paths.validators import PathTraversalError, validate_path
    from architect_nb.tools.base import BaseTool, ToolResult
    from architect_nb.tools.kernel.session import PlainKernel
    from architect_nb.tools.registry import ToolRegistry
    from architect_nb.tools.workspace import ToolArgs, WorkspaceTool

__version__ = "0.1.0.dev0"

_EXPORTS = {
    "AgentLoop": ".agent.loop",
    "AppConfig": ".config.schema",
    "BaseTool": ".tools.base",
    "ConfigError": ".config.loader",
    "ConfirmationPolicy": ".execution.confirmation.policy",
    "Confirmer": ".execution.confirmation.confirmers",
    "ExecutionEngine": ".execution.engine",
    "GuardrailsEngine": ".execution.guardrails.rails",
    "HookExecutor": ".execution.hooks.executor",
    "MCPToolAdapter": ".mcp.adapter",
    "PathTraversalError": ".paths.validators",
    "PlainKernel": ".tools.kernel.session",
    "RunResult": ".agent.run_result",
    "ScriptedConfirmer": ".execution.confirmation.confirmers",
    "TerminalConfirmer": ".execution.confirmation.confirmers",
    "ToolArgs": ".tools.workspace",
    "ToolRegistry": ".tools.registry",
    "ToolResult": ".tools.base",
    "WorkspaceTool": ".tools.workspace",
    "build_engine": ".execution.build",
    "create_loop": ".agent.factory",
    "load_config": ".config.loader",
    "validate_path": ".paths.validators",
}

__all__ = [
    "AgentLoop",
    "AppConfig",
    "BaseTool",
    "ConfigError",
    "ConfirmationPolicy",
    "Confirmer",
    "ExecutionEngine",
    "GuardrailsEngine",
    "HookExecutor",
    "MCPToolAdapter",
    "PathTraversalError",
    "PlainKernel",
    "RunResult",
    "ScriptedConfirmer",
    "TerminalConfirmer",
    "ToolArgs",
    "ToolRegistry",
    "ToolResult",
    "WorkspaceTool",
    "__version__",
    "build_engine",
    "create_loop",
    "load_config",
    "load_ipython_extension",
    "unload_ipython_extension",
    "validate_path",
]

__getattr__ = lazy_exports(__name__, _EXPORTS)


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext architect_nb`: the `%architect` line magic and `%%architect` cells."""
    from architect_nb.notebook import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from architect_nb.notebook import unload_ipython_extension as unload

    unload(ipython)

"""The `.architect.yaml` schema: one Pydantic model per section, unknown keys refused.

Key names follow the reference implementation so its users' files work unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "AgentSpec",
    "AppConfig",
    "CheckpointsConfig",
    "CodeRuleConfig",
    "CommandsConfig",
    "CostsConfig",
    "GuardrailsConfig",
    "HookConfig",
    "HooksConfig",
    "LLMConfig",
    "LoggingConfig",
    "MCPConfig",
    "MCPServerConfig",
    "NotebookConfig",
    "QualityGateConfig",
    "WorkspaceConfig",
]

ConfirmMode = Literal["yolo", "confirm-sensitive", "confirm-all"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_assignment=True)


class WorkspaceConfig(_Section):
    root: Path = Field(
        Path("."), description="The folder the agent may touch; nothing outside it is reachable."
    )
    allow_delete: bool = Field(False, description="Let delete_file remove files.")


class CommandsConfig(_Section):
    enabled: bool = Field(True, description="Register run_command at all.")
    default_timeout: int = Field(30, ge=1, le=600, description="Seconds before a command is killed.")
    max_output_lines: int = Field(200, ge=10, le=5000, description="Lines kept (head and tail) of output.")
    allowed_only: bool = Field(False, description="Refuse 'dangerous' commands outright instead of asking.")
    blocked_patterns: list[str] = Field(default_factory=list, description="Extra regexes always blocked.")
    safe_commands: list[str] = Field(
        default_factory=list, description="Extra command prefixes treated as safe."
    )
    dev_prefixes: list[str] = Field(
        default_factory=list, description="Extra command prefixes treated as dev."
    )


class HookConfig(_Section):
    name: str = ""
    command: str
    matcher: str = Field("*", description="Regex on the tool name ('*' matches all).")
    file_patterns: list[str] = Field(default_factory=list)
    timeout: int = Field(10, ge=1, le=600)
    async_: bool = Field(False, alias="async")
    enabled: bool = True


class HooksConfig(_Section):
    pre_tool_use: list[HookConfig] = Field(default_factory=list)
    post_tool_use: list[HookConfig] = Field(default_factory=list)
    pre_llm_call: list[HookConfig] = Field(default_factory=list)
    post_llm_call: list[HookConfig] = Field(default_factory=list)
    session_start: list[HookConfig] = Field(default_factory=list)
    session_end: list[HookConfig] = Field(default_factory=list)
    on_error: list[HookConfig] = Field(default_factory=list)
    budget_warning: list[HookConfig] = Field(default_factory=list)
    context_compress: list[HookConfig] = Field(default_factory=list)
    agent_complete: list[HookConfig] = Field(default_factory=list)
    post_edit: list[HookConfig] = Field(
        default_factory=list,
        description="Legacy: mapped to post_tool_use for write_file|edit_file|apply_patch.",
    )


class CodeRuleConfig(_Section):
    pattern: str
    message: str
    severity: Literal["warn", "block"] = "warn"


class QualityGateConfig(_Section):
    name: str
    command: str
    required: bool = True
    timeout: int = Field(60, ge=1, le=600)


class GuardrailsConfig(_Section):
    enabled: bool | None = Field(None, description="Defaults to true as soon as any rule is set.")
    protected_files: list[str] = Field(default_factory=list)
    sensitive_files: list[str] = Field(default_factory=list)
    blocked_commands: list[str] = Field(default_factory=list)
    max_files_modified: int | None = Field(None, ge=0)
    max_lines_changed: int | None = Field(None, ge=0)
    max_commands_executed: int | None = Field(None, ge=0)
    code_rules: list[CodeRuleConfig] = Field(default_factory=list)
    quality_gates: list[QualityGateConfig] = Field(default_factory=list)

    @property
    def active(self) -> bool:
        if self.enabled is not None:
            return self.enabled
        rules = (
            self.protected_files,
            self.sensitive_files,
            self.blocked_commands,
            self.code_rules,
            self.quality_gates,
        )
        limits = (self.max_files_modified, self.max_lines_changed, self.max_commands_executed)
        return any(rules) or any(limit is not None for limit in limits)


class LLMConfig(_Section):
    model: str = Field("gpt-4o-mini", description="Any LiteLLM model string, or scripted/<script.yaml>.")
    api_base: str | None = None
    api_key_env: str | None = Field(None, description="Environment variable holding the API key.")
    timeout: int = Field(60, ge=1)
    retries: int = Field(2, ge=0, le=10)
    stream: bool = True


class AgentSpec(_Section):
    system_prompt: str | None = None
    allowed_tools: list[str] | None = None
    confirm_mode: ConfirmMode | None = None
    max_steps: int | None = Field(None, ge=1, le=1000)


class CostsConfig(_Section):
    budget_usd: float | None = Field(None, ge=0)
    budget_tokens: int | None = Field(None, ge=0)
    warn_at_usd: float | None = Field(None, ge=0)


class MCPServerConfig(_Section):
    name: str
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: str | None = None
    token_env: str | None = None
    timeout: float = Field(60.0, gt=0, le=3600, description="Seconds one tool call may take.")
    startup_timeout: float = Field(
        30.0, gt=0, le=600, description="Seconds to start the server and list its tools."
    )


class MCPConfig(_Section):
    servers: list[MCPServerConfig] = Field(default_factory=list)


class LoggingConfig(_Section):
    level: Literal["debug", "info", "warning", "error"] = "warning"
    file: Path | None = Field(None, description="Where to write JSON logs, one event per line.")

    @field_validator("level", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value


class NotebookConfig(_Section):
    approval_timeout: float = Field(
        300.0, gt=0, description="Seconds before an unanswered approval is denied."
    )


class CheckpointsConfig(_Section):
    persist: bool = Field(
        True,
        description="Also keep each run's checkpoints on disk, for `%architect undo` after a kernel restart.",
    )
    dir: Path | None = Field(
        None,
        description="Where; default the user's state folder (`~/.local/state/architect-nb/checkpoints`).",
    )
    keep_days: float = Field(14.0, gt=0, description="Saved runs older than this are deleted.")


class AppConfig(_Section):
    """The whole configuration. Every section has defaults, so `AppConfig()` is a working setup."""

    workspace: WorkspaceConfig = Field(default_factory=WorkspaceConfig)
    commands: CommandsConfig = Field(default_factory=CommandsConfig)
    hooks: HooksConfig = Field(default_factory=HooksConfig)
    guardrails: GuardrailsConfig = Field(default_factory=GuardrailsConfig)
    llm: LLMConfig = Field(default_factory=LLMConfig)
    agents: dict[str, AgentSpec] = Field(default_factory=dict)
    costs: CostsConfig = Field(default_factory=CostsConfig)
    mcp: MCPConfig = Field(default_factory=MCPConfig)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)
    notebook: NotebookConfig = Field(default_factory=NotebookConfig)
    checkpoints: CheckpointsConfig = Field(default_factory=CheckpointsConfig)

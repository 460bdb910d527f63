"""Configuration: the `.architect.yaml` schema and its loader.

- `schema`: `AppConfig`, one Pydantic model per section; unknown keys refused.
- `loader`: `load_config`, the nearest `.architect.yaml`, then overrides, with errors that name the key.
- `reference`: the configuration reference (docs/configuration.md), written from the schema.
- `teaching_policy`: a course's teaching policy: each level's setting with where it was written (a system
  file, the workspace, the notebook, the session) and the strictest of them, which holds.

Depends on no other package of `architect_nb` (pydantic and yaml only)."""

from architect_nb.config.loader import ConfigError, find_config_file, load_config
from architect_nb.config.schema import (
    AgentSpec,
    AppConfig,
    CheckpointsConfig,
    CodeRuleConfig,
    CommandsConfig,
    CostsConfig,
    GuardrailsConfig,
    HookConfig,
    HooksConfig,
    InstructionsConfig,
    KernelConfig,
    LLMConfig,
    LoggingConfig,
    MCPConfig,
    MCPServerConfig,
    NotebookConfig,
    QualityGateConfig,
    SandboxConfig,
    WorkspaceConfig,
)

__all__ = [
    "AgentSpec",
    "AppConfig",
    "CheckpointsConfig",
    "CodeRuleConfig",
    "CommandsConfig",
    "ConfigError",
    "CostsConfig",
    "GuardrailsConfig",
    "HookConfig",
    "HooksConfig",
    "InstructionsConfig",
    "KernelConfig",
    "LLMConfig",
    "LoggingConfig",
    "MCPConfig",
    "MCPServerConfig",
    "NotebookConfig",
    "QualityGateConfig",
    "SandboxConfig",
    "WorkspaceConfig",
    "find_config_file",
    "load_config",
]

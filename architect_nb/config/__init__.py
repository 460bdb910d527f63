"""Configuration: the `.architect.yaml` schema and its loader."""

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
    LLMConfig,
    LoggingConfig,
    MCPConfig,
    MCPServerConfig,
    NotebookConfig,
    QualityGateConfig,
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
    "LLMConfig",
    "LoggingConfig",
    "MCPConfig",
    "MCPServerConfig",
    "NotebookConfig",
    "QualityGateConfig",
    "WorkspaceConfig",
    "find_config_file",
    "load_config",
]

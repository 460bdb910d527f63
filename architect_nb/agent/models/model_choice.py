"""Which client calls the model a configuration names: the scripted model's, a gateway's, or LiteLLM's."""

from __future__ import annotations

from pathlib import Path

from architect_nb.agent.models.client import LLMClient
from architect_nb.agent.models.gateway import GatewayClient, uses_gateway
from architect_nb.agent.models.llm import SCRIPTED_PREFIX, LiteLLMClient
from architect_nb.agent.models.scripted_client import ScriptedClient
from architect_nb.config.schema import LLMConfig

__all__ = ["model_client"]


def model_client(config: LLMConfig, *, workspace: Path | None = None) -> LLMClient:
    """The client for `config`: a script replayed in this process (`scripted/...`), the gateway's, or
    in-process LiteLLM (the default)."""
    if config.model.startswith(SCRIPTED_PREFIX):
        return ScriptedClient(config, workspace=workspace)
    if uses_gateway(config):
        return GatewayClient(config, workspace=workspace)
    return LiteLLMClient(config, workspace=workspace)

"""The agent loop: `AgentLoop`, `ContextBuilder`, `AgentConfig`, the built-in agents and `create_loop`.

Importing this package does not import LiteLLM; the first model call does.
"""

from architect_nb.agent.config import BUILTIN_AGENTS, AgentConfig, UnknownAgentError, resolve_agent
from architect_nb.agent.context import ContextBuilder
from architect_nb.agent.events import Transcript
from architect_nb.agent.factory import create_loop
from architect_nb.agent.llm import LiteLLMClient, LLMError, LLMResponse, ToolCall, Usage
from architect_nb.agent.loop import AgentLoop, RunResult
from architect_nb.agent.prompts import BUILD_PROMPT

__all__ = [
    "BUILD_PROMPT",
    "BUILTIN_AGENTS",
    "AgentConfig",
    "AgentLoop",
    "ContextBuilder",
    "LLMError",
    "LLMResponse",
    "LiteLLMClient",
    "RunResult",
    "ToolCall",
    "Transcript",
    "UnknownAgentError",
    "Usage",
    "create_loop",
    "resolve_agent",
]

"""The agent loop: `AgentLoop`, `ContextBuilder`, `AgentConfig`, the built-in agents and `create_loop`.

Importing this package does not import LiteLLM; the first model call does. Its modules, by family:

- The run: `loop` (`AgentLoop`, the run's lifecycle), `run_state` (`RunState`, one run as it goes),
  `model_turn` (the model's side of a step), `dispatch` (the tool calls, through the engine), `step_through`
  and `stepping` (`--step`: the collaborator and the pauses), `run_hooks` (hooks and quality gates at the
  run's edges), `run_result` (what a run leaves), `events` (the typed events and the transcript),
  `confirming` (questions as events), `costs` (tokens, dollars, budgets), `factory` (`create_loop`),
  `config` and `prompts` (the agents), `batch` (unattended runs), `console` (a run as terminal text).
- The conversation: `thread` and `thread_store` (runs that follow up across cells, saved on disk),
  `context` (kept within the window), `context_meter` (what fills it), `inspector` (what the model saw),
  `instructions` (AGENTS.md, CLAUDE.md), `skills` (SKILL.md folders).
- The model clients and wire formats: `llm` (`LLMClient`, and LiteLLM's client), `gateway` and
  `gateway_wire` (an OpenAI-compatible gateway without LiteLLM), `model_reply` and `reply_parsing` (an answer,
  read), `text_tool_calls` (calls a local model wrote as text), `provider_extras` (what goes back unchanged),
  `prompt_cache`, `price_list`, `retry_policy`, `model_failures`, `length_cuts`, `offline` (no real call in
  tests), `scripted` and `scripted_provider` (the scripted model).

Depends on `architect_nb.config`, `architect_nb.paths`, the execution pipeline (`execution.engine`,
`execution.build`, `execution.checkpoints`, `execution.confirmation`, `execution.hooks`), `architect_nb.mcp`,
and the tools it names: `tools.base`, `tools.registry`, `tools.commands`, `tools.filesystem`, `tools.kernel`
and `tools.todo`.
"""

from architect_nb.agent.config import BUILTIN_AGENTS, AgentConfig, UnknownAgentError, resolve_agent
from architect_nb.agent.conversation.context import ContextBuilder
from architect_nb.agent.events import Transcript
from architect_nb.agent.factory import create_loop
from architect_nb.agent.loop import AgentLoop, RunResult
from architect_nb.agent.models.llm import LiteLLMClient, LLMError, LLMResponse, ToolCall, Usage
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

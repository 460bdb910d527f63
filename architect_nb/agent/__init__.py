"""The agent loop: `AgentLoop`, `ContextBuilder`, `AgentConfig`, the built-in agents and `create_loop`.

Importing this package does not import LiteLLM; the first model call does. Its modules, by family:

- The run, at the top of the package: `loop` (`AgentLoop`, the run's lifecycle), `run_state` (`RunState`, one
  run as it goes), `model_turn` (the model's side of a step), `dispatch` (the tool calls, through the engine),
  `step_through` and `stepping` (`--step`: the collaborator and the pauses), `run_hooks` (hooks and quality
  gates at the run's edges), `run_result` (what a run leaves), `events` (the typed events and the transcript),
  `confirming` (questions as events), `costs` (tokens, dollars, budgets), `code_hints` (code blocks cut
  under a `hints` teaching policy), `factory` (`create_loop`),
  `config` and `prompts` (the agents), `batch` (unattended runs), `console` (a run as terminal text).
- `conversation`: the conversation a run continues and sends: threads and their store, the context window
  and its meter, the inspector's record, project instructions, skills, and record mode.
- `models`: the model clients and wire formats: LiteLLM's client and an OpenAI-compatible gateway, answers
  read, the provider's extras, prompt caching, prices, retries, failures, token estimates, the offline
  switch and the scripted model.

The families import one way: `models` imports no other part of the agent, `conversation` only `models`,
and the run uses both.

Depends on `architect_nb.config`, `architect_nb.paths`, the execution pipeline (`execution.engine`,
`execution.build`, `execution.checkpoints`, `execution.confirmation`, `execution.hooks`), `architect_nb.mcp`,
and the tools it names: `tools.base`, `tools.registry`, `tools.state_snapshot`, `tools.commands`,
`tools.filesystem`, `tools.kernel` and `tools.todo`.
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

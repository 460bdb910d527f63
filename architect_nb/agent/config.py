"""`AgentConfig` and the built-in agents `build`, `plan` and `review`; custom ones come from the config."""

from __future__ import annotations

from dataclasses import dataclass, replace

from architect_nb.agent.prompts import BUILD_PROMPT, PLAN_PROMPT, REVIEW_PROMPT
from architect_nb.config.schema import AppConfig, ConfirmMode

__all__ = ["BUILTIN_AGENTS", "READ_ONLY_TOOLS", "AgentConfig", "UnknownAgentError", "resolve_agent"]

READ_ONLY_TOOLS = ("read_file", "list_files", "search_code", "grep", "find_files", "read_notebook")


class UnknownAgentError(ValueError):
    """No built-in or configured agent has this name."""


@dataclass(frozen=True, kw_only=True)
class AgentConfig:
    """How one agent behaves. `allowed_tools=None` means every registered tool."""

    name: str
    system_prompt: str
    allowed_tools: tuple[str, ...] | None = None
    confirm_mode: ConfirmMode = "confirm-sensitive"
    max_steps: int = 50


BUILTIN_AGENTS: dict[str, AgentConfig] = {
    "build": AgentConfig(name="build", system_prompt=BUILD_PROMPT, allowed_tools=None, max_steps=50),
    "plan": AgentConfig(name="plan", system_prompt=PLAN_PROMPT, allowed_tools=READ_ONLY_TOOLS, max_steps=20),
    "review": AgentConfig(
        name="review", system_prompt=REVIEW_PROMPT, allowed_tools=READ_ONLY_TOOLS, max_steps=20
    ),
}


def resolve_agent(name: str, config: AppConfig | None = None) -> AgentConfig:
    """The agent called `name`: a configured one (over a built-in of that name, if any) or a built-in."""
    custom = (config.agents if config is not None else {}).get(name)
    base = BUILTIN_AGENTS.get(name)
    if custom is None and base is None:
        known = sorted({*BUILTIN_AGENTS, *(config.agents if config is not None else {})})
        raise UnknownAgentError(f"Unknown agent {name!r}. Available agents: {', '.join(known)}.")
    agent = base or AgentConfig(name=name, system_prompt=BUILD_PROMPT)
    if custom is None:
        return agent
    return replace(
        agent,
        system_prompt=custom.system_prompt if custom.system_prompt is not None else agent.system_prompt,
        allowed_tools=tuple(custom.allowed_tools)
        if custom.allowed_tools is not None
        else agent.allowed_tools,
        confirm_mode=custom.confirm_mode or agent.confirm_mode,
        max_steps=custom.max_steps or agent.max_steps,
    )

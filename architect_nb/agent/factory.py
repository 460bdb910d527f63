"""`create_loop`: an `AgentLoop` from a config in one call, as the notebook and integrators start runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from architect_nb.agent.config import AgentConfig, resolve_agent
from architect_nb.agent.conversation.instructions import ProjectInstructions
from architect_nb.agent.conversation.skills import find_skills, skills_prompt
from architect_nb.agent.events import EventSink
from architect_nb.agent.loop import AgentLoop
from architect_nb.agent.models.client import LLMClient
from architect_nb.agent.models.model_choice import model_client
from architect_nb.agent.prompts import with_read_roots
from architect_nb.agent.stepping import Stepper
from architect_nb.config.schema import AppConfig, ConfirmMode
from architect_nb.config.teaching_policy import TeachingOffError
from architect_nb.execution.build import build_engine
from architect_nb.execution.confirmation.confirmers import Confirmer
from architect_nb.execution.engine import ExecutionEngine
from architect_nb.tools.base import BaseTool
from architect_nb.tools.commands.command_tool import as_command_tool
from architect_nb.tools.commands.sandbox import sandbox_summary, sandbox_unavailable_reason
from architect_nb.tools.filesystem.file_tools import ReadFileTool
from architect_nb.tools.kernel.session import KernelSession

__all__ = ["create_loop"]


def _with_skills(agent: AgentConfig, engine: ExecutionEngine, warnings: list[tuple[str, str]]) -> AgentConfig:
    """The agent's prompt with the skills' names and descriptions, when the agent may read files; read_file
    then reads a skill's files as `skill:NAME/FILE`."""
    allowed = agent.allowed_tools
    if not engine.registry.has_tool("read_file") or (allowed is not None and "read_file" not in allowed):
        return agent
    skills, problems = find_skills(engine.config.workspace.root)
    warnings.extend(("skills", problem) for problem in problems)
    if not skills:
        return agent
    reader = engine.registry.get("read_file")
    if isinstance(reader, ReadFileTool):
        reader.skill_folders = {skill.name: skill.folder for skill in skills}
    return replace(agent, system_prompt=f"{agent.system_prompt}\n\n{skills_prompt(skills)}")


def create_loop(
    config: AppConfig,
    *,
    agent: str = "build",
    model: str | None = None,
    mode: ConfirmMode | None = None,
    dry_run: bool = False,
    confirmer: Confirmer | None = None,
    on_event: EventSink | None = None,
    max_steps: int | None = None,
    budget_usd: float | None = None,
    timeout_s: float | None = None,
    record_to: Path | None = None,
    kernel: KernelSession | None = None,
    stepper: Stepper | None = None,
    tools: Sequence[BaseTool] = (),
    llm: LLMClient | None = None,
) -> AgentLoop:
    """Build the engine (tools, hooks, guardrails) and the model client, and return a ready loop.

    Explicit arguments win over the agent's settings, which win over the config file. `kernel` (a notebook's
    live kernel, or `PlainKernel(namespace)`) gives the agent the kernel tools and runs kernel checks.
    `stepper` pauses the run before each model call and each tool call (`agent.stepping`). `tools` join the
    built-in ones (the ACP agent's kernel tools, run in the notebook kernel it connected). `llm` is the model
    client to use instead of the one `config.llm` (or `model`) names: anything with `LLMClient`'s methods,
    such as `architect_nb.testing.scripted_model(...)` or your own.

    Raises:
        TeachingOffError: The teaching policy (`config.teaching_policy`) turns the agent off.
    """
    agent_config = resolve_agent(agent, config)
    if max_steps is not None:
        agent_config = replace(agent_config, max_steps=max_steps)
    engine = build_engine(
        config,
        mode=mode or agent_config.confirm_mode,
        dry_run=dry_run,
        confirmer=confirmer,
        kernel=kernel,
        tools=tools,
    )
    if engine.teaching.mode == "off":  # before the model client: nothing is imported or called
        raise TeachingOffError(engine.teaching.off_message())
    warnings: list[tuple[str, str]] = []
    agent_config = _with_skills(agent_config, engine, warnings)
    agent_config = replace(
        agent_config, system_prompt=with_read_roots(agent_config.system_prompt, config.workspace.read_roots)
    )
    if llm is None:
        llm_config = config.llm.model_copy(update={"model": model}) if model else config.llm
        llm = model_client(llm_config, workspace=config.workspace.root)
    costs = (
        config.costs.model_copy(update={"budget_usd": budget_usd}) if budget_usd is not None else config.costs
    )
    commands = any(as_command_tool(tool) is not None for tool in engine.registry.list_all())
    if commands and config.sandbox.mode != "off" and sandbox_unavailable_reason(config.sandbox) is not None:
        warnings.append(("sandbox", f"OS sandbox {sandbox_summary(config.sandbox)}"))
    manager = None
    if config.mcp.servers:
        from architect_nb.mcp import MCPManager

        # A server that is down leaves its tools out with a warning; the run goes on without them.
        manager = MCPManager(config.mcp)
        warnings.extend(("mcp", w) for w in manager.register_tools(engine.registry))
    return AgentLoop(
        engine,
        llm,
        agent_config,
        costs=costs,
        on_event=on_event,
        timeout_s=timeout_s,
        record_to=record_to,
        startup_warnings=warnings,
        mcp_manager=manager,
        instructions=ProjectInstructions(config.workspace.root, config.instructions),
        stepper=stepper,
    )

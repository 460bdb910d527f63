"""The providers the model tests run against: each a local server speaking its wire format, and the
configuration a user would write for it (`--model`, `llm.api_base`, a key variable, thinking on).

Every test here goes over HTTP through LiteLLM to 127.0.0.1; nothing is mocked and nothing leaves the
machine. `run_agent` runs the real agent loop (engine, tools, sandboxing as configured) on a copy of the
sample project, as the notebook does through `create_loop`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from architect_nb.agent import AgentLoop, create_loop
from architect_nb.agent.conversation.thread import Thread
from architect_nb.agent.events import AgentEvent
from architect_nb.config import AppConfig, load_config
from architect_nb.testing.anthropic_server import AnthropicStubServer
from architect_nb.testing.gemini_server import GeminiStubServer
from architect_nb.testing.ollama_server import OllamaStubServer
from architect_nb.testing.openai_server import OpenAIStubServer
from architect_nb.testing.stub_server import Reply, StubServer
from tests.support.agent import copy_sample_project

KEY_ENV = "STUB_API_KEY"


@dataclass(frozen=True)
class Provider:
    """One provider as a user configures it, and how its server says it saw the thinking come back.

    Attributes:
        thinking: The `llm` settings that turn thinking on for it.
        shows_thinking: Whether the provider returns the thinking text (OpenAI only counts it).
        checked: The server's count of signed or returned items that came back intact.
    """

    name: str
    model: str
    server: Callable[[], StubServer]
    thinking: dict[str, Any]
    shows_thinking: bool = True
    key_env: str | None = KEY_ENV
    checked: Callable[[Any], int] = field(default=lambda server: 0)

    def __str__(self) -> str:
        return self.name


PROVIDERS = [
    Provider(
        "anthropic",
        "anthropic/claude-sonnet-4-5",
        AnthropicStubServer,
        {"thinking": 2048},
        checked=lambda server: server.thinking_checked,
    ),
    Provider(
        "gemini",
        "gemini/gemini-2.5-flash",
        GeminiStubServer,
        {"reasoning_effort": "low"},
        checked=lambda server: server.signatures_checked,
    ),
    Provider("openai", "openai/o4-mini", OpenAIStubServer, {"reasoning_effort": "low"}, shows_thinking=False),
    Provider(
        "openai-compatible",
        "openai/qwen3-32b",
        lambda: OpenAIStubServer(reasoning_field="reasoning_content", require_reasoning_back=True),
        {"reasoning_effort": "medium"},
        checked=lambda server: server.reasoning_checked,
    ),
    Provider(
        "ollama",
        "ollama_chat/qwen3",
        OllamaStubServer,
        {"reasoning_effort": "medium"},
        key_env=None,
        checked=lambda server: server.thinking_checked,
    ),
]
BY_NAME = {p.name: p for p in PROVIDERS}


def config_for(provider: Provider, server: StubServer, workspace: Path, **llm: Any) -> AppConfig:
    settings: dict[str, Any] = {"model": provider.model, "api_base": server.url, "timeout": 10, **llm}
    if provider.key_env:
        settings["api_key_env"] = provider.key_env
    return load_config(overrides={"workspace.root": str(workspace), "llm": settings}, environ={})


@dataclass
class AgentRun:
    loop: AgentLoop
    events: list[AgentEvent]
    result: Any

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.kind == kind]

    @property
    def thinking(self) -> list[str]:
        return [e["text"] for e in self.loop.transcript.to_list() if e["kind"] == "thinking_delta"]


def run_agent(
    config: AppConfig, task: str, *, thread: Thread | None = None, agent: str = "build"
) -> AgentRun:
    events: list[AgentEvent] = []
    loop = create_loop(config, agent=agent, mode="yolo", on_event=events.append)
    try:
        result = loop.run(task, thread=thread)
    finally:
        loop.close()
    return AgentRun(loop, events, result)


def project(tmp_path: Path) -> Path:
    return copy_sample_project(tmp_path / "project")


THOUGHTS = (
    "The task is about the cart's total; I should read shop/cart.py first.",
    "total starts from the integer 0, so an empty cart totals 0, not 0.0; I will start it from 0.0.",
    "The edit is in; a grep for 'total = ' shows whether another place needs the same change.",
    "Only the one place; I can say what I changed.",
)
EDIT = {"path": "shop/cart.py", "old_str": "        total = 0\n", "new_str": "        total = 0.0\n"}


def three_steps(**reply: Any) -> list[Reply]:
    """A three-step tool run with thinking at each step, and the final answer."""
    return [
        Reply.calls(("read_file", {"path": "shop/cart.py"}), thinking=THOUGHTS[0]).with_(**reply),
        Reply.calls(("edit_file", EDIT), content="Starting the total from 0.0.", thinking=THOUGHTS[1]).with_(
            **reply
        ),
        Reply.calls(("grep", {"pattern": "total = ", "path": "shop"}), thinking=THOUGHTS[2]).with_(**reply),
        Reply.text("Done: Cart.total() now starts from 0.0.", thinking=THOUGHTS[3]).with_(**reply),
    ]

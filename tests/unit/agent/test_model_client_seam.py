"""The model client is a seam: `create_loop(llm=...)` takes any `LLMClient`, the scripted one lives in
`architect_nb.testing`, and the test session makes a real provider call impossible."""

from __future__ import annotations

import socket
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from architect_nb.agent.factory import create_loop
from architect_nb.agent.models.llm import LLMError, LLMResponse
from architect_nb.agent.models.offline import OFFLINE_VARIABLE, offline_refusal
from architect_nb.config import load_config
from architect_nb.testing import scripted_model
from tests.support.agent import copy_sample_project, write_script


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_sample_project(tmp_path / "ws")


def test_a_scripted_client_object_drives_a_run(project: Path) -> None:
    script = write_script(
        project, [{"tool_calls": [{"name": "list_files", "arguments": {}}]}, {"content": "ok"}]
    )
    config = load_config(overrides={"workspace.root": str(project)}, environ={})
    llm = scripted_model(script.removeprefix("scripted/"), workspace=project)
    result = create_loop(config, llm=llm).run("look")
    assert result.stop_reason == "completed" and result.final_text == "ok"


class _Echo:
    """An integrator's own client: not LiteLLM, just the Protocol's methods."""

    model = "echo"

    def __init__(self) -> None:
        self.calls = 0

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        *,
        on_text: Callable[[str], None] | None = None,
        on_thinking: Callable[[str], None] | None = None,
        on_notice: Callable[[str], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        thread_position: tuple[int, int] = (0, 0),
    ) -> LLMResponse:
        self.calls += 1
        return LLMResponse(content=f"heard: {messages[-1]['content']}", tool_calls=[])

    def context_window(self) -> int:
        return 8000

    def supports_images(self) -> bool:
        return False


def test_any_object_with_the_protocols_methods_is_a_model(project: Path) -> None:
    config = load_config(overrides={"workspace.root": str(project)}, environ={})
    echo = _Echo()
    result = create_loop(config, llm=echo).run("hello there")
    assert echo.calls == 1 and result.final_text.endswith("hello there")


def test_the_default_model_cannot_be_called_from_a_test(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default config names a real model; in the test session its call fails, sending nothing: no
    connection is even attempted (a timer said "at once" before, and failed whenever LiteLLM's import, which
    the context meter's counter needs, was not yet paid in the worker)."""
    config = load_config(overrides={"workspace.root": str(project)}, environ={})
    assert config.llm.model == "gpt-4o-mini"
    attempted: list[object] = []

    def connect(self: socket.socket, address: object) -> None:
        attempted.append(address)
        raise OSError("no connection may be made here")

    monkeypatch.setattr(socket.socket, "connect", connect)
    result = create_loop(config).run("anything")
    assert result.status == "failed" and OFFLINE_VARIABLE in result.message, result.message
    assert attempted == []


@pytest.mark.parametrize(
    ("model", "api_base", "allowed"),
    [
        ("scripted/x.yaml", None, True),
        ("gpt-4o-mini", None, False),
        ("anthropic/claude-sonnet-4", "https://api.anthropic.com", False),
        ("openai/m", "http://127.0.0.1:8123/v1", True),
        ("ollama_chat/q", "http://localhost:11434", True),
        ("openai/m", "http://[::1]:9/v1", True),
        ("openai/m", "http://10.0.0.5:8000/v1", False),
        ("openai/m", "http://127.0.0.1.evil.example/v1", False),
    ],
)
def test_offline_lets_out_only_scripted_and_loopback(model: str, api_base: str | None, allowed: bool) -> None:
    assert (offline_refusal(model, api_base) is None) is allowed


def test_the_switch_off_lets_everything_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(OFFLINE_VARIABLE)
    assert offline_refusal("gpt-4o-mini", None) is None
    monkeypatch.setenv(OFFLINE_VARIABLE, "1")
    with pytest.raises(LLMError, match=OFFLINE_VARIABLE):
        from architect_nb.agent.models.llm import LiteLLMClient
        from architect_nb.config.schema import LLMConfig

        LiteLLMClient(LLMConfig(model="gpt-4o-mini")).complete([{"role": "user", "content": "x"}], [])


def test_a_gateway_on_loopback_named_by_its_variable_may_be_called(monkeypatch: pytest.MonkeyPatch) -> None:
    """A hub names the class proxy by LiteLLM's variable, not llm.api_base: its address is what is judged."""
    from architect_nb.agent.models.gateway import GatewayClient
    from architect_nb.config.schema import LLMConfig

    monkeypatch.setenv("LITELLM_PROXY_API_BASE", "http://127.0.0.1:9/v1")
    assert (
        offline_refusal("litellm_proxy/m", GatewayClient(LLMConfig(model="litellm_proxy/m")).endpoint())
        is None
    )
    monkeypatch.setenv("LITELLM_PROXY_API_BASE", "https://proxy.example.org")
    assert offline_refusal("litellm_proxy/m", GatewayClient(LLMConfig(model="litellm_proxy/m")).endpoint())

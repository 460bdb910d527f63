"""`llm.thinking`, `llm.reasoning_effort` and the magic's `--think` reach each provider through LiteLLM."""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

import pytest

from architect_nb.agent import create_loop
from architect_nb.config import load_config
from architect_nb.config.schema import ReasoningEffort
from architect_nb.notebook.magics import EFFORTS, CellArgs, UsageError, parse_cell_line
from architect_nb.notebook.state import Session
from architect_nb.testing.stub_server import Reply
from tests.support.agent import write_script
from tests.support.provider_matrix import BY_NAME, KEY_ENV, project, run_agent


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-stub-0123456789")


def test_the_efforts_the_magic_takes_are_the_configs() -> None:
    assert get_args(ReasoningEffort) == EFFORTS


@pytest.mark.parametrize(
    ("line", "think"),
    [
        ("--think", "medium"),
        ("--think high", "high"),
        ("--think 4096", 4096),
        ("--think --new", "medium"),
        ("", None),
    ],
)
def test_think_parses_an_effort_or_a_budget(line: str, think: str | int | None) -> None:
    assert parse_cell_line(line).think == think


@pytest.mark.parametrize("line", ["--think 100", "--think lots"])
def test_think_refuses_what_no_provider_takes(line: str) -> None:
    with pytest.raises(UsageError, match=r"invalid effort .* or thinking budget"):
        parse_cell_line(line)


def _session(workspace: Path, **overrides: Any) -> Session:
    session = Session()
    session.overrides = {"workspace.root": str(workspace), **overrides}
    return session


@pytest.mark.parametrize(
    ("think", "thinking", "effort"),
    [(4096, 4096, None), ("high", None, "high"), ("none", None, "none"), (None, 2048, "low")],
)
def test_think_sets_the_llm_settings_of_the_cell(
    think: str | int | None, thinking: int | None, effort: str | None, tmp_path: Path
) -> None:
    session = _session(tmp_path, **{"llm.thinking": 2048, "llm.reasoning_effort": "low"})
    config = session.config(CellArgs(think=think))
    assert (config.llm.thinking, config.llm.reasoning_effort) == (thinking, effort)


@pytest.mark.parametrize(
    ("name", "line", "sent"),
    [
        ("anthropic", "--think 4096", {"thinking": {"type": "enabled", "budget_tokens": 4096}}),
        ("anthropic", "--think low", {"thinking": {"type": "enabled", "budget_tokens": 1024}}),
        ("openai", "--think", {"reasoning_effort": "medium"}),
        ("openai-compatible", "--think high", {"reasoning_effort": "high"}),
        ("ollama", "--think", {"think": True}),
    ],
)
def test_a_cell_with_think_asks_the_provider_to_think(
    name: str, line: str, sent: dict[str, Any], tmp_path: Path
) -> None:
    provider = BY_NAME[name]
    with provider.server() as server:
        server.queue(Reply.text("Done.", thinking="Short."))
        args = parse_cell_line(f"--model {provider.model} {line}")
        settings = {"llm.api_base": server.url} | ({"llm.api_key_env": KEY_ENV} if provider.key_env else {})
        config = _session(project(tmp_path), **settings).config(args)
        result = create_loop(config, model=args.model, mode="yolo").run("Say done.")
    assert result.stop_reason == "completed", result.message
    (body,) = [b for b in server.requests if "messages" in b]
    assert {key: body.get(key) for key in sent} == sent


def test_gemini_gets_its_thinking_config(tmp_path: Path) -> None:
    provider = BY_NAME["gemini"]
    with provider.server() as server:
        server.queue(Reply.text("Done.", thinking="Short."))
        config = load_config(
            overrides={
                "workspace.root": str(project(tmp_path)),
                "llm": {
                    "model": provider.model,
                    "api_base": server.url,
                    "api_key_env": KEY_ENV,
                    "thinking": 3000,
                },
            },
            environ={},
        )
        run = run_agent(config, "Say done.")
    assert run.result.stop_reason == "completed", run.result.message
    assert server.requests[0]["generationConfig"]["thinkingConfig"] == {
        "thinkingBudget": 3000,
        "includeThoughts": True,
    }
    assert run.thinking == ["Short."]


def test_a_model_that_does_not_think_says_so(tmp_path: Path) -> None:
    provider = BY_NAME["openai"]
    with provider.server() as server:
        config = load_config(
            overrides={
                "workspace.root": str(project(tmp_path)),
                "llm": {"model": "openai/gpt-4o-mini", "api_base": server.url, "api_key_env": KEY_ENV},
                "llm.reasoning_effort": "high",
            },
            environ={},
        )
        run = run_agent(config, "Say done.")
    assert run.result.stop_reason == "llm_error" and server.requests == []
    assert run.result.message.startswith(
        "The model openai/gpt-4o-mini does not take a setting it was given ("
    )
    assert "Leave out --think (llm.thinking, llm.reasoning_effort) for it" in run.result.message


def test_the_scripted_model_runs_with_thinking_set(tmp_path: Path) -> None:
    """A script answers as written: the thinking settings are not sent to it (LiteLLM would refuse them)."""
    root = project(tmp_path)
    model = write_script(root, [{"content": "Scripted answer."}])
    config = load_config(
        overrides={"workspace.root": str(root), "llm.thinking": 2048, "llm.reasoning_effort": "high"},
        environ={},
    )
    result = create_loop(config, model=model, mode="yolo").run("Say something.")
    assert (result.stop_reason, result.final_text) == ("completed", "Scripted answer."), result.message

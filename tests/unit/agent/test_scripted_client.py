"""The scripted model replays in the caller's process without LiteLLM: a run imports none of it, its text
streams in pieces with the thinking apart, a `price_as` script is priced from the bundled list, and a script
that breaks mid-run ends the run with the script's own sentence."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from architect_nb.agent.models.client import LLMError, RunCancelledError
from architect_nb.agent.models.model_choice import model_client
from architect_nb.agent.models.model_reply import Usage
from architect_nb.agent.models.price_list import model_entry, price
from architect_nb.agent.models.scripted import ScriptError
from architect_nb.agent.models.scripted_client import ScriptedClient
from architect_nb.config.schema import LLMConfig
from tests.support.agent import copy_sample_project, make_loop, write_script

USER = [{"role": "user", "content": "go"}]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_sample_project(tmp_path / "ws")


def _client(path: Path, **config: object) -> ScriptedClient:
    return ScriptedClient(LLMConfig(model=f"scripted/{path}", **config))


def test_a_scripted_run_imports_no_litellm(project: Path) -> None:
    """The point of the client: a demo's or a test kernel's run never pays LiteLLM's import."""
    model = write_script(
        project,
        [{"tool_calls": [{"name": "read_file", "arguments": {"path": "shop/cart.py"}}]}, {"content": "read"}],
        price_as="gpt-4o",
    )
    code = (
        "import json, sys; from pathlib import Path; from tests.support.agent import make_loop; "
        f"r = make_loop(Path({str(project)!r}), {model!r}).run('read it'); "
        "print(json.dumps([r.stop_reason, r.final_text, r.cost_usd > 0, 'litellm' in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=Path(__file__).parents[3],
        env={**os.environ, "ARCHITECT_WARMUP": "0"},
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == ["completed", "read", True, False]


def test_model_choice_gives_a_script_its_own_client(project: Path) -> None:
    model = write_script(project, [{"content": "hi"}])
    made = model_client(LLMConfig(model=model, gateway=True))  # a gateway setting does not take a script away
    assert type(made) is ScriptedClient
    assert made.display_name == model and made.model == f"scripted/{Path(model[9:]).resolve()}"


def test_text_streams_in_pieces_and_thinking_comes_apart(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    words = "A sentence long enough to arrive in several pieces."
    script.write_text(yaml.safe_dump({"turns": [{"thinking": "Say it.", "content": words}]}))
    pieces: list[str] = []
    thoughts: list[str] = []
    reply = _client(script).complete(USER, [], on_text=pieces.append, on_thinking=thoughts.append)
    assert len(pieces) > 3 and "".join(pieces) == words and reply.content == words
    assert thoughts == ["Say it."] and reply.thinking == "Say it."
    whole: list[str] = []
    _client(script, stream=False).complete(USER, [], on_text=whole.append)
    assert whole == [words]  # unstreamed: the answer at once


def test_calls_and_usage_come_back_as_a_model_turn(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    call = {"name": "read_file", "arguments": {"path": "a.txt"}}
    script.write_text(yaml.safe_dump({"turns": [{"tool_calls": [call]}, {"content": "done"}]}))
    reply = _client(script).complete(USER, [{"type": "function", "function": {"name": "read_file"}}])
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("read_file", {"path": "a.txt"})]
    assert reply.finish_reason == "tool_calls"
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0 and not reply.usage.priced


def test_a_price_as_script_is_priced_from_the_bundled_list(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text(yaml.safe_dump({"turns": [{"content": "x" * 400}], "price_as": "gpt-4o"}))
    client = _client(script)
    reply = client.complete(USER, [])
    tokens = Usage(reply.usage.prompt_tokens, reply.usage.completion_tokens)
    expected = price(tokens, model_entry("gpt-4o")).cost_usd
    assert reply.usage.priced and expected > 0 and reply.usage.cost_usd == pytest.approx(expected)
    assert client.context_window() == model_entry("gpt-4o")["max_input_tokens"]  # type: ignore[index]
    assert client.supports_images() is True
    plain = tmp_path / "plain.yaml"
    plain.write_text(yaml.safe_dump({"turns": [{"content": "x"}]}))
    assert _client(plain).context_window() == 128_000 and _client(plain).supports_images() is False


def test_an_edited_script_is_read_again_and_a_removed_one_ends_the_run_in_words(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text(yaml.safe_dump({"turns": [{"content": "first"}]}))
    client = _client(script)
    assert client.complete(USER, []).content == "first"
    script.write_text(yaml.safe_dump({"turns": [{"content": "second, after an edit"}]}))
    os.utime(script, (1, 1))  # a different mtime whatever the clock's resolution
    assert client.complete(USER, []).content == "second, after an edit"
    script.write_text("turns: [unclosed")
    with pytest.raises(LLMError) as broken:
        client.complete(USER, [])
    assert broken.value.kind == "script" and str(broken.value).startswith("Scripted model:")
    script.unlink()
    with pytest.raises(LLMError) as gone:
        client.complete(USER, [])
    assert gone.value.kind == "script" and "cannot read" in str(gone.value)


def test_a_missing_or_malformed_script_is_said_before_the_run(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match="no script file"):
        _client(tmp_path / "nowhere.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"turns": [{"contents": "typo"}]}))
    with pytest.raises(ScriptError, match="not a valid script"):
        _client(bad)


def test_a_run_leaving_its_script_ends_with_the_script_error(project: Path) -> None:
    model = write_script(project, [{"tool_calls": [{"name": "list_files", "arguments": {}}]}])
    result = make_loop(project, model).run("list")
    assert (result.status, result.stop_reason) == ("failed", "script_error")
    assert "has 1 turns, but the conversation asks for turn 2" in result.message, result.message


def test_stopping_while_the_text_streams_cancels(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text(yaml.safe_dump({"turns": [{"content": "y" * 200}]}))
    pieces: list[str] = []
    with pytest.raises(RunCancelledError):
        _client(script).complete(USER, [], on_text=pieces.append, should_stop=lambda: len(pieces) >= 2)
    assert len(pieces) == 2

from __future__ import annotations

from pathlib import Path

import pytest

from architect_nb.agent.models.scripted import (
    Script,
    ScriptDivergenceError,
    ScriptError,
    load_script,
    next_reply,
    resolve_script_path,
    script_from_messages,
)

SCRIPT = Script.model_validate(
    {
        "turns": [
            {"content": "Reading.", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}]},
            {"expect": {"tool_result_contains": "def main"}, "content": "Done."},
        ]
    }
)
USER = {"role": "user", "content": "go"}


def test_turns_follow_the_conversation() -> None:
    first = next_reply(SCRIPT, [USER])
    assert first.content == "Reading." and first.turn_index == 0
    call = first.tool_calls[0]
    assert call["function"] == {"name": "read_file", "arguments": '{"path": "a.py"}'}
    history = [
        USER,
        {"role": "assistant", "content": "Reading.", "tool_calls": first.tool_calls},
        {"role": "tool", "tool_call_id": call["id"], "content": "def main(): pass"},
    ]
    second = next_reply(SCRIPT, history)
    assert second.content == "Done." and second.tool_calls == []
    assert second.prompt_tokens > first.prompt_tokens > 0


def test_expectation_failure_names_turn_and_text() -> None:
    history = [USER, {"role": "assistant", "content": "x"}, {"role": "tool", "content": "nothing here"}]
    with pytest.raises(
        ScriptDivergenceError, match=r"(?s)turn 2 of demo.yaml expects .*'def main'.*nothing here"
    ):
        next_reply(SCRIPT, history, source="demo.yaml")


def test_missing_turn_is_divergence() -> None:
    history = [USER, {"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}]
    with pytest.raises(ScriptDivergenceError, match="has 2 turns, but the conversation asks for turn 3"):
        next_reply(SCRIPT, history)


def test_resolve_relative_to_workspace_then_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "s.yaml").write_text("turns: []\n")
    (tmp_path / "cwd.yaml").write_text("turns: []\n")
    monkeypatch.chdir(tmp_path)
    assert resolve_script_path("s.yaml", ws) == ws / "s.yaml"
    assert resolve_script_path("cwd.yaml", ws) == tmp_path / "cwd.yaml"
    with pytest.raises(ScriptError, match=r"no script file 'nope.yaml'"):
        resolve_script_path("nope.yaml", ws)


def test_malformed_scripts(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("turns:\n  - contnt: typo\n")
    with pytest.raises(ScriptError, match="not a valid script"):
        load_script(bad)
    broken = tmp_path / "broken.yaml"
    broken.write_text("turns: [\n")
    with pytest.raises(ScriptError, match="cannot read"):
        load_script(broken)


def test_record_mode_round_trip() -> None:
    messages = [
        {"role": "system", "content": "s"},
        USER,
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [{"id": "c1", "function": {"name": "grep", "arguments": '{"pattern": "x"}'}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a.py:1: x"},
        {"role": "assistant", "content": "Found it."},
    ]
    script = Script.model_validate(script_from_messages(messages))
    assert script.turns[0].tool_calls[0].arguments == {"pattern": "x"}
    replay = next_reply(script, messages[:2])
    assert replay.content == "Let me look." and replay.tool_calls[0]["function"]["name"] == "grep"

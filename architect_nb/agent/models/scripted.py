"""The scripted model: replays assistant turns from a YAML script, for demos, teaching and tests.

A script is a list of turns. The model answers the conversation's N-th assistant turn with the script's N-th
turn, so a replay needs no hidden state and the same script always drives the same run::

    turns:
      - content: "I'll look at the code first."      # optional assistant text
        tool_calls:                                   # optional
          - name: read_file
            arguments: {path: src/app.py}
      - expect: {tool_result_contains: "def main"}   # optional check on the results the previous turn got
        tool_calls:
          - name: edit_file
            arguments: {path: src/app.py, old_str: "return 1", new_str: "return 2"}
      - thinking: "The edit is in; say what changed."  # optional: shown folded, as a model's thinking
        content: "Done: main() now returns 2."        # a turn without tool calls ends the run

In a thread (follow-up cells), each run's script starts at its own first turn: the turns of the earlier runs
are not counted. `expect: {history_contains: ...}` checks the whole conversation, earlier runs included. A
recording of a thread (`record_to`, written by `agent.conversation.recording`) holds one entry per run under
`runs:`, and the N-th run of a thread replays the N-th entry::

    runs:
      - task: "Make total() return a float."
        turns: [...]
      - task: "Now add a test for it."
        turns: [...]

This module has no LiteLLM import, and neither has `scripted_client`, which replays a script as a model
client.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from architect_nb.agent.models.model_reply import message_text
from architect_nb.agent.models.provider_extras import thinking_text

__all__ = [
    "Script",
    "ScriptDivergenceError",
    "ScriptError",
    "ScriptedCall",
    "ScriptedReply",
    "Turn",
    "load_script",
    "next_reply",
    "resolve_script_path",
    "script_from_messages",
]


class ScriptError(ValueError):
    """The script file cannot be read or is malformed."""


class ScriptDivergenceError(RuntimeError):
    """The conversation no longer follows the script."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScriptedCall(_Strict):
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None


class Expect(_Strict):
    tool_result_contains: list[str] = Field(default_factory=list)
    tool_result_lacks: list[str] = Field(default_factory=list)
    history_contains: list[str] = Field(default_factory=list)
    history_lacks: list[str] = Field(default_factory=list)

    @field_validator(
        "tool_result_contains", "tool_result_lacks", "history_contains", "history_lacks", mode="before"
    )
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value


class Turn(_Strict):
    thinking: str | None = None  # what the model thinks first: shown folded, as a real model's is
    content: str | None = None
    tool_calls: list[ScriptedCall] = Field(default_factory=list)
    expect: Expect | None = None


class ScriptRun(_Strict):
    task: str | None = None  # what the run was asked (for reading; the cell's own task is what is sent)
    turns: list[Turn]


class Script(_Strict):
    turns: list[Turn] = Field(default_factory=list)
    runs: list[ScriptRun] = Field(default_factory=list)
    price_as: str | None = Field(
        None, description="Bill tokens at this LiteLLM model's prices (a notional cost)."
    )

    @model_validator(mode="after")
    def _turns_or_runs(self) -> Script:
        if self.turns and self.runs:
            raise ValueError("a script has either `turns` (one run) or `runs` (a thread's runs), not both")
        return self

    def turns_for(self, run_index: int, source: str) -> list[Turn]:
        """The turns the thread's `run_index`-th run replays (every run replays `turns` in a plain script)."""
        if not self.runs:
            return self.turns
        if run_index >= len(self.runs):
            raise ScriptDivergenceError(
                f"Scripted model: {source} records {len(self.runs)} run(s), but this is run "
                f"{run_index + 1} of the thread; start a new thread (--new) to replay it from the first run."
            )
        return self.runs[run_index].turns


class ScriptedReply(_Strict):
    """What the scripted model says for one turn, with its token usage."""

    content: str | None
    tool_calls: list[dict[str, Any]]
    thinking: str | None = None
    prompt_tokens: int
    completion_tokens: int
    turn_index: int


def resolve_script_path(spec: str, workspace: Path | None = None) -> Path:
    """The script named by `scripted/<spec>`: absolute, else relative to the workspace, else to the cwd."""
    path = Path(spec).expanduser()
    if path.is_absolute():
        candidates = [path]
    else:
        candidates = ([workspace / path] if workspace is not None else []) + [Path.cwd() / path]
    for candidate in candidates:
        if candidate.is_file():
            return candidate.resolve()
    tried = ", ".join(str(c) for c in candidates)
    raise ScriptError(f"Scripted model: no script file '{spec}' (looked in {tried}).")


def load_script(path: Path) -> Script:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ScriptError(f"Scripted model: cannot read {path}: {exc}") from None
    try:
        return Script.model_validate(data)
    except ValidationError as exc:
        raise ScriptError(f"Scripted model: {path} is not a valid script:\n{exc}") from None


_SUMMARY_RE = re.compile(r"^\[Summary of (\d+) earlier steps")


def _assistant_turns(messages: Sequence[Mapping[str, Any]]) -> int:
    """Assistant turns so far, counting those a context summary replaced (see `ContextBuilder.compress`)."""
    turns = 0
    for message in messages:
        if message.get("role") == "assistant":
            turns += 1
        elif message.get("role") == "user" and (m := _SUMMARY_RE.match(str(message.get("content") or ""))):
            turns += int(m.group(1))
    return turns


def _latest_tool_results(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    results: list[str] = []
    for message in reversed(messages):
        if message.get("role") != "tool":
            break
        results.append(str(message.get("content") or ""))
    return results[::-1]


def next_reply(
    script: Script,
    messages: Sequence[Mapping[str, Any]],
    *,
    source: str = "script",
    tools: Sequence[Mapping[str, Any]] = (),
    turns_before: int = 0,
    run_index: int = 0,
) -> ScriptedReply:
    """The script's answer to `messages`. Raises `ScriptDivergenceError` if the run has left the script.

    `turns_before` is how many assistant turns the thread held before this run began, and `run_index` how
    many runs: a follow-up run answers from its own script's first turn.
    """
    turns = script.turns_for(run_index, source)
    index = _assistant_turns(messages) - turns_before
    if index >= len(turns):
        raise ScriptDivergenceError(
            f"Scripted model: {source} has {len(turns)} turns, but the conversation asks for turn "
            f"{index + 1}. The previous turn had tool calls, so the run expected more; "
            "add a final turn without tool_calls to end it."
        )
    if index < 0:
        raise ScriptDivergenceError(f"Scripted model: {source} was asked for a turn before its run began.")
    turn = turns[index]
    if turn.expect is not None:
        _check_expectations(turn.expect, _latest_tool_results(messages), index, source)
        _check_history(turn.expect, messages, index, source)
    calls: list[dict[str, Any]] = [
        {
            "id": call.id or f"call_{index + 1}_{n + 1}",
            "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
        }
        for n, call in enumerate(turn.tool_calls)
    ]
    # About four characters a token, schemas included, as a real model bills them.
    prompt_tokens = max(
        1, (sum(map(_message_chars, messages)) + len(json.dumps(list(tools), default=str))) // 4
    )
    written = len(turn.thinking or "") + len(turn.content or "")
    completion_tokens = max(1, (written + sum(len(str(c["function"]["arguments"])) for c in calls)) // 4)
    return ScriptedReply(
        content=turn.content,
        tool_calls=calls,
        thinking=turn.thinking,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        turn_index=index,
    )


def _message_chars(message: Mapping[str, Any]) -> int:
    """About the length of `message` as JSON, without serialising it: a long run's prompt is measured at
    every turn, and its text is what counts."""
    content = message.get("content")
    chars = 40 + (len(content) if isinstance(content, str) else len(str(content or "")))
    for call in message.get("tool_calls") or ():
        function = call.get("function", {}) if isinstance(call, Mapping) else {}
        chars += 60 + len(str(function.get("name", ""))) + len(str(function.get("arguments", "")))
    return chars


def _check_expectations(expect: Expect, results: list[str], index: int, source: str) -> None:
    joined = "\n".join(results)
    for needle in expect.tool_result_contains:
        if needle not in joined:
            raise ScriptDivergenceError(
                f"Scripted model: turn {index + 1} of {source} expects the tool results "
                f"to contain {needle!r}, "
                f"but they were:\n{joined[:2000] or '(no tool results)'}"
            )
    for needle in expect.tool_result_lacks:
        if needle in joined:
            raise ScriptDivergenceError(
                f"Scripted model: turn {index + 1} of {source} expects the tool results "
                f"not to contain {needle!r}."
            )


def _check_history(expect: Expect, messages: Sequence[Mapping[str, Any]], index: int, source: str) -> None:
    history = "\n".join(message_text(m) for m in messages if m.get("role") != "system")
    for needle in expect.history_contains:
        if needle not in history:
            raise ScriptDivergenceError(
                f"Scripted model: turn {index + 1} of {source} expects the conversation to contain "
                f"{needle!r}, but it does not (is this cell continuing the thread it was written for? "
                "--new starts a fresh one)."
            )
    for needle in expect.history_lacks:
        if needle in history:
            raise ScriptDivergenceError(
                f"Scripted model: turn {index + 1} of {source} expects the conversation not to contain "
                f"{needle!r}."
            )


def script_from_messages(messages: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Record mode: the assistant turns of a real conversation, as a script that replays it."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.get("role") != "assistant":
            continue
        turn: dict[str, Any] = {}
        thought = thinking_text(message)
        if thought:
            turn["thinking"] = thought
        if message.get("content"):
            turn["content"] = message["content"]
        calls = []
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except json.JSONDecodeError:
                arguments = {"_raw": function.get("arguments")}
            calls.append({"name": function.get("name"), "arguments": arguments})
        if calls:
            turn["tool_calls"] = calls
        turns.append(turn)
    return {"turns": turns}

"""Reading Claude Code's project settings: `.claude/settings.json`, then `.claude/settings.local.json`.

Both files of the workspace are read and merged as Claude Code merges them: every hook of both runs, and the
permission rules of both apply. The user's own `~/.claude/settings.json` is not read; a run is about its
workspace. Nothing here raises: a file that cannot be read, or an entry that is not understood, becomes a line
of `problems`, which `%architect status` shows. Whether the hooks run at all is `hooks.claude_settings`.

Claude Code's events, and where each runs here (`CLAUDE_EVENTS`):

| Claude Code's event | runs at | what it can stop | plain text on stdout |
|---|---|---|---|
| `PreToolUse` | `pre_tool_use` | the call | ignored |
| `PostToolUse` | `post_tool_use` | nothing (it is reported) | ignored |
| `SessionStart` | `session_start` | nothing | context for the model |
| `UserPromptSubmit` | `session_start`, after `SessionStart` | the run (the task is not sent) | context |
| `Stop` | `agent_complete`, each time the model says it is done | the stop: the run goes on | ignored |
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from architect_nb.execution.hooks.protocol import HookEvent

__all__ = [
    "CLAUDE_EVENTS",
    "SETTINGS_FILES",
    "ClaudeEvent",
    "ClaudeHook",
    "ClaudeSettings",
    "read_claude_settings",
]

SETTINGS_FILES = (".claude/settings.json", ".claude/settings.local.json")
_MAX_BYTES = 1 << 20  # a settings file is a few kilobytes; a huge one is not read
_DEFAULT_TIMEOUT = 60  # Claude Code's default, in seconds
_MAX_TIMEOUT = 600  # as for every hook here


@dataclass(frozen=True, slots=True)
class ClaudeEvent:
    """One of Claude Code's events as it runs here.

    Attributes:
        name: Claude Code's name (`hook_event_name`).
        event: Our event it runs at.
        can_block: Exit 2 or a JSON block stops what comes next (see the module's table).
        stdout_is_context: Plain text on stdout (exit 0) reaches the model, as in Claude Code.
        matches: What its `matcher` is matched against: the tool's name (in Claude Code's names), the
            session's source (always `startup` here), or nothing (every hook of the event runs).
    """

    name: str
    event: HookEvent
    can_block: bool
    stdout_is_context: bool = False
    matches: str = ""


CLAUDE_EVENTS: dict[str, ClaudeEvent] = {
    "PreToolUse": ClaudeEvent("PreToolUse", HookEvent.PRE_TOOL_USE, True, matches="tool"),
    "PostToolUse": ClaudeEvent("PostToolUse", HookEvent.POST_TOOL_USE, False, matches="tool"),
    "SessionStart": ClaudeEvent("SessionStart", HookEvent.SESSION_START, False, True, matches="source"),
    "UserPromptSubmit": ClaudeEvent("UserPromptSubmit", HookEvent.SESSION_START, True, True),
    "Stop": ClaudeEvent("Stop", HookEvent.AGENT_COMPLETE, True),
}
_ORDER = {name: i for i, name in enumerate(CLAUDE_EVENTS)}


@dataclass(frozen=True, slots=True)
class ClaudeHook:
    """One `type: "command"` hook, with the matcher of its group and the file it came from."""

    event: ClaudeEvent
    matcher: str
    command: str
    timeout: int
    source: str

    def describe(self) -> str:
        on = f" [{self.matcher}]" if self.event.matches and self.matcher not in ("", "*") else ""
        return f"{self.event.name}{on}: {self.command}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaudeSettings:
    """What the workspace's Claude Code settings hold.

    Attributes:
        files: The settings files found (relative to the workspace).
        hooks: The hooks that can run here, SessionStart's before UserPromptSubmit's, each file's in order.
        allow, deny, ask: The permission rules as written (`Bash(npm test:*)`).
        problems: What was not read or cannot run here, one sentence each.
        unreadable: Why a file could not be read at all (also in `problems`); shown when a run starts.
    """

    files: tuple[str, ...] = ()
    hooks: tuple[ClaudeHook, ...] = ()
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    unreadable: tuple[str, ...] = ()

    def status_lines(self, mode: str, not_applied: Sequence[str] = ()) -> list[str]:
        """Lines for `%architect status`: the files, their hooks and whether they run, rules and problems."""
        if not self.files:
            return ["Claude Code settings: none in the workspace (.claude/settings.json)"]
        lines = [f"Claude Code settings: {', '.join(self.files)} (hooks.claude_settings: {mode})"]
        if mode == "off":
            return [*lines, "  not read: set hooks.claude_settings to permissions or all to use them"]
        if self.hooks:
            state = "run" if mode == "all" else "found, not run (hooks.claude_settings: all runs them)"
            lines.append(f"  hooks, {state}:")
            lines += [f"    {hook.describe()}" for hook in self.hooks]
        rules = [f"deny {r}" for r in self.deny] + [f"ask {r}" for r in self.ask]
        if rules:
            lines.append(f"  permission rules: {', '.join(rules)}")
        lines += [f"  not applied: {line}" for line in [*not_applied, *self.problems]]
        return lines


def read_claude_settings(root: Path) -> ClaudeSettings:
    """The settings of the workspace at `root`; empty when it has none. Never raises."""
    files: list[str] = []
    hooks: list[ClaudeHook] = []
    rules: dict[str, list[str]] = {"allow": [], "deny": [], "ask": []}
    problems: list[str] = []
    unreadable: list[str] = []
    for name in SETTINGS_FILES:
        path = root / name
        try:
            if not path.is_file():
                continue
        except OSError:
            continue
        files.append(name)
        data, problem = _load(path, name)
        if data is None:
            problems.append(problem)
            unreadable.append(problem)
            continue
        hooks += _read_hooks(data.get("hooks"), name, problems)
        _read_rules(data.get("permissions"), name, rules, problems)
    hooks.sort(key=lambda hook: _ORDER[hook.event.name])  # stable: each file's order is kept
    return ClaudeSettings(
        files=tuple(files),
        hooks=tuple(hooks),
        allow=tuple(rules["allow"]),
        deny=tuple(rules["deny"]),
        ask=tuple(rules["ask"]),
        problems=tuple(problems),
        unreadable=tuple(unreadable),
    )


def _load(path: Path, name: str) -> tuple[dict[str, Any] | None, str]:
    try:
        with path.open("rb") as fh:
            raw = fh.read(_MAX_BYTES + 1)
    except OSError as exc:
        return None, f"{name} could not be read ({exc.strerror or exc}); it was ignored"
    if len(raw) > _MAX_BYTES:
        return None, f"{name} is larger than {_MAX_BYTES // 1024} KiB; it was ignored"
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return None, f"{name} is not valid JSON ({exc}); it was ignored"
    if not isinstance(data, dict):
        return None, f"{name} holds a JSON {type(data).__name__}, not an object; it was ignored"
    return data, ""


def _read_hooks(section: Any, name: str, problems: list[str]) -> list[ClaudeHook]:
    if section is None:
        return []
    if not isinstance(section, Mapping):
        problems.append(f"{name}: `hooks` is not an object; no hook was read")
        return []
    hooks: list[ClaudeHook] = []
    for event_name, groups in section.items():
        event = CLAUDE_EVENTS.get(str(event_name))
        where = f"{name}: hooks.{event_name}"
        if event is None:
            problems.append(f"{where} (no such event here; see docs/hooks.md)")
            continue
        if not isinstance(groups, list):
            problems.append(f"{where} is not a list")
            continue
        for i, group in enumerate(groups):
            hooks += _read_group(group, event, f"{where}[{i}]", name, problems)
    return hooks


def _read_group(
    group: Any, event: ClaudeEvent, where: str, name: str, problems: list[str]
) -> list[ClaudeHook]:
    if not isinstance(group, Mapping) or not isinstance(group.get("hooks"), list):
        problems.append(f"{where} has no `hooks` list")
        return []
    matcher = group.get("matcher", "") if event.matches else ""
    if not isinstance(matcher, str):
        problems.append(f"{where}: `matcher` is not a string")
        return []
    try:
        re.compile("" if matcher == "*" else matcher)  # "*" matches every tool, as in Claude Code
    except re.error as exc:
        problems.append(f"{where}: `matcher` {matcher!r} is not a valid regex ({exc})")
        return []
    found = []
    for j, entry in enumerate(group["hooks"]):
        kind = entry.get("type") if isinstance(entry, Mapping) else None
        command = entry.get("command") if isinstance(entry, Mapping) else None
        if kind != "command":
            problems.append(f"{where}.hooks[{j}] has type {kind!r}; only `command` hooks run here")
            continue
        if not isinstance(command, str) or not command.strip():
            problems.append(f"{where}.hooks[{j}] has no command")
            continue
        found.append(ClaudeHook(event, matcher, command, _timeout(entry.get("timeout")), name))
    return found


def _timeout(value: Any) -> int:
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return min(_MAX_TIMEOUT, max(1, round(value)))
    return _DEFAULT_TIMEOUT


def _read_rules(section: Any, name: str, rules: dict[str, list[str]], problems: list[str]) -> None:
    if section is None:
        return
    if not isinstance(section, Mapping):
        problems.append(f"{name}: `permissions` is not an object; no rule was read")
        return
    for key in section:
        if key not in rules:
            problems.append(f"{name}: permissions.{key} (only allow, deny and ask are read)")
    for kind, found in rules.items():
        entries = section.get(kind, [])
        if not isinstance(entries, list):
            problems.append(f"{name}: permissions.{kind} is not a list")
            continue
        for entry in entries:
            if isinstance(entry, str) and entry.strip():
                found.append(entry.strip())
            else:
                problems.append(f"{name}: permissions.{kind} holds {entry!r}, not a rule")

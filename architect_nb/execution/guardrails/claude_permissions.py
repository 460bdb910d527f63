"""Claude Code's permission rules (`permissions.deny/ask/allow` of `.claude/settings.json`), applied here.

A rule is `Tool` or `Tool(specifier)`, in Claude Code's tool names (`execution.hooks.claude_shape`):

| rule | here |
|---|---|
| deny `Read(path)` | `guardrails.sensitive_files`: no tool reads or changes it, no command names it |
| deny `Edit(path)`, `Write(path)`, `MultiEdit(path)`, `NotebookEdit(path)` | `guardrails.protected_files` |
| deny `Bash(command)`, `Bash(prefix:*)` | such commands are refused, in every mode |
| deny a whole tool: `Bash`, `Read`, `Edit`, `mcp__server`, `mcp__server__tool` | its calls are refused |
| ask, in the same forms | a person is asked before such a call, in every mode |
| allow | never applied: a file from the repository cannot lower the confirmation you chose |

`Read` rules cover every reading tool (`Read`, `Grep`, `Glob`, `LS`) and `Edit` rules every editing one, as in
Claude Code. Paths are gitignore-like and relative to the workspace (`./x`, `x` and `/x` alike); a path
outside the workspace (`//abs`, `~/x`) and other tools' specifiers (`WebFetch(domain:...)`) are not applied,
and say so in `not_applied`. A command rule matches at the start of the command or of any part of it after
`;`, `&&`, `||`, `|` or `(`: for a refusal, matching too much is the safe mistake.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from architect_nb.config.schema import GuardrailsConfig
from architect_nb.execution.hooks.claude_settings import ClaudeSettings, read_claude_settings
from architect_nb.execution.hooks.claude_shape import ClaudeCall, claude_call
from architect_nb.paths.globs import PathGlobs

__all__ = ["ClaudePermissions", "claude_status"]

_RULE = re.compile(r"^(?P<tool>[A-Za-z0-9_*.-]+)(?:\((?P<spec>.*)\))?$", re.S)
_READERS = frozenset({"Read", "Grep", "Glob", "LS"})
_EDITORS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit", "delete_file"})
_FAMILIES = {"Read": _READERS, "Edit": _EDITORS, "Write": _EDITORS, "MultiEdit": _EDITORS}
_COMMAND_START = r"(?:^|[;&|({`]|\$\()\s*"


@dataclass(frozen=True, slots=True)
class _Rule:
    text: str
    tool: str
    globs: PathGlobs | None = None  # a path rule
    command: re.Pattern[str] | None = None  # a Bash rule

    def names(self, tool_name: str) -> bool:
        """The rule's tool is `tool_name` (or its family, or an MCP server or wildcard that covers it)."""
        if tool_name == self.tool or tool_name in _FAMILIES.get(self.tool, ()):
            return True
        if self.tool.startswith("mcp__"):
            if self.tool.endswith("__*"):
                return tool_name.startswith(self.tool[:-1])
            return self.tool.count("__") == 1 and tool_name.startswith(self.tool + "__")
        return False


class ClaudePermissions:
    """The deny and ask rules of `settings` that map, as guardrails and confirmation reasons.

    Args:
        settings: What the workspace's Claude Code settings hold.
        root: The workspace (paths in rules and calls are judged relative to it).
    """

    def __init__(self, settings: ClaudeSettings, root: Path) -> None:
        self.root = Path(os.path.realpath(root))
        self.sensitive_files: list[str] = []
        self.protected_files: list[str] = []
        self._deny: list[_Rule] = []  # whole tools and commands
        self._ask: list[_Rule] = []
        self.not_applied: list[str] = [
            f"allow {rule} (allow rules never lower the confirmation)" for rule in settings.allow
        ]
        for text in settings.deny:
            rule = self._parse(text, "deny")
            if rule is None:
                continue
            if rule.globs is None:
                self._deny.append(rule)
            else:
                target = self.sensitive_files if rule.tool == "Read" else self.protected_files
                target.extend(rule.globs.patterns)
        for text in settings.ask:
            rule = self._parse(text, "ask")
            if rule is not None:
                self._ask.append(rule)

    @property
    def active(self) -> bool:
        return bool(self.sensitive_files or self.protected_files or self._deny or self._ask)

    def guardrails(self, base: GuardrailsConfig) -> GuardrailsConfig:
        """`base` with the path deny rules added."""
        if not (self.sensitive_files or self.protected_files):
            return base
        return base.model_copy(
            update={
                "sensitive_files": [*base.sensitive_files, *self.sensitive_files],
                "protected_files": [*base.protected_files, *self.protected_files],
            }
        )

    def refusal(self, tool: Any, arguments: Mapping[str, Any]) -> str | None:
        """Why a deny rule on the whole tool, or on this command, refuses this call; or None."""
        if not self._deny:
            return None
        call = claude_call(tool, arguments, self.root)
        for rule in self._deny:
            if not (rule.names(call.tool_name) and self._covers(rule, call)):
                continue
            if rule.command is not None:
                return (
                    f"the workspace's Claude Code settings deny {rule.text}, so this command is never run "
                    "here. Find another way, or ask the user to run it."
                )
            return (
                f"the workspace's Claude Code settings deny {rule.text}, so {getattr(tool, 'name', tool)} "
                "may not be called here. Use another tool, or ask the user."
            )
        return None

    def ask_reason(self, tool: Any, arguments: Mapping[str, Any]) -> str | None:
        """Why an ask rule wants a person to confirm this call, or None."""
        if not self._ask:
            return None
        call = claude_call(tool, arguments, self.root)
        for rule in self._ask:
            if rule.names(call.tool_name) and self._covers(rule, call):
                return f"the workspace's Claude Code settings ask before {rule.text}"
        return None

    # ------------------------------------------------------------------ reading rules

    def _parse(self, text: str, kind: str) -> _Rule | None:
        match = _RULE.match(text)
        if match is None:
            self.not_applied.append(f"{kind} {text} (not a rule: write Tool or Tool(specifier))")
            return None
        tool, spec = match.group("tool"), match.group("spec")
        if spec is None or spec.strip() in ("", "*"):
            return _Rule(text, tool)
        if tool == "Bash":
            return _Rule(text, tool, command=re.compile(_command_regex(spec.strip())))
        if tool in _FAMILIES or tool == "NotebookEdit":
            globs = _workspace_globs(spec.strip(), self.root)
            if not globs:
                self.not_applied.append(f"{kind} {text} (outside the workspace, which no tool reaches)")
                return None
            return _Rule(text, tool, globs=PathGlobs(globs))
        self.not_applied.append(f"{kind} {text} (no such specifier here)")
        return None

    def _covers(self, rule: _Rule, call: ClaudeCall) -> bool:
        if rule.command is not None:
            command = call.tool_input.get("command")
            is_command = call.tool_name == "Bash" and isinstance(command, str)
            return is_command and bool(rule.command.search(str(command)))
        if rule.globs is not None:
            path = next(
                (call.tool_input[k] for k in ("file_path", "notebook_path", "path") if k in call.tool_input),
                None,
            )
            if not isinstance(path, str):
                return False
            relative = os.path.relpath(os.path.join(self.root, path), self.root)
            return rule.globs.match(Path(relative).as_posix()) is not None
        return True


def claude_status(root: Path, mode: str) -> list[str]:
    """`%architect status` lines: the workspace's Claude Code settings, whether and how they are used."""
    settings = read_claude_settings(root)
    return settings.status_lines(mode, ClaudePermissions(settings, root).not_applied)


def _command_regex(spec: str) -> str:
    """`Bash(npm test)` matches that command; `Bash(npm test:*)` and `Bash(npm *)` what starts with it."""
    prefix = spec.endswith(":*")
    body = re.escape(spec[:-2] if prefix else spec).replace(r"\*", ".*")
    return _COMMAND_START + body + ("" if prefix else r"\s*(?:$|[;&|)}`])")


def _workspace_globs(spec: str, root: Path) -> list[str]:
    """A rule's path as globs relative to the workspace (`PathGlobs`); none when it lies outside."""
    if spec.startswith(("//", "~/")):
        absolute = "/" + spec[2:] if spec.startswith("//") else os.path.expanduser(spec)
        relative = os.path.relpath(os.path.normpath(absolute), root)
        if relative == ".." or relative.startswith("../"):
            return []
        spec = relative
    glob = spec.lstrip("/").removeprefix("./")
    if not glob.startswith("**/"):
        return [glob or "*"]
    while glob.startswith("**/"):
        glob = glob[3:]
    # A name matches at any depth already; a path below `**/` is tried at the top and below it (a `*` of
    # PathGlobs crosses folders).
    return [glob, f"*/{glob}"] if "/" in glob else [glob]

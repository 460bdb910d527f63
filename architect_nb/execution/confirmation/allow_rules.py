"""Answering approvals in an unattended run (papermill, `jupyter execute`, CI) from rules written beforehand.

Nobody is there to click, so each call the mode would ask about is approved only when a rule allows it, and
denied otherwise, with the reason the model is told. A rule is a tool's name, alone or with a pattern in
parentheses, as in Claude Code's permission rules:

- `edit_file`: every edit the engine would ask about;
- `edit_file(src/**)`: edits of files matching the glob (`*` stays inside one folder, `**` crosses them);
- `run_command(python -m pytest*)`: commands matching the pattern (the whole command string).

A rule decides only what is asked: a blocked command, a protected file, a path outside the workspace are
refused before any question, so no rule can allow them; `yolo` asks nothing, so rules change nothing there.
"""

from __future__ import annotations

import posixpath
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from architect_nb.execution.confirmation.confirmers import ConfirmationAnswer, ConfirmationRequest, show

__all__ = ["AllowRule", "AllowRules", "RuleError"]

_RULE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.\-]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)
_PATH_ARGS = ("path", "notebook_path", "source", "destination", "target")
MAX_RULES = 200


class RuleError(ValueError):
    """An allow rule that cannot be read; the message quotes it and shows the form."""


@dataclass(frozen=True)
class AllowRule:
    """One rule: the tool it names and, if any, the pattern its command or path must match."""

    tool: str
    pattern: str | None = None

    @classmethod
    def parse(cls, text: object) -> AllowRule:
        if not isinstance(text, str) or len(text) > 1000:
            raise RuleError(
                f"An allow rule must be text such as 'edit_file(src/**)', not {show(repr(text))[:80]}."
            )
        found = _RULE.match(text)
        if found is None:
            raise RuleError(
                f"Cannot read the allow rule {show(text)!r}: write a tool name, optionally with a pattern, "
                "such as 'edit_file', 'edit_file(src/**)' or 'run_command(python -m pytest*)'."
            )
        pattern = found.group(2)
        return cls(found.group(1), pattern.strip() if pattern is not None and pattern.strip() else None)

    def allows(self, tool: str, args: Mapping[str, Any]) -> bool:
        if tool != self.tool:
            return False
        if self.pattern is None:
            return True
        if tool == "run_command":
            return _matches(self.pattern, args.get("command"), crossing=True)
        paths = [_normal(args[key]) for key in _PATH_ARGS if key in args]
        return bool(paths) and all(_matches(self.pattern, value, crossing=False) for value in paths)

    def __str__(self) -> str:
        return self.tool if self.pattern is None else f"{self.tool}({self.pattern})"


def _normal(path: object) -> object:
    """A path as the workspace sees it (`./a/../b` is `b`), so a pattern cannot be walked around."""
    if not isinstance(path, str):
        return path
    normal = posixpath.normpath(path.replace("\\", "/"))
    return None if normal.startswith(("..", "/")) else normal


def _matches(pattern: str, value: object, *, crossing: bool) -> bool:
    """Whether `value` (a string) matches the glob `pattern`; in paths `*` stops at `/` and `**` does not."""
    if not isinstance(value, str):
        return False
    regex = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            regex, i = regex + ".*", i + 2
        elif pattern[i] == "*":
            regex, i = regex + (".*" if crossing else "[^/]*"), i + 1
        elif pattern[i] == "?":
            regex, i = regex + (".?" if crossing else "[^/]"), i + 1
        else:
            regex, i = regex + re.escape(pattern[i]), i + 1
    return re.fullmatch(regex, value, re.DOTALL) is not None


@dataclass
class AllowRules:
    """A `Confirmer` that approves what a rule allows and denies the rest; `asked` records every answer."""

    rules: list[AllowRule]
    asked: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def from_texts(cls, texts: Iterable[object] | None) -> AllowRules:
        rules = [AllowRule.parse(text) for text in (texts or ())]
        if len(rules) > MAX_RULES:
            raise RuleError(f"{len(rules)} allow rules; at most {MAX_RULES} are read.")
        return cls(rules)

    def confirm(self, request: ConfirmationRequest) -> ConfirmationAnswer:
        rule = next((r for r in self.rules if r.allows(request.tool_name, request.args)), None)
        with self._lock:
            self.asked.append(
                {
                    "tool": request.tool_name,
                    "arguments": request.shown_args(300),
                    "decision": "approve" if rule else "deny",
                    "rule": str(rule) if rule else None,
                }
            )
        if rule is not None:
            return ConfirmationAnswer.approve()
        allowed = ", ".join(str(r) for r in self.rules) or "none"
        return ConfirmationAnswer.unanswered(
            f"This is an unattended run and no allow rule covers this call (rules: {allowed}). "
            "Do without it, or finish and say what you would have done."
        )

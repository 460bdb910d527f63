"""A run's events as ACP session updates: text and thinking chunks, tool calls, their results and diffs.

Everything sent is redacted and made visible (`show`), as the notebook shows it: what an editor displays
comes from the same events, so a secret a tool read never reaches the chat. A diff goes as ACP diff
content, one entry per hunk (the hunk's old and new lines), so editors render it as a diff; the unified
text goes too, for clients that show only text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from acp import (
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
)
from acp.schema import ToolCallLocation, ToolKind

from architect_nb.agent.events import (
    AgentEvent,
    RunFinished,
    RunWarning,
    TextDelta,
    ThinkingDelta,
    ToolCallRequested,
    ToolResultEvent,
)
from architect_nb.execution.confirmation.confirmers import show, show_block
from architect_nb.redaction import default_redactor

__all__ = ["diff_contents", "event_updates", "tool_kind", "tool_title"]

_KINDS: dict[str, ToolKind] = {
    "read_file": "read",
    "list_files": "read",
    "read_notebook": "read",
    "list_variables": "read",
    "inspect_variable": "read",
    "search_code": "search",
    "grep": "search",
    "find_files": "search",
    "edit_file": "edit",
    "write_file": "edit",
    "apply_patch": "edit",
    "edit_notebook_cell": "edit",
    "insert_notebook_cell": "edit",
    "propose_cell": "edit",
    "delete_file": "delete",
    "delete_notebook_cell": "delete",
    "run_command": "execute",
    "run_python": "execute",
    "run_cell": "execute",
}
_TITLE_ARGS = ("command", "path", "pattern", "query", "file", "notebook")
_MAX_OUTPUT = 4000
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")


def tool_kind(tool: str) -> ToolKind:
    return _KINDS.get(tool, "other")


def shown_input(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments as an editor is shown them, redacted. Code for the kernel is given as `command`
    too: Jupyter AI shows an execute call's `command` and nothing else, and nobody approves unseen code."""
    shown: dict[str, Any] = default_redactor().redact_data(dict(arguments))
    code = shown.get("code")
    if tool_kind(tool) == "execute" and isinstance(code, str) and "command" not in shown:
        shown["command"] = code
    return shown


def tool_title(tool: str, arguments: dict[str, Any]) -> str:
    """`run_command: pytest -q`, `edit_file: shop/cart.py`: the tool and what it works on, on one line."""
    for key in _TITLE_ARGS:
        value = arguments.get(key)
        if isinstance(value, str) and value:
            shown = show(default_redactor().redact(value))
            return f"{tool}: {shown[:120]}{'…' if len(shown) > 120 else ''}"
    return show(tool)


def _locations(arguments: dict[str, Any], workspace: str) -> list[ToolCallLocation] | None:
    path = arguments.get("path")
    if not isinstance(path, str) or not path:
        return None
    absolute = path if path.startswith("/") else f"{workspace.rstrip('/')}/{path}"
    return [ToolCallLocation(path=absolute)]


def diff_contents(diff: str, workspace: str) -> list[Any]:
    """ACP diff content for a unified diff: one entry per hunk, with the hunk's old and new lines."""
    contents: list[Any] = []
    path = ""
    old: list[str] | None = None
    new: list[str] = []
    created = False

    def flush() -> None:
        if old is not None and path:
            contents.append(tool_diff_content(path, "\n".join(new), None if created else "\n".join(old)))

    for line in diff.splitlines():
        if line.startswith("--- "):
            flush()
            old = None
            created = line[4:].strip() == "/dev/null"
        elif line.startswith("+++ "):
            name = line[4:].strip().split("\t")[0]
            name = name[2:] if name.startswith(("a/", "b/")) else name
            path = name if name.startswith("/") else f"{workspace.rstrip('/')}/{name}"
        elif _HUNK.match(line):
            flush()
            old, new = [], []
        elif old is not None:
            if line.startswith("-"):
                old.append(line[1:])
            elif line.startswith("+"):
                new.append(line[1:])
            elif line.startswith(" ") or line == "":
                old.append(line[1:])
                new.append(line[1:])
    flush()
    return contents


def _clip(text: str) -> str:
    if len(text) <= _MAX_OUTPUT:
        return text
    return text[:_MAX_OUTPUT] + f"\n… [{len(text) - _MAX_OUTPUT} more characters]"


def event_updates(event: AgentEvent, workspace: str) -> list[Any]:
    """The ACP session updates that show `event` (none for events an editor has no place for)."""
    redact = default_redactor().redact
    if isinstance(event, TextDelta):
        return [update_agent_message_text(redact(event.text))]
    if isinstance(event, ThinkingDelta):
        return [update_agent_thought_text(redact(event.text))]
    if isinstance(event, ToolCallRequested):
        return [
            start_tool_call(
                event.call_id,
                tool_title(event.tool, event.arguments),
                kind=tool_kind(event.tool),
                status="pending",
                locations=_locations(event.arguments, workspace),
                raw_input=shown_input(event.tool, event.arguments),
            )
        ]
    if isinstance(event, ToolResultEvent):
        return [_result_update(event, workspace)]
    if isinstance(event, RunWarning):
        return [update_agent_message_text(f"\n\n> ⚠ {show(redact(event.message))}\n\n")]
    if isinstance(event, RunFinished):
        return [update_agent_message_text(_ending(event))] if _ending(event) else []
    return []


def _result_update(event: ToolResultEvent, workspace: str) -> Any:
    redact = default_redactor().redact
    text = event.output if event.success else f"{event.error or ''}\n{event.output}".strip()
    diff = redact(event.diff) if event.diff and event.success else None
    if diff and diff.rstrip("\n") in text:  # shown as the diff below, not twice
        text = text.replace(diff.rstrip("\n"), "").strip()
    content: list[Any] = []
    if text:
        content.append(tool_content(text_block(_clip(show_block(redact(text))))))
    if diff:
        content += diff_contents(diff, workspace)
    raw: dict[str, Any] = {"status": event.status, "changed_files": list(event.changed_files)}
    if event.sandboxed is not None:
        raw["sandboxed"] = event.sandboxed
    return update_tool_call(
        event.call_id,
        status="completed" if event.success else "failed",
        content=content or None,
        raw_output=json.loads(json.dumps(raw)),
    )


def _ending(event: RunFinished) -> str:
    """What the chat is told when a run ends: why it stopped (unless it just finished), what changed."""
    redact = default_redactor().redact
    parts: list[str] = []
    if event.stop_reason not in ("completed", "interrupted"):
        parts.append(f"The run stopped ({event.stop_reason}): {show(redact(event.message))}")
    if event.files_changed:
        files = ", ".join(show(f) for f in event.files_changed)
        parts.append(f"Files changed: {files}. `/undo` puts them back.")
    if event.undo_note:
        parts.append(show(redact(event.undo_note)))
    return ("\n\n" + "\n\n".join(parts)) if parts else ""

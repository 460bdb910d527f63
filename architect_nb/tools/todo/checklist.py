"""`todo`: the short checklist the model keeps while it works, shown live above the run's steps.

The model sends the whole list each time, each item a line beginning with its mark: `[ ]` pending, `[~]` in
progress, `[x]` done. Markdown's checkboxes, so a model writes them without being taught, and the schema is
one list of strings (a list of objects with an enum costs three times the tokens on every turn). The list
lives in the run's thread (`Thread.todo`): a follow-up sees it and carries it on.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from architect_nb.tools.base import BaseTool, ToolResult

__all__ = [
    "MAX_ITEMS",
    "MAX_ITEM_CHARS",
    "PLAN_MARK",
    "TODO_MARK",
    "TodoArgs",
    "TodoItem",
    "TodoTool",
    "checklist",
    "done_text",
    "parse_items",
    "todo_in_messages",
]

MAX_ITEMS = 30
MAX_ITEM_CHARS = 200
TodoStatus = Literal["pending", "in_progress", "done"]
MARKS: dict[str, TodoStatus] = {"[ ]": "pending", "[~]": "in_progress", "[x]": "done", "[X]": "done"}
TodoItem = tuple[TodoStatus, str]
#: A build run's task holds the approved plan after `PLAN_MARK`, and its steps after `TODO_MARK`: the list
#: that run starts from, until the model's first todo call.
PLAN_MARK = "\n\n[Approved plan]\n"
TODO_MARK = "\n\n[Todo]\n"


class TodoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    items: list[str] = Field(description="Every item, as '[ ] to do', '[~] doing' or '[x] done'.")


def parse_items(items: object) -> list[TodoItem]:
    """The (status, text) of each line. Raises `ValueError` with what to fix."""
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise ValueError("items must be a list of strings")
    if len(items) > MAX_ITEMS:
        raise ValueError(f"the list has {len(items)} items; keep it to {MAX_ITEMS} at most")
    parsed: list[TodoItem] = []
    for number, item in enumerate(items, 1):
        line = item.strip()
        status = MARKS.get(line[:3])
        text = " ".join(line[3:].split())
        if status is None:
            raise ValueError(f"item {number} ({line[:40]!r}) must begin with '[ ]', '[~]' or '[x]'")
        if not text:
            raise ValueError(f"item {number} has a mark but no text")
        if len(text) > MAX_ITEM_CHARS:
            raise ValueError(f"item {number} is {len(text)} characters long; keep it under {MAX_ITEM_CHARS}")
        parsed.append((status, text))
    return parsed


def done_text(items: Sequence[tuple[str, str]]) -> str:
    """ "2 of 5 done"."""
    return f"{sum(1 for status, _ in items if status == 'done')} of {len(items)} done"


_SHOWN_MARK = {"pending": "[ ]", "in_progress": "[~]", "done": "[x]"}


def checklist(items: Sequence[tuple[str, str]]) -> str:
    """The items as '[x] text' lines."""
    return "\n".join(f"{_SHOWN_MARK.get(status, '[ ]')} {text}" for status, text in items)


def todo_in_messages(messages: Sequence[Mapping[str, Any]]) -> list[TodoItem]:
    """The list as a conversation (OpenAI messages) left it: its last `todo` call that succeeded."""
    results = {
        str(m.get("tool_call_id")): str(m.get("content") or "") for m in messages if m.get("role") == "tool"
    }
    for message in reversed(messages):
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, str) and PLAN_MARK in content:
            with contextlib.suppress(ValueError):
                return parse_items(content.split(TODO_MARK)[-1].splitlines()) if TODO_MARK in content else []
        for call in reversed(message.get("tool_calls") or ()):
            function = call.get("function") or {}
            if function.get("name") != "todo" or results.get(str(call.get("id")), "Error").startswith(
                "Error"
            ):
                continue
            try:
                arguments = json.loads(function.get("arguments") or "{}")
                return parse_items(arguments.get("items") if isinstance(arguments, dict) else None)
            except (ValueError, TypeError):
                continue
    return []


class TodoTool(BaseTool):
    """Keeps the model's checklist; the loop stores the list in the thread after each call."""

    reads_only = True

    name: ClassVar[str] = "todo"
    description: ClassVar[str] = "Keep your checklist of a multi-step task; the user sees it."
    args_model: ClassVar[type[BaseModel]] = TodoArgs

    def execute(self, **kwargs: Any) -> ToolResult:
        args = TodoArgs.model_validate(kwargs)
        try:
            items = parse_items(args.items)
        except ValueError as exc:
            return ToolResult.fail(f"The list was not changed: {exc}.")
        if not items:
            return ToolResult.ok("Todo list cleared.")
        return ToolResult.ok(f"Todo ({done_text(items)}):\n{checklist(items)}")

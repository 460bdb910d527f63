"""todo: the model's checklist while it works, kept in the thread.

- `checklist`: the tool, the `[ ]` / `[~]` / `[x]` lines it takes, and the list a conversation left
  (`todo_in_messages`), which a build run's approved plan starts.

Depends on the core only.
"""

from architect_nb.tools.todo.checklist import (
    MAX_ITEM_CHARS,
    MAX_ITEMS,
    PLAN_MARK,
    TODO_MARK,
    TodoArgs,
    TodoItem,
    TodoTool,
    checklist,
    done_text,
    parse_items,
    todo_in_messages,
)

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

"""Plan, approve, build: the plan's steps, the build's task, and `%architect build` parsing."""

from __future__ import annotations

import pytest

from architect_nb.notebook.extension import await_undo
from architect_nb.notebook.magics import UsageError, parse_line
from architect_nb.notebook.plans import build_task, plan_items, plan_of
from architect_nb.tools.todo import MAX_ITEMS, todo_in_messages


def test_numbered_steps_become_the_todo_list_before_bullets() -> None:
    plan = (
        "Here is the plan.\n\n1. **Read** `cart.py`\n   - note the totals\n2) Change total() to float\n"
        "- a side note\n10. Run   the tests\n"
    )
    assert plan_items(plan) == ["[ ] Read `cart.py`", "[ ] Change total() to float", "[ ] Run the tests"]
    assert plan_items("- one\n- two\n  - nested, left out") == ["[ ] one", "[ ] two"]
    assert plan_items("## Step 1: look\n## Step 2: fix") == ["[ ] look", "[ ] fix"]
    assert plan_items("Just do it.") == []
    assert len(plan_items("\n".join(f"{i}. step {i}" for i in range(1, 80)))) == MAX_ITEMS
    assert len(plan_items("1. " + "x" * 5000)[0]) == 4 + 200


def test_the_build_task_pins_the_plan_and_starts_the_todo_list() -> None:
    task = build_task("1. Read\n2. Fix")
    assert task.startswith(
        "The user approved the plan below. Build it now, step by step, keeping the todo list"
    )
    assert "[Approved plan]\n1. Read\n2. Fix" in task and task.endswith("[Todo]\n[ ] Read\n[ ] Fix")
    messages = [{"role": "user", "content": task}]
    assert todo_in_messages(messages) == [("pending", "Read"), ("pending", "Fix")]
    # The model's own list, once it keeps one, is the list.
    call = {"id": "c", "function": {"name": "todo", "arguments": '{"items": ["[x] Read", "[ ] Fix"]}'}}
    messages += [
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c", "content": "ok"},
    ]
    assert todo_in_messages(messages) == [("done", "Read"), ("pending", "Fix")]
    # A plan without steps pins the plan and starts no list.
    plain = build_task("Rewrite it in one go.")
    assert "[Todo]" not in plain and todo_in_messages([{"role": "user", "content": plain}]) == []


def _payload(agent: str, stop: str, text: str) -> dict[str, object]:
    return {
        "events": [
            {"kind": "run_started", "agent": agent},
            {"kind": "run_finished", "stop_reason": stop, "final_text": text},
        ]
    }


def test_only_a_completed_plan_run_has_a_plan() -> None:
    assert plan_of(_payload("plan", "completed", " 1. a \n")) == "1. a"
    assert plan_of(_payload("build", "completed", "1. a")) is None
    assert plan_of(_payload("plan", "max_steps", "1. a")) is None
    assert plan_of(_payload("plan", "completed", "   ")) is None
    assert plan_of({}) is None


def test_architect_build_is_awaited_and_parsed() -> None:
    line = "get_ipython().run_line_magic('architect', 'build ab12')\n"
    assert await_undo([line]) == [
        "await __import__('architect_nb.notebook.plans', fromlist=['build_line']).build_line('build ab12')\n"
    ]
    assert parse_line("build").args == () and parse_line("build ab12").args == ("ab12",)
    with pytest.raises(UsageError, match="wrong number of arguments"):
        parse_line("build a b")

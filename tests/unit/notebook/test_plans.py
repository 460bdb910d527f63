"""Plan, approve, build: the plan's steps, the build's task, and `%architect build` parsing."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from architect_nb.notebook.extension import await_undo
from architect_nb.notebook.magics import UsageError, parse_line
from architect_nb.notebook.questions.asking import Asking
from architect_nb.notebook.questions.plans import (
    PlanChoice,
    PlanOffer,
    build_task,
    plan_items,
    plan_of,
    plan_question,
)
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
        "await __import__('architect_nb.notebook.runner', fromlist=['build_line']).build_line('build ab12')\n"
    ]
    assert parse_line("build").args == () and parse_line("build ab12").args == ("ab12",)
    with pytest.raises(UsageError, match="wrong number of arguments"):
        parse_line("build a b")


def _asking(*, timeout: float = 300, grace: float = 5.0) -> Asking:
    return Asking(lambda box: None, timeout=timeout, grace=grace, front_ends=None)


def test_with_no_front_end_the_plan_is_not_built_after_the_grace_saying_why() -> None:
    offer = PlanOffer("1. Do it")
    asked = _asking(grace=0.2).ask(offer, plan_question(offer, "t1"))
    assert asked.answer == PlanChoice(None) and asked.ending == "headless"
    assert asked.note.startswith("No front end that can show buttons is connected (a headless run")
    assert (
        "so 'Build this plan?' was not built. `%architect build` builds this plan in thread 't1'."
        in asked.note
    )


def test_build_answers_with_the_edited_plan_and_an_edit_stops_the_clock() -> None:
    offer = PlanOffer("1. Do it")
    asking = _asking(timeout=0.3, grace=0.1)
    out: list[Any] = []
    offer.box._view_count = 1  # shown by a front end: the grace does not apply
    thread = threading.Thread(target=lambda: out.append(asking.ask(offer, plan_question(offer, "t1"))))
    thread.start()
    offer.click("edit")
    thread.join(0.8)
    assert not out, "the timeout ran while the plan was being edited"
    offer.click("build", "1. Do it better")
    thread.join(2)
    assert out[0].answer == PlanChoice("1. Do it better") and out[0].ending == "answered"

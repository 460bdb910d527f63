"""The todo tool: the model's checklist, kept in the thread, under the header, counted in the summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from architect_nb.agent.events import AgentEvent, RunStarted
from architect_nb.notebook.output.event_view import Summary, Todo, run_view
from architect_nb.notebook.output.render import RunOutput
from architect_nb.notebook.output.text_render import run_text
from architect_nb.tools.todo import MAX_ITEMS, TodoTool, todo_in_messages
from tests.support.agent import make_loop, write_script


def todo(*items: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "todo", "arguments": {"items": list(items)}}]}


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"items": ["write tests"]}, "item 1 ('write tests') must begin with '[ ]', '[~]' or '[x]'"),
        ({"items": ["[x]   "]}, "item 1 has a mark but no text"),
        ({"items": ["[ ] a"] * (MAX_ITEMS + 1)}, f"the list has {MAX_ITEMS + 1} items"),
        ({"items": ["[ ] " + "y" * 5000]}, "item 1 is 5000 characters long"),
        ({"items": "[ ] a"}, "Invalid arguments for todo: items"),
        ({"items": [1, 2]}, "Invalid arguments for todo: items.0"),
        ({}, "Invalid arguments for todo: items: Field required"),
        ({"items": [], "extra": 1}, "Invalid arguments for todo: extra"),
    ],
)
def test_bad_lists_are_refused_with_what_to_fix(arguments: dict[str, Any], message: str) -> None:
    result = TodoTool().execute(**arguments)
    assert not result.success
    assert message in (result.error or "")


def test_a_good_list_comes_back_counted() -> None:
    result = TodoTool().execute(items=["[x] read the code", " [~]  fix   the bug ", "[ ] run the tests"])
    assert result.success
    assert result.output == "Todo (1 of 3 done):\n[x] read the code\n[~] fix the bug\n[ ] run the tests"
    assert TodoTool().execute(items=[]).output == "Todo list cleared."


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    return root


def test_the_list_is_shown_under_the_header_counted_in_the_summary_and_kept_by_the_thread(
    workspace: Path,
) -> None:
    model = write_script(
        workspace,
        [
            todo("[~] read a.py", "[ ] change it", "[ ] test it"),
            todo("[x] read a.py", "[ ] change it", "[ ] test it"),
            {"tool_calls": [{"name": "todo", "arguments": {"items": ["not a checklist"]}}]},
            {"content": "Done for now."},
        ],
    )
    result = make_loop(workspace, model).run("work")
    assert result.stop_reason == "completed", result.message
    payload = result.transcript.to_payload()
    view = run_view(payload["events"], result.run_id)
    assert isinstance(view.parts[1], Todo)  # right under the header, before the steps
    assert view.parts[1].title == "Todo · 1 of 3 done"  # the refused list changed nothing
    summary = next(p for p in view.parts if isinstance(p, Summary))
    assert summary.todo == "Todo: 1 of 3 done"
    text = run_text(view)
    assert "Todo · 1 of 3 done\n  ☑ read a.py\n  ☐ change it\n  ☐ test it" in text
    assert "Todo: 1 of 3 done" in text
    html = RunOutput.from_payload(payload).html()
    assert "<s>read a.py</s>" in html and "Todo: 1 of 3 done" in html
    assert result.thread is not None
    assert result.thread.todo == [("done", "read a.py"), ("pending", "change it"), ("pending", "test it")]

    # A follow-up starts from the thread's list and carries it on.
    events: list[AgentEvent] = []
    more = write_script(
        workspace,
        [
            {"expect": {"history_contains": ["[x] read a.py"]}, **todo("[x] read a.py", "[x] change it")},
            {"content": "All done."},
        ],
        name="more.yaml",
    )
    follow = make_loop(workspace, more, events=events).run("go on", thread=result.thread)
    started = next(e for e in events if isinstance(e, RunStarted))
    assert started.todo == ("[x] read a.py", "[ ] change it", "[ ] test it")
    follow_view = run_view(follow.transcript.to_payload()["events"], follow.run_id)
    assert next(p for p in follow_view.parts if isinstance(p, Summary)).todo == "Todo: 2 of 2 done"


def test_a_run_without_a_list_shows_none(workspace: Path) -> None:
    result = make_loop(workspace, write_script(workspace, [{"content": "hi"}])).run("hello")
    view = run_view(result.transcript.to_payload()["events"], result.run_id)
    assert not any(isinstance(p, Todo) for p in view.parts)
    assert "Todo" not in run_text(view)


def test_the_list_in_messages_skips_failed_calls() -> None:
    call = {"id": "c1", "function": {"name": "todo", "arguments": '{"items": ["[ ] a"]}'}}
    bad = {"id": "c2", "function": {"name": "todo", "arguments": '{"items": ["b"]}'}}
    messages = [
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "Todo (0 of 1 done):\n[ ] a"},
        {"role": "assistant", "tool_calls": [bad]},
        {"role": "tool", "tool_call_id": "c2", "content": "Error: The list was not changed"},
    ]
    assert todo_in_messages(messages) == [("pending", "a")]
    assert todo_in_messages([{"role": "assistant", "tool_calls": [{"id": "x", "function": {}}]}]) == []

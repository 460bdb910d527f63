"""The todo list and the project's instructions in a real kernel: live above the steps, kept in the output."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.agent import write_script
from tests.support.kernel import RUN_MIME, FrontEnd

pytestmark = pytest.mark.slow


@pytest.fixture
def fe(kernel_as_new: FrontEnd) -> FrontEnd:
    return kernel_as_new


def test_the_todo_list_shows_live_above_the_steps_and_stays_in_the_saved_output(
    fe: FrontEnd, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    (ws / "AGENTS.md").write_text("Keep functions short.\n")
    (ws / "pkg" / "CLAUDE.md").write_text("pkg: no prints.\n")
    (ws / "pkg" / "mod.py").write_text("def f():\n    return 1\n")
    plan = {"items": ["[x] read pkg/mod.py", "[~] write the summary"]}
    model = write_script(
        ws,
        [
            {"tool_calls": [{"name": "todo", "arguments": plan}]},
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "pkg/mod.py"}}]},
            {"expect": {"history_contains": ["pkg: no prints."]}, "content": "f returns 1."},
        ],
    )
    assert fe.run(f"%architect config workspace.root={ws}").status == "ok"
    fe.updates.clear()
    cell = fe.run(f"%%architect --model {model} --no-notebook\nWhat does f return?", timeout=120)
    assert cell.status == "ok", fe.describe()
    # Live: a redraw while the run went on showed the list, above the step that read the file.
    live = [html for _, _, html in fe.updates if "architect-nb-live" in html and "architect-nb-todo" in html]
    assert live, "the live view never showed the todo list"
    drawn = next(html for html in live if "read_file" in html)
    assert drawn.index("architect-nb-todo") < drawn.index("read_file")
    assert "<s>read pkg/mod.py</s>" in drawn and "<b>write the summary</b>" in drawn
    # Saved: the static output keeps the list, the count, the instructions read, and the transcript.
    [first] = [o for o in cell.outputs if RUN_MIME in o.get("data", {})]
    text, html = first["data"]["text/plain"], first["data"]["text/html"]
    assert "Todo · 1 of 2 done\n  ☑ read pkg/mod.py\n  ◐ write the summary" in text
    assert "Todo: 1 of 2 done" in text and "Todo: 1 of 2 done" in html
    assert "Instructions: AGENTS.md (21 chars)" in text
    assert "ℹ Read instructions pkg/CLAUDE.md (15 chars)." in text
    started = first["data"][RUN_MIME]["events"][0]
    assert started["kind"] == "run_started" and started["instructions"] == ["AGENTS.md (21 chars)"]

"""The whole job on the scripted model: read, search, edit, patch, run the tests, finish."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from architect_nb.agent.events import AgentEvent, ConfirmationAsked, RunFinished, TextDelta, ToolResultEvent
from architect_nb.config import SandboxConfig
from architect_nb.testing.every_tool_session import FIRST_WORDS, TASK, every_tool_turns
from architect_nb.tools.commands.sandbox import sandbox_unavailable_reason
from tests.support.agent import copy_sample_project, kinds, make_loop, write_script


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_sample_project(tmp_path / "project")


def test_every_tool_on_the_scripted_model(project: Path) -> None:
    model = write_script(project, every_tool_turns("Totals are floats now and discounts round to cents."))
    events: list[AgentEvent] = []
    loop = make_loop(project, model, answers=["approve", "approve", "approve"], events=events)
    result = loop.run(TASK)

    assert (result.status, result.stop_reason) == ("success", "completed"), result.message
    assert result.final_text == "Totals are floats now and discounts round to cents."
    source = (project / "shop/cart.py").read_text()
    assert "total = 0.0\n" in source and "return round(discounted, 2)" in source
    assert result.files_changed == ["shop/cart.py"]
    tool_results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert [(e.tool, e.status) for e in tool_results] == [
        ("read_file", "ok"),
        ("grep", "ok"),
        ("edit_file", "ok"),
        ("apply_patch", "ok"),
        ("run_command", "ok"),
    ]
    assert tool_results[2].diff and "+        total = 0.0" in tool_results[2].diff
    asked = [e for e in events if isinstance(e, ConfirmationAsked)]
    # pytest is a dev command: in the OS sandbox without network it runs without asking.
    sandboxed = sandbox_unavailable_reason(SandboxConfig()) is None
    assert tool_results[4].sandboxed is sandboxed and tool_results[0].sandboxed is None
    assert [e.tool for e in asked] == ["edit_file", "apply_patch"] + ([] if sandboxed else ["run_command"])
    assert asked[0].preview and "-        total = 0" in asked[0].preview
    assert asked[0].call_id == tool_results[2].call_id  # events of one call share the model's call id
    assert kinds(events)[0] == "run_started" and kinds(events)[-1] == "run_finished"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)).startswith(FIRST_WORDS)
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.undo_note == ""  # commands' changes are covered
    assert [c["path"] for c in finished.changes] == list(finished.files_changed)  # the review list
    assert all(c["status"] == "modified" and c["diff"].startswith("diff --git") for c in finished.changes)
    transcript = json.dumps(result.transcript.to_list())  # the transcript is plain JSON
    assert '"kind": "text_delta"' in transcript

"""The whole job on the scripted model: read, search, edit, patch, run the tests, finish."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_helpers import copy_sample_project, kinds, make_loop, write_script

from architect_nb.agent.events import AgentEvent, ConfirmationAsked, RunFinished, TextDelta, ToolResultEvent

PATCH = """--- a/shop/cart.py
+++ b/shop/cart.py
@@ -26,2 +26,3 @@
     def total_with_discount(self, percent: float) -> float:
-        return self.total() * (1 - percent / 100)
+        discounted = self.total() * (1 - percent / 100)
+        return round(discounted, 2)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_sample_project(tmp_path / "project")


def test_whole_job_on_the_scripted_model(project: Path) -> None:
    model = write_script(
        project,
        [
            {
                "content": "Let me read the cart.",
                "tool_calls": [{"name": "read_file", "arguments": {"path": "shop/cart.py"}}],
            },
            {
                "expect": {"tool_result_contains": "def total"},
                "tool_calls": [{"name": "grep", "arguments": {"pattern": "total = 0", "path": "shop"}}],
            },
            {
                "expect": {"tool_result_contains": "shop/cart.py:"},
                "tool_calls": [
                    {
                        "name": "edit_file",
                        "arguments": {
                            "path": "shop/cart.py",
                            "old_str": "total = 0\n",
                            "new_str": "total = 0.0\n",
                        },
                    }
                ],
            },
            {"tool_calls": [{"name": "apply_patch", "arguments": {"path": "shop/cart.py", "patch": PATCH}}]},
            {
                "tool_calls": [
                    {"name": "run_command", "arguments": {"command": "python -m pytest -q", "timeout": 120}}
                ]
            },
            {
                "expect": {"tool_result_contains": "2 passed"},
                "content": "Totals are floats now and discounts round to cents.",
            },
        ],
    )
    events: list[AgentEvent] = []
    loop = make_loop(project, model, answers=["approve", "approve", "approve"], events=events)
    result = loop.run("Make totals floats and round discounts to cents; keep the tests green.")

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
    assert [e.tool for e in asked] == ["edit_file", "apply_patch", "run_command"]
    assert asked[0].preview and "-        total = 0" in asked[0].preview
    assert asked[0].call_id == tool_results[2].call_id  # events of one call share the model's call id
    assert kinds(events)[0] == "run_started" and kinds(events)[-1] == "run_finished"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)).startswith("Let me read the cart.")
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.untracked_changes_note
    transcript = json.dumps(result.transcript.to_list())  # the transcript is plain JSON
    assert '"kind": "text_delta"' in transcript

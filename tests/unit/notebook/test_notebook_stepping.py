"""The --step prompt and the inspector's notebook side, without a kernel: the buttons' Python twin,
malformed and hostile edits, the timeout, the inspector drawn when opened, `%architect inspect`, and the
saved compact form."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from architect_nb.agent.conversation.inspector import rebuild
from architect_nb.agent.events import Transcript
from architect_nb.agent.stepping import ModelPause, StepDecision, ToolPause, parse_arguments
from architect_nb.notebook.magics import LineCommand, UsageError, parse_cell_line, parse_line
from architect_nb.notebook.output.inspector_view import INSPECT_MIME_TYPE, InspectorOutput, inspector_html
from architect_nb.notebook.output.render import RunOutput
from architect_nb.notebook.output.saved_record import for_notebook
from architect_nb.notebook.questions.asking import Asking
from architect_nb.notebook.questions.stepping import StepPrompt, WidgetStepper
from architect_nb.notebook.state import KernelRun, Session
from tests.support.agent import copy_sample_project, make_loop, write_script

TOOL = ToolPause(step=1, call_id="c1", tool="read_file", arguments={"path": "a.py"}, schema=None)
MODEL = ModelPause(step=2, messages=({"role": "system", "content": "S"},), tools=(), results={"c1": "old"})


def _decide(stepper: WidgetStepper, pause: Any) -> tuple[threading.Thread, list[StepDecision]]:
    out: list[StepDecision] = []
    thread = threading.Thread(target=lambda: out.append(stepper.decide(pause)))
    thread.start()
    deadline = time.monotonic() + 5
    while stepper.pending is None and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.005)
    return thread, out


def test_the_buttons_a_pause_offers_and_malformed_edits_are_refused_in_the_prompt() -> None:
    prompt = StepPrompt(TOOL)
    assert [b.description for b in prompt.buttons.values()] == [
        "Continue",
        "Edit arguments",
        "Skip",
        "Fork here",
        "Stop",
    ]
    assert json.loads(prompt.editor.value) == {"path": "a.py"}
    for bad in ("{not json", "[1, 2]", '"a string"', "{" * 5000):
        prompt.click("edit_arguments", bad)
        assert not prompt.event.is_set() and "cf222e" in prompt.problem.value
    with pytest.raises(ValueError, match="not offered"):
        prompt.click("edit_result", "x")
    prompt.click("edit_arguments", '{"path": "b.py"}')
    assert prompt.answer == StepDecision.edit_arguments({"path": "b.py"})
    prompt.click("stop")  # answered already: the first answer holds
    assert prompt.answer is not None and prompt.answer.action == "edit_arguments"
    model = StepPrompt(MODEL)
    assert "Edit result" in [b.description for b in model.buttons.values()] and model.editor.value == "old"
    model.click("edit_result", "new text")
    assert model.answer == StepDecision.edit_result({"c1": "new text"})
    several = StepPrompt(ModelPause(step=2, messages=(), tools=(), results={"a": "1", "b": "2"}))
    several.click("edit_result", "plain text")  # several results: a JSON object is needed
    assert not several.event.is_set()
    several.click("edit_result", '{"a": "x", "zz": "ignored"}')
    assert several.answer == StepDecision.edit_result({"a": "x"})
    assert parse_arguments("[]")[0] is None and parse_arguments('{"a": 1}') == ({"a": 1}, None)


def _stepper(shown: list[Any], removed: list[Any], *, timeout: float, grace: float = 5.0) -> WidgetStepper:
    return WidgetStepper(Asking(shown.append, removed.append, timeout=timeout, grace=grace, front_ends=None))


def test_an_unanswered_pause_stops_and_an_interrupt_stops_at_once() -> None:
    shown: list[Any] = []
    removed: list[Any] = []
    stepper = _stepper(shown, removed, timeout=0.3)
    started = time.monotonic()
    thread, out = _decide(stepper, TOOL)
    thread.join(5)
    [decision] = out
    assert decision.action == "stop" and 0.25 < time.monotonic() - started < 3
    assert decision.reason.startswith("Nobody answered 'Step 1: run read_file?' within 0.3 s")
    assert shown and removed == shown
    stepper = _stepper(shown, removed, timeout=60)
    thread, out = _decide(stepper, TOOL)
    stepper.cancel()
    thread.join(2)
    assert out == [StepDecision.stop()]
    assert stepper.decide(TOOL) == StepDecision.stop()  # cancelled: no more pauses


def test_with_no_front_end_a_pause_stops_the_run_after_the_grace_saying_which_and_why() -> None:
    stepper = _stepper([], [], timeout=300, grace=0.2)
    started = time.monotonic()
    decision = stepper.decide(MODEL)
    assert decision.action == "stop" and time.monotonic() - started < 1.5
    assert decision.reason.startswith("No front end that can show buttons is connected (a headless run")
    assert "so 'Step 2: call the model?' was answered with Stop" in decision.reason
    assert "or run without --step" in decision.reason


def test_the_inspector_is_drawn_when_opened_and_redacted(tmp_path: Path) -> None:
    secret = "sk-ant-api03-" + "A1b2C3d4" * 8
    stepper = _stepper([], [], timeout=10)
    pause = ModelPause(
        step=1,
        messages=({"role": "system", "content": "S"}, {"role": "user", "content": f"key {secret} <b>x</b>"}),
        tools=({"type": "function", "function": {"name": "read_file"}},),
        results={},
    )
    thread, out = _decide(stepper, pause)
    prompt = stepper.pending
    assert prompt is not None and prompt.inspector.value == ""  # nothing drawn until asked
    prompt.show.value = True
    deadline = time.monotonic() + 3
    while not prompt.inspector.value and time.monotonic() < deadline:
        time.sleep(0.02)
    drawn = prompt.inspector.value
    assert "architect-nb-inspector" in drawn and "read_file" in drawn
    assert secret not in drawn and "&lt;b&gt;x&lt;/b&gt;" in drawn and "<b>x</b>" not in drawn
    prompt.click("continue")
    thread.join(2)
    assert out == [StepDecision.go()]


def test_inspect_magic_shows_a_step_of_a_run_of_this_kernel(tmp_path: Path) -> None:
    workspace = copy_sample_project(tmp_path / "ws")
    model = write_script(
        workspace,
        [
            {
                "content": "Reading.",
                "tool_calls": [{"name": "read_file", "arguments": {"path": "README.md"}}],
            },
            {"content": "Done."},
        ],
    )
    loop = make_loop(workspace, model, overrides={"checkpoints.persist": False}, mode="yolo")
    loop.run("Read the readme.")
    whole = RunOutput.from_payload(loop.transcript.to_payload()).payload
    session = Session()
    session.record(
        KernelRun(
            run_id=loop.run_id,
            task="t",
            status="success",
            stop_reason="completed",
            files_changed=[],
            cost_usd=0,
            started_at=0,
            payload=whole,
        )
    )
    shown = session.handle(parse_line(f"inspect {loop.run_id}:2"))
    assert isinstance(shown, InspectorOutput)
    bundle = shown._repr_mimebundle_()
    data = bundle[INSPECT_MIME_TYPE]
    assert [m["role"] for m in data["messages"]] == ["system", "user", "assistant", "tool"]
    assert data["new"] == [2, 3] and data["reply"]["content"] == "Done."
    assert "new since the previous request" in bundle["text/html"]
    assert "4 messages (2 new)" in bundle["text/plain"]
    missing = session.handle(LineCommand(name="inspect", args=(f"{loop.run_id}:9",)))
    assert "no model request at step 9" in str(missing._repr_mimebundle_())
    for bad in ("run", "run:0", "run:x", ":2"):
        with pytest.raises(UsageError, match="RUN:STEP"):
            session.handle(LineCommand(name="inspect", args=(bad,)))
    with pytest.raises(UsageError):
        parse_line("inspect")
    assert parse_cell_line("--step").step and not parse_cell_line("").step

    # The notebook keeps each request's compact form: no contents, no raw reply; the HTML twin says each step.
    saved = for_notebook(whole, "")
    kinds = [e["kind"] for e in saved["events"]]
    assert "model_reply" not in kinds and kinds.count("model_request") == 2
    compact = [e for e in saved["events"] if e["kind"] == "model_request"]
    assert compact[1]["request"] == {"messages": 4, "new": 2} and "parts" not in compact[1]
    assert compact[1]["meter"]["parts"]["tool_results"] > 0
    html = RunOutput(saved)._repr_mimebundle_()["text/html"]
    assert (
        "Step 2 · the model got 4 messages (2 new)" in html and f"%architect inspect {loop.run_id}:2" in html
    )
    assert len(json.dumps(compact[1])) < 500
    assert rebuild(saved["events"], 2)["messages"] == []  # type: ignore[index]  # compact: no contents
    assert inspector_html({"messages": [{"missing": "h"}], "new": [0]}).count("not in this transcript") == 1


def test_a_transcript_with_a_foreign_or_missing_events_list_is_not_an_error() -> None:
    assert rebuild([], 1) is None
    assert rebuild([{"kind": "model_request", "step": 1}], 1) == {
        "step": 1,
        "tools": [],
        "messages": [],
        "new": [],
        "meter": None,
        "reply": None,
    }
    assert Transcript().to_payload()["events"] == []

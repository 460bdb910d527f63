"""Long runs: the loop's bookkeeping grows by a step at a time (no rescans of the history), the live view
stays the same size however long the run, and the saved record keeps long outputs out of the notebook."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from architect_nb.agent.conversation.context import ContextBuilder, estimate_tokens
from architect_nb.agent.events import (
    CostUpdate,
    RunFinished,
    RunStarted,
    StepStarted,
    TextDelta,
    ToolCallRequested,
    ToolResultEvent,
    Transcript,
)
from architect_nb.config import load_config
from architect_nb.execution.build import build_engine
from architect_nb.notebook.output.live import LIVE_STEPS, LiveView
from architect_nb.notebook.output.saved_record import SAVED_OUTPUT_CHARS, for_notebook, save_whole

RUN = "0123456789ab"


def _step_events(step: int, output: str = "x = 1\n" * 50) -> list[Any]:
    return [
        StepStarted(run_id=RUN, step=step),
        TextDelta(run_id=RUN, step=step, text=f"Step {step}: "),
        TextDelta(run_id=RUN, step=step, text="reading."),
        CostUpdate(
            run_id=RUN,
            step=step,
            prompt_tokens=10,
            completion_tokens=5,
            cost_usd=0.0,
            total_tokens=15 * step,
            total_cost_usd=0.0,
            priced=False,
            cached_tokens=8,
            total_cached_tokens=8 * step,
        ),
        ToolCallRequested(
            run_id=RUN, step=step, call_id=f"c{step}", tool="read_file", arguments={"path": "m.py"}
        ),
        ToolResultEvent(
            run_id=RUN,
            step=step,
            call_id=f"c{step}",
            tool="read_file",
            status="ok",
            success=True,
            output=output,
            error=None,
            diff=None,
            hooks=(),
            duration_s=0.001,
        ),
    ]


def _started() -> RunStarted:
    return RunStarted(
        run_id=RUN,
        task="read",
        agent="build",
        model="m",
        mode="yolo",
        dry_run=False,
        workspace="/w",
        tools=(),
    )


def test_the_transcript_merges_as_events_come_and_hands_out_copies() -> None:
    transcript = Transcript()
    transcript(_started())
    for step in (1, 2):
        for event in _step_events(step):
            transcript(event)
    merged = transcript.to_list()
    assert transcript.size == len(merged) == 1 + 2 * 5
    assert [e["text"] for e in merged if e["kind"] == "text_delta"] == [
        "Step 1: reading.",
        "Step 2: reading.",
    ]
    merged[1]["step"] = 99
    assert transcript.to_list()[1]["step"] == 1  # a copy was changed, not the transcript
    assert transcript.since(6, 8) == transcript.to_list()[6:8]
    transcript(TextDelta(run_id=RUN, step=2, text=" More."))  # after a tool result: a new text
    assert transcript.to_list()[-1]["text"] == " More."
    transcript.events = transcript.events[:3]  # replaced from outside: rebuilt from what is there
    assert [e["kind"] for e in transcript.to_list()] == ["run_started", "step_started", "text_delta"]


def test_the_running_estimate_equals_a_full_count_through_growth_and_compression() -> None:
    builder = ContextBuilder(keep_recent_steps=1)
    messages: list[dict[str, Any]] = [{"role": "system", "content": "s"}, {"role": "user", "content": "task"}]
    for n in range(40):
        messages.append({"role": "assistant", "content": None, "tool_calls": [{"id": str(n)}]})
        messages.append({"role": "tool", "tool_call_id": str(n), "content": "y" * 2000})
        assert builder.estimate(messages) == estimate_tokens(messages)
    report = builder.compress(messages, window_tokens=12_000, pinned=1)
    assert report is not None
    assert builder.estimate(messages) == estimate_tokens(messages)  # compression rewrote messages in place
    other = [dict(m) for m in messages]
    assert builder.estimate(other) == estimate_tokens(other)  # another list is counted in full
    messages[-1] = {"role": "tool", "tool_call_id": "x", "content": "short"}  # the last one replaced
    assert builder.estimate(messages) == estimate_tokens(messages)


def test_the_live_view_shows_the_last_steps_and_stays_the_same_size(monkeypatch: pytest.MonkeyPatch) -> None:
    sizes = {}
    for steps in (LIVE_STEPS * 3, LIVE_STEPS * 12):
        view = LiveView()
        view.on_event(_started())
        for step in range(1, steps + 1):
            for event in _step_events(step):
                view.on_event(event)
        html = view._bundle()["text/html"]
        sizes[steps] = len(html)
        assert f"… {steps - LIVE_STEPS} earlier step(s), shown when the run ends" in html
        assert html.count(">read_file<") == LIVE_STEPS
        assert "Task:" in html  # the run's header stays
        assert f"{15 * steps:,} tokens, {8 * steps:,} cached" in html
        assert len(view._done_html) <= LIVE_STEPS  # the HTML of steps out of view is let go
        view.finish({"text/plain": "done"})
    assert abs(sizes[LIVE_STEPS * 12] - sizes[LIVE_STEPS * 3]) < 100


class _Handle:
    """The display handle and the kernel's publisher, as the live view uses them: what each redraw sent."""

    display_id = "live"

    def __init__(self) -> None:
        self.drawn: list[str] = []

    def update(self, content: dict[str, str], raw: bool = False) -> None:
        self.drawn.append(content["text/html"])

    def publish(self, data: dict[str, str], metadata: Any, transient: Any, update: bool) -> None:
        assert transient == {"display_id": "live"} and update
        self.drawn.append(data["text/html"])


def test_events_that_come_fast_are_drawn_together_and_the_last_one_is_drawn_soon() -> None:
    view = LiveView()
    handle = _Handle()
    view.handle = handle  # type: ignore[assignment]
    view._publisher = handle  # in a test session that made an IPython shell, the view found its publisher
    started = time.monotonic()
    view.on_event(_started())
    for step in range(1, 51):
        for event in _step_events(step):
            if not isinstance(event, ToolCallRequested):
                view.on_event(event)
    elapsed = time.monotonic() - started
    # 251 events, but at most one redraw per 0.1 s (and the first at once).
    assert len(handle.drawn) <= 2 + elapsed / 0.1, (len(handle.drawn), elapsed)
    deadline = time.monotonic() + 5
    while "Step 50: reading." not in (handle.drawn or [""])[-1] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert "Step 50: reading." in handle.drawn[-1]  # a trailing redraw, with no further event to cause it
    # A call about to run is drawn before it runs (run_python captures the kernel's displays meanwhile).
    view.on_event(StepStarted(run_id=RUN, step=51))
    view.on_event(
        ToolCallRequested(run_id=RUN, step=51, call_id="c51", tool="run_python", arguments={"code": "1"})
    )
    assert ">run_python<" in handle.drawn[-1]
    view.on_event(
        RunFinished(
            run_id=RUN,
            status="success",
            stop_reason="completed",
            message="done",
            steps=50,
            final_text="done",
            files_changed=(),
            total_tokens=750,
            total_cost_usd=0.0,
            duration_s=1.0,
        )
    )
    finished = handle.drawn[-1]
    view.finish({"text/html": "static", "text/plain": "done"})
    assert handle.drawn[-2] == finished and handle.drawn[-1] == "static"
    time.sleep(0.15)
    assert handle.drawn[-1] == "static"  # no redraw is left to come after the static output


def test_a_redraw_while_run_python_captures_displays_reaches_the_cell_not_the_capture(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    from architect_nb.notebook.kernel.kernel_session import IPythonKernel, MainThreadCalls

    shell = InteractiveShell.instance()
    to_cell: list[dict[str, Any]] = []
    monkeypatch.setattr(
        shell.display_pub, "publish", lambda data, metadata=None, **kw: to_cell.append(dict(data))
    )
    view = LiveView()
    view.on_event(_started())
    kernel = IPythonKernel(shell, MainThreadCalls())
    with kernel.displays() as shown:
        shell.display_pub.publish({"text/plain": "the agent's own plot"})
        for step in range(1, 4):
            for event in _step_events(step):
                view.on_event(event)  # the worker's events, while the agent's code runs on the main thread
        deadline = time.monotonic() + 5
        while not any("Step 3: reading." in d.get("text/html", "") for d in to_cell):
            assert time.monotonic() < deadline, "the trailing redraw never reached the cell"
            time.sleep(0.02)
    assert shown == [{"text/plain": "the agent's own plot"}]  # the capture holds the code's output only
    assert not any("the agent's own plot" in str(d) for d in to_cell)
    view.finish({"text/plain": "done"})


def test_the_notebook_keeps_long_outputs_cut_and_the_transcript_file_keeps_them_whole(tmp_path: Path) -> None:
    config = load_config(
        overrides={"workspace.root": str(tmp_path), "checkpoints.dir": str(tmp_path / "state")}, environ={}
    )
    engine = build_engine(config, mode="yolo")
    long = "".join(f"line {n}\n" for n in range(2000))
    transcript = Transcript()
    transcript(_started())
    for event in [*_step_events(1, long), *_step_events(2, "short\n")]:
        transcript(event)
    transcript(
        RunFinished(
            run_id=RUN,
            status="success",
            stop_reason="completed",
            message="Done.",
            steps=2,
            final_text="",
            files_changed=(),
            total_tokens=30,
            total_cost_usd=0.0,
            duration_s=0.1,
        )
    )
    whole = transcript.to_payload()
    where = save_whole(engine, whole)
    assert where == str(tmp_path / "state" / RUN / "transcript.json")
    assert json.loads(Path(where).read_text()) == json.loads(json.dumps(whole))
    kept = for_notebook(whole, where)
    outputs = [e["output"] for e in kept["events"] if e["kind"] == "tool_result"]
    assert outputs[1] == "short\n"
    assert len(outputs[0]) < SAVED_OUTPUT_CHARS + 250 and outputs[0].startswith("line 0\n")
    assert outputs[0].endswith("line 1999\n") and f"the whole output is in {where}" in outputs[0]
    assert whole["events"][5]["output"] == long  # the payload given is left whole
    unsaved = build_engine(
        load_config(overrides={"workspace.root": str(tmp_path), "checkpoints.persist": False}, environ={}),
        mode="yolo",
    )
    assert save_whole(unsaved, whole) == ""
    assert f"%architect transcript {RUN}" in for_notebook(whole, "")["events"][5]["output"]

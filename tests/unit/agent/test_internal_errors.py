"""An exception inside the model client (or the loop) ends the run with a summary that says what broke.

Before, it left the loop without a `RunFinished`, and the cell's summary said "The run was interrupted (it
did not stop in time; its worker was left behind)" with the stop reason `interrupted`, the real error only
in a second output.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from architect_nb.agent import AgentLoop, resolve_agent
from architect_nb.agent.conversation.thread import Thread
from architect_nb.agent.models.llm import LLMResponse
from architect_nb.config import load_config
from architect_nb.execution.build import build_engine
from architect_nb.notebook.output.render import RunOutput
from architect_nb.notebook.runner import CellRun
from tests.support.provider_matrix import project


class BrokenClient:
    """A model client with a bug: it raises where it should answer."""

    model = "broken/model"

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        *,
        on_text: Callable[[str], None] | None = None,
        on_thinking: Callable[[str], None] | None = None,
        on_notice: Callable[[str], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        thread_position: tuple[int, int] = (0, 0),
    ) -> LLMResponse:
        if on_text is not None:
            on_text("Let me ")
        return {"choices": []}["choices"][0]  # type: ignore[no-any-return]  # IndexError: the bug

    def context_window(self) -> int:
        return 100_000

    def supports_images(self) -> bool:
        return False


def _loop(tmp_path: Path) -> AgentLoop:
    config = load_config(overrides={"workspace.root": str(project(tmp_path))}, environ={})
    return AgentLoop(build_engine(config, mode="yolo"), BrokenClient(), resolve_agent("build", config))


def test_an_exception_in_the_model_client_is_an_internal_error_with_its_type_and_message(
    tmp_path: Path,
) -> None:
    loop = _loop(tmp_path)
    result = loop.run("Read the cart.")
    assert (result.status, result.stop_reason) == ("failed", "internal_error")
    assert result.message == "Internal error in the model client: IndexError: list index out of range"
    finished = [e for e in loop.transcript.events if e.kind == "run_finished"]
    assert len(finished) == 1 and finished[0].stop_reason == "internal_error"
    text = repr(RunOutput.from_payload(loop.transcript.to_payload()))
    assert "failed: Internal error in the model client: IndexError: list index out of range" in text
    assert "(stop reason: internal_error)" in text and "interrupted" not in text


def test_a_cell_whose_worker_raised_says_so_not_that_it_was_interrupted(tmp_path: Path) -> None:
    """An exception that leaves the loop before its summary (here: a thread of another workspace, which the
    notebook never hands it) makes the cell's summary an internal error with the exception."""
    loop = _loop(tmp_path)
    config = load_config(overrides={"workspace.root": str(tmp_path)}, environ={})
    elsewhere = Thread(name="main", workspace="/somewhere/else")
    run = CellRun(loop, confirmer=None, live=None, task="Read the cart.", thread=elsewhere, config=config)
    run.start().exception(timeout=10)
    events = run.payload()["events"]
    (finished,) = [e for e in events if e["kind"] == "run_finished"]
    assert finished["stop_reason"] == "internal_error"
    assert finished["message"].startswith(
        "Internal error: ThreadError: thread 'main' belongs to the workspace"
    )
    assert "worker was left behind" not in finished["message"]

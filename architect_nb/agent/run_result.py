"""What a run leaves: `RunResult`, and the words for how it and each of its calls ended.

The agent loop ends every run here: the status from the stop reason, the review list of the files it changed
(capped, since the run's record is saved in the notebook), and the header of the conversation a run
continues.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from architect_nb.agent.conversation.thread import Thread
from architect_nb.agent.costs import CostTracker
from architect_nb.agent.events import RunFinished, RunStatus, StopReason, ThreadInfo, Transcript
from architect_nb.agent.run_state import RunState
from architect_nb.execution.checkpoints.store import CheckpointStore
from architect_nb.log import get_logger
from architect_nb.tools.base import ToolResult
from architect_nb.tools.state_snapshot import KERNEL_ENTRY

__all__ = [
    "RunResult",
    "ran_sandboxed",
    "relative",
    "review_list",
    "run_finished",
    "run_status",
    "thread_info",
]

_REVIEW_FILES = 200
_REVIEW_DIFF_LINES = 400


@dataclass
class RunResult:
    """The outcome of one run."""

    run_id: str
    status: RunStatus
    stop_reason: StopReason
    message: str
    final_text: str
    steps: int
    messages: list[dict[str, Any]]
    transcript: Transcript
    files_changed: list[str] = field(default_factory=list)
    total_tokens: int = 0
    cost_usd: float = 0.0
    thread: Thread | None = None  # pass it to the next `run` to follow up on this one

    @classmethod
    def of(cls, run: RunState, finished: RunFinished, transcript: Transcript) -> RunResult:
        """What `run` leaves, as its `RunFinished` event says it ended."""
        return cls(
            run_id=run.run_id,
            status=finished.status,
            stop_reason=finished.stop_reason,
            message=finished.message,
            final_text=run.final_text,
            steps=run.steps,
            messages=run.messages,
            transcript=transcript,
            files_changed=list(finished.files_changed),
            total_tokens=finished.total_tokens,
            cost_usd=finished.total_cost_usd,
            thread=run.thread,
        )


def run_finished(run: RunState, checkpoints: CheckpointStore, root: Path, costs: CostTracker) -> RunFinished:
    """The event that ends `run`: how it stopped, what it cost, the files it changed and their review list."""
    files = sorted(relative(path, root) for path in checkpoints.files(run.run_id))
    return RunFinished(
        run_id=run.run_id,
        status=run_status(run.stop),
        stop_reason=run.stop,
        message=run.message or ("Done." if run.stop == "completed" else run.stop),
        steps=run.steps,
        final_text=run.final_text,
        files_changed=tuple(files),
        total_tokens=costs.total_tokens,
        total_cost_usd=costs.cost_usd,
        duration_s=round(time.monotonic() - run.started, 3),
        undo_note=checkpoints.coverage_note(run.run_id),
        changes=review_list(checkpoints, run.run_id),
        total_cached_tokens=costs.cached_tokens,
        total_reasoning_tokens=costs.reasoning_tokens,
    )


def run_status(stop: StopReason) -> RunStatus:
    """`success` for a completed run, `partial` for one stopped at a limit, `failed` otherwise."""
    if stop == "completed":
        return "success"
    return "partial" if stop in ("max_steps", "budget", "timeout") else "failed"


def ran_sandboxed(result: ToolResult) -> bool | None:
    """Whether a command ran in the OS sandbox; None when nothing ran or the tool is not a command."""
    value = result.metadata.get("sandboxed")
    return value if isinstance(value, bool) and "exit_code" in result.metadata else None


def review_list(checkpoints: CheckpointStore, run_id: str) -> tuple[dict[str, str], ...]:
    """Each file the run changed with its diff, for the review list (capped: the run record is saved)."""
    try:
        changes = checkpoints.review(run_id)
    except Exception:  # the review is an extra; the run's record must still be written
        get_logger(__name__).exception("review_failed", run_id=run_id)
        return ()
    out = []
    kept = changes[:_REVIEW_FILES]
    if changes and changes[-1].path == KERNEL_ENTRY and changes[-1] not in kept:  # never cut the variables
        kept = [*kept[:-1], changes[-1]]
    for change in kept:
        lines = change.diff.splitlines(keepends=True)
        diff = "".join(lines[:_REVIEW_DIFF_LINES])
        if len(lines) > _REVIEW_DIFF_LINES:
            diff += f"[... {len(lines) - _REVIEW_DIFF_LINES} more lines: %architect review {run_id}]\n"
        out.append({"path": change.path, "status": change.status, "diff": diff})
    return tuple(out)


def relative(path: Path, root: Path) -> str:
    """`path` relative to `root`, with '/' separators (unchanged if it lies outside)."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def thread_info(thread: Thread) -> ThreadInfo:
    """What the run header says about the conversation it continues, before the run adds to it."""
    last = thread.last_run
    fork = thread.forked_from
    just_forked = fork is not None and last is not None and last.run_id == fork.run_id
    return ThreadInfo(
        name=thread.name,
        id=thread.id,
        follows_run=last.run_id if last is not None and not just_forked else None,
        forked_from=fork.describe() if just_forked and fork is not None else None,
        runs=len(thread.runs),
        turns=thread.turns,
        context_tokens=thread.context_tokens(),
        cost_usd=round(thread.cost_usd, 6),
    )

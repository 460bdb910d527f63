"""`Thread`: a conversation that goes on across runs (cells): follow-ups, forks, and what each run added.

A thread holds the messages every run added, in the provider-neutral OpenAI format and without the system
prompt (each run puts its own agent's prompt first, so a `plan` thread can be continued by a `build` run).
It also remembers where each run and each of its steps ended, so a fork can start a new thread from the
conversation as it was after any run, or any step of it.

The thread keeps the messages whole; the loop compresses its own working copy when it nears the model's
context window. Saving threads to disk is `architect_nb.agent.conversation.thread_store`.
"""

from __future__ import annotations

import copy
import json
import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from architect_nb.execution.checkpoints.records import UndoReport

__all__ = ["ForkPoint", "Thread", "ThreadError", "ThreadRun", "new_thread_id", "undo_note"]

Message = dict[str, Any]


class ThreadError(ValueError):
    """A thread or fork cannot be used as asked. The message is one line and says what to do."""


def new_thread_id() -> str:
    return secrets.token_hex(6)


@dataclass(kw_only=True)
class ThreadRun:
    """One run's part of a thread: `start` is the index of its first message (its task), `step_ends` the
    index just past each step's messages, `end` the index just past its last message."""

    run_id: str
    task: str
    agent: str = "build"
    model: str = ""
    start: int = 0
    step_ends: list[int] = field(default_factory=list)
    end: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    status: str = "running"
    at: float = field(default_factory=time.time)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ThreadRun:
        return cls(
            run_id=str(data["run_id"]),
            task=str(data.get("task", "")),
            agent=str(data.get("agent", "build")),
            model=str(data.get("model", "")),
            start=int(data.get("start", 0)),
            step_ends=[int(n) for n in data.get("step_ends", [])],
            end=int(data.get("end", 0)),
            tokens=int(data.get("tokens", 0)),
            cost_usd=float(data.get("cost_usd", 0.0)),
            status=str(data.get("status", "")),
            at=float(data.get("at", 0.0)),
        )


@dataclass(frozen=True, kw_only=True)
class ForkPoint:
    """Where a forked thread came from: a run of another thread, after all of it or after one step."""

    thread: str
    thread_id: str
    run_id: str
    step: int | None = None

    def describe(self) -> str:
        at = f"step {self.step} of run {self.run_id}" if self.step is not None else f"run {self.run_id}"
        return f"{at} (thread '{self.thread}')"


class Thread:
    """The messages and runs of one conversation.

    Args:
        name: What the person calls it (`--thread NAME`); names need not be unique on disk, ids are.
        workspace: The workspace root it belongs to; a thread is refused in another workspace.
    """

    def __init__(
        self,
        *,
        name: str,
        workspace: str,
        thread_id: str | None = None,
        created_at: float | None = None,
        messages: list[Message] | None = None,
        runs: list[ThreadRun] | None = None,
        forked_from: ForkPoint | None = None,
        notes: list[str] | None = None,
    ) -> None:
        self.id = thread_id or new_thread_id()
        self.name = name
        self.workspace = workspace
        self.created_at = time.time() if created_at is None else created_at
        self.messages: list[Message] = messages if messages is not None else []
        self.runs: list[ThreadRun] = runs if runs is not None else []
        self.forked_from = forked_from
        self.notes: list[str] = notes if notes is not None else []  # told to the model at the next run
        self._turns = sum(1 for m in self.messages if m.get("role") == "assistant")
        self._chars = sum(_size(m) for m in self.messages)  # kept up to date, so the header costs nothing

    # ------------------------------------------------------------------ what the header shows

    @property
    def turns(self) -> int:
        """Assistant turns so far."""
        return self._turns

    @property
    def cost_usd(self) -> float:
        return sum(run.cost_usd for run in self.runs)

    @property
    def tokens(self) -> int:
        """Tokens the model was billed over every run of the thread."""
        return sum(run.tokens for run in self.runs)

    @property
    def last_run(self) -> ThreadRun | None:
        return self.runs[-1] if self.runs else None

    @property
    def todo(self) -> list[tuple[str, str]]:
        """The model's checklist as the conversation left it: (status, text) of each item."""
        from architect_nb.tools.todo import todo_in_messages

        return list(todo_in_messages(self.messages))

    @property
    def last_task(self) -> str:
        return next((run.task for run in reversed(self.runs) if run.task), "")

    def context_tokens(self) -> int:
        """About how many tokens the thread's messages add to the next request (four characters a token)."""
        return self._chars // 4

    # ------------------------------------------------------------------ a run adds to the thread

    def begin_run(self, *, run_id: str, task: str, agent: str, model: str) -> Message | None:
        """Start a run's part. Returns the user message the run begins with: its task, with any note the
        model must hear first (files an undo restored); None for a fork that continues without a task."""
        run = ThreadRun(run_id=run_id, task=task, agent=agent, model=model, start=len(self.messages))
        self.runs.append(run)
        text = "\n\n".join([*self.notes, task] if task else self.notes)
        self.notes = []
        if not text:
            return None
        message: Message = {"role": "user", "content": text}
        self.messages.append(message)
        self._chars += _size(message)
        return message

    def add(self, messages: Sequence[Message], *, step_done: bool = False) -> None:
        """Append what the current run said and got. Copies: the loop's compression rewrites the contents
        of its own messages in place, never the thread's."""
        for message in messages:
            self.messages.append(dict(message))
            self._chars += _size(message)
            if message.get("role") == "assistant":
                self._turns += 1
        if step_done and self.runs:
            self.runs[-1].step_ends.append(len(self.messages))

    def end_run(self, *, status: str, tokens: int, cost_usd: float) -> None:
        run = self.runs[-1]
        run.end, run.status, run.tokens, run.cost_usd = len(self.messages), status, tokens, cost_usd

    def turns_before(self, run_id: str) -> int:
        """Assistant turns the thread held before `run_id` began."""
        run = self.find_run(run_id)
        return sum(1 for m in self.messages[: run.start] if m.get("role") == "assistant")

    # ------------------------------------------------------------------ forks

    def find_run(self, run_id: str) -> ThreadRun:
        for run in self.runs:
            if run.run_id == run_id:
                return run
        raise ThreadError(f"thread '{self.name}' has no run {run_id!r}")

    def fork(self, run_id: str, step: int | None, *, name: str) -> Thread:
        """A new thread holding this one's conversation as it was after `run_id` (or after its `step`)."""
        run = self.find_run(run_id)
        if step is None:
            cut = run.end if run.end else len(self.messages)
        else:
            if not 1 <= step <= len(run.step_ends):
                steps = len(run.step_ends)
                raise ThreadError(
                    f"run {run_id} has {steps} step{'s' if steps != 1 else ''}; "
                    f"fork at a step from 1 to {steps}, or at the whole run (--fork {run_id})"
                )
            cut = run.step_ends[step - 1]
        runs = []
        for earlier in self.runs:
            if earlier.start >= cut:
                break
            kept = ThreadRun.from_dict(asdict(earlier))
            kept.step_ends = [n for n in kept.step_ends if n <= cut]
            kept.end = min(kept.end or cut, cut)
            runs.append(kept)
        return Thread(
            name=name,
            workspace=self.workspace,
            messages=copy.deepcopy(self.messages[:cut]),
            runs=runs,
            forked_from=ForkPoint(thread=self.name, thread_id=self.id, run_id=run_id, step=step),
        )

    def __repr__(self) -> str:
        return f"<Thread {self.name!r} {self.id}: {len(self.runs)} run(s), {self.turns} turn(s)>"


def _size(message: Mapping[str, Any]) -> int:
    return len(json.dumps(message, default=str, ensure_ascii=False)) + 2


def undo_note(report: UndoReport) -> str:
    """What the model is told at the next turn after a run of its thread was undone."""
    parts = []
    if report.restored:
        parts.append(f"restored to how they were before it: {', '.join(report.restored)}")
    if report.removed:
        parts.append(f"removed (the run had created them): {', '.join(report.removed)}")
    what = "; ".join(parts) or "no files needed restoring"
    return (
        f"[Note: the user undid run {report.run_id}. Files {what}. The changes that run made to them are "
        "gone, whatever the conversation above says.]"
    )

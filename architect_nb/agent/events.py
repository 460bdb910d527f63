"""The typed events of a run. The notebook renders them live; stored, they are the run's JSON transcript.

Every event is a frozen dataclass with a `kind` tag and `to_dict()`. `Transcript` collects them and merges
text deltas, so a saved transcript holds each assistant message once.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

__all__ = [
    "RUN_MIME_TYPE",
    "TRANSCRIPT_VERSION",
    "AgentEvent",
    "CallStatus",
    "ConfirmationAnswered",
    "ConfirmationAsked",
    "CostUpdate",
    "EventSink",
    "ModelReply",
    "ModelRequest",
    "RunFinished",
    "RunStarted",
    "RunStatus",
    "RunWarning",
    "StepStarted",
    "StopReason",
    "TextDelta",
    "ThinkingDelta",
    "ThreadInfo",
    "ToolCallRequested",
    "ToolResultEvent",
    "Transcript",
]

RUN_MIME_TYPE = "application/vnd.architect-nb.run+json"
TRANSCRIPT_VERSION = 1

StopReason = Literal[
    "completed",
    "max_steps",
    "budget",
    "timeout",
    "aborted",
    "interrupted",
    "llm_error",
    "script_error",
    "refused",  # the provider refused to answer (a content policy); the message has its words
    "internal_error",  # an exception in architect-nb or the model client; the message has its type and text
]
#: How a run ended: it completed, it stopped at a limit (steps, budget, time), or it failed.
RunStatus = Literal["success", "partial", "failed"]
#: How one tool call ended: ran (ok or failed), or refused by a person, a rule, a dry run or an abort.
#: How a call ended, as the record and the timeline show it: the values of `CallOutcome`.
CallStatus = Literal[
    "ok", "failed", "invalid", "denied", "blocked", "aborted", "dry_run", "skipped", "needs_person"
]


@dataclass(frozen=True, kw_only=True)
class AgentEvent:
    kind: ClassVar[str] = "event"
    run_id: str
    at: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["kind"] = self.kind
        return data


@dataclass(frozen=True, kw_only=True)
class ThreadInfo:
    """The conversation a run continues, as it was when the run started (what the run header shows).

    Attributes:
        name: The thread's name; `id` its id.
        follows_run: The run this one follows up on (None for a new or just-forked thread).
        forked_from: Where a just-forked thread came from, e.g. "step 2 of run ab12... (thread 'main')".
        runs, turns: Runs and assistant turns the thread held before this run.
        context_tokens: About how many tokens the earlier conversation adds to each request.
        cost_usd: What the thread's earlier runs cost.
    """

    name: str
    id: str
    follows_run: str | None = None
    forked_from: str | None = None
    runs: int = 0
    turns: int = 0
    context_tokens: int = 0
    cost_usd: float = 0.0


@dataclass(frozen=True, kw_only=True)
class RunStarted(AgentEvent):
    kind: ClassVar[str] = "run_started"
    task: str
    agent: str
    model: str
    mode: str
    dry_run: bool
    workspace: str
    tools: tuple[str, ...]
    thread: ThreadInfo | None = None
    instructions: tuple[str, ...] = ()  # the project's instruction files in the prompt, with their sizes
    todo: tuple[str, ...] = ()  # the checklist the thread carries, as '[ ] item' lines


@dataclass(frozen=True, kw_only=True)
class StepStarted(AgentEvent):
    kind: ClassVar[str] = "step_started"
    step: int


@dataclass(frozen=True, kw_only=True)
class TextDelta(AgentEvent):
    kind: ClassVar[str] = "text_delta"
    step: int
    text: str


@dataclass(frozen=True, kw_only=True)
class ThinkingDelta(AgentEvent):
    """Part of what the model thought before it answered (Claude's thinking, a reasoning model's reasoning),
    as it arrives; consecutive ones of a step are merged in the transcript."""

    kind: ClassVar[str] = "thinking_delta"
    step: int
    text: str


@dataclass(frozen=True, kw_only=True)
class ToolCallRequested(AgentEvent):
    kind: ClassVar[str] = "tool_call"
    step: int
    call_id: str
    tool: str
    arguments: dict[str, Any]
    #: The arguments as the model wrote them, when they could not be read (the call is not run).
    raw_arguments: str | None = None


@dataclass(frozen=True, kw_only=True)
class ConfirmationAsked(AgentEvent):
    kind: ClassVar[str] = "confirmation_asked"
    call_id: str
    tool: str
    arguments: dict[str, Any]
    sensitivity: str
    preview: str | None
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class ConfirmationAnswered(AgentEvent):
    kind: ClassVar[str] = "confirmation_answered"
    call_id: str
    tool: str
    decision: str
    reason: str = ""


@dataclass(frozen=True, kw_only=True)
class ToolResultEvent(AgentEvent):
    kind: ClassVar[str] = "tool_result"
    step: int
    call_id: str
    tool: str
    status: CallStatus
    success: bool
    output: str
    error: str | None
    diff: str | None
    hooks: tuple[dict[str, Any], ...]
    duration_s: float
    images: tuple[dict[str, str], ...] = ()  # PNGs a run_python call made: {"mime", "data" (base64), "alt"}
    changed_files: tuple[str, ...] = ()  # what the call changed in the workspace (from its snapshots)
    #: The person's variables the call changed (`tools.state_snapshot.StateChange`): run_python, run_cell.
    changed_state: tuple[dict[str, Any], ...] = ()
    #: For commands: whether it ran in the OS sandbox (None for other tools, and for commands not run).
    sandboxed: bool | None = None


@dataclass(frozen=True, kw_only=True)
class CostUpdate(AgentEvent):
    kind: ClassVar[str] = "cost"
    step: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    total_tokens: int
    total_cost_usd: float
    priced: bool
    cached_tokens: int = 0  # of prompt_tokens, read from the provider's prompt cache
    total_cached_tokens: int = 0
    reasoning_tokens: int = 0  # of completion_tokens, spent thinking
    total_reasoning_tokens: int = 0


@dataclass(frozen=True, kw_only=True)
class ModelRequest(AgentEvent):
    """What the model is sent at a step, for the inspector and the context meter
    (`agent.conversation.inspector`).

    `request` holds content hashes: `tools`, `keep` (messages kept from the previous request), `add` (the
    hashes after those) and `messages` (how many in all); `parts` the contents not sent in an earlier request.
    `meter` is the context by part (`agent.conversation.context_meter`), with `compressed` saying what
    compression removed just before, if it ran.
    """

    kind: ClassVar[str] = "model_request"
    step: int
    request: dict[str, Any]
    parts: dict[str, Any]
    meter: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        # Built fresh for this event and never changed after (the parts are copies of the messages): no deep
        # copy, which for the first request's tool schemas cost more than the rest of the step.
        return {
            "run_id": self.run_id,
            "at": self.at,
            "step": self.step,
            "request": self.request,
            "parts": self.parts,
            "meter": self.meter,
            "kind": self.kind,
        }


@dataclass(frozen=True, kw_only=True)
class ModelReply(AgentEvent):
    """The model's raw reply at a step: its text, calls with their arguments as written, thinking, usage."""

    kind: ClassVar[str] = "model_reply"
    step: int
    content: str | None
    tool_calls: tuple[dict[str, Any], ...]
    thinking: str
    finish_reason: str
    usage: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class RunWarning(AgentEvent):
    kind: ClassVar[str] = "warning"
    message: str
    category: str = "general"


@dataclass(frozen=True, kw_only=True)
class RunFinished(AgentEvent):
    kind: ClassVar[str] = "run_finished"
    status: RunStatus
    stop_reason: StopReason
    message: str
    steps: int
    final_text: str
    files_changed: tuple[str, ...]
    total_tokens: int
    total_cost_usd: float
    duration_s: float
    undo_note: str = ""  # what undo does not cover (files over the size limit, calls with no snapshot)
    changes: tuple[dict[str, str], ...] = ()  # for review: each changed file's path, status and diff
    total_cached_tokens: int = 0  # of total_tokens, input read from the provider's prompt cache
    total_reasoning_tokens: int = 0  # of total_tokens, output spent thinking


EventSink = Callable[[AgentEvent], None]
_MERGED = frozenset({TextDelta.kind, ThinkingDelta.kind})


class Transcript:
    """All events of one run, in order. `to_list()` merges consecutive text (or thinking) deltas of a step.

    The merged list is built as events arrive, so `to_list()`, `to_payload()` and `since()` never convert or
    merge the whole run again: a long run's live view and its hooks' transcript cost the same at step 400 as
    at step 4.
    """

    def __init__(self) -> None:
        self.events: list[AgentEvent] = []
        self._merged: list[dict[str, Any]] = []
        self._seen = 0  # events already in `_merged`

    def __call__(self, event: AgentEvent) -> None:
        self.events.append(event)
        self._catch_up()

    def __iter__(self) -> Iterator[AgentEvent]:
        return iter(self.events)

    @property
    def size(self) -> int:
        """How many merged events `to_list()` holds."""
        self._catch_up()
        return len(self._merged)

    def _catch_up(self) -> None:
        if self._seen > len(self.events):  # someone replaced the events: start over
            self._merged, self._seen = [], 0
        for event in self.events[self._seen :]:
            data = event.to_dict()
            last = self._merged[-1] if self._merged else None
            if (
                data["kind"] in _MERGED
                and last is not None
                and last["kind"] == data["kind"]
                and last["step"] == data["step"]
            ):
                last["text"] += data["text"]
            else:
                self._merged.append(data)
        self._seen = len(self.events)

    def to_list(self) -> list[dict[str, Any]]:
        return self.since(0)

    def since(self, start: int, stop: int | None = None) -> list[dict[str, Any]]:
        """The merged events from position `start` (up to `stop`), as copies: changing them leaves the
        transcript alone."""
        self._catch_up()
        return [dict(data) for data in self._merged[start:stop]]

    def to_payload(self) -> dict[str, Any]:
        """The `application/vnd.architect-nb.run+json` payload: `{"version", "run_id", "events"}`."""
        run_id = self.events[0].run_id if self.events else ""
        return {"version": TRANSCRIPT_VERSION, "run_id": run_id, "events": self.to_list()}

    @property
    def finished(self) -> RunFinished | None:
        return next((e for e in reversed(self.events) if isinstance(e, RunFinished)), None)

"""What the saved output of a run says about its events, whatever draws it (HTML or plain text).

`run_view` turns the transcript's events into one view per thing shown: the run's header, the model's
thinking, its text, a tool call, a person's answer, a warning and the summary, then the footer. Every title,
label, status word and note is decided here, so the two renderers (`render` draws HTML, `text_render` plain
text) only lay the words out and cannot drift apart. Nothing here is markup or escaped; the renderers do
that. A `Code` piece is something a person types or reads exactly (a magic, a path): the HTML sets it in
`<code>`, the text as is.

The plain text is the summary a terminal or a CI log reads: what only the HTML shows (arguments, output,
errors, diffs, hook results, images, the thinking itself) is carried raw, and the HTML lays it out (folding,
cutting, colouring). Such fields are marked `HTML_ONLY`; both renderers say every other field.
"""

from __future__ import annotations

import base64
import contextlib
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from architect_nb.tools.state_snapshot import KERNEL_ENTRY, change_words

__all__ = [
    "FORK_TASK",
    "HTML_ONLY",
    "NOT_RUN",
    "RUNNING",
    "TASK_LABEL",
    "WARNING_MARK",
    "CallView",
    "ChangeView",
    "Code",
    "Decision",
    "Header",
    "Hook",
    "ModelCall",
    "RunView",
    "Said",
    "Summary",
    "Thought",
    "Todo",
    "TodoTracker",
    "View",
    "WarningView",
    "Words",
    "call_view",
    "hook_view",
    "meter_text",
    "run_view",
    "summary_view",
    "thought_view",
    "thread_line",
    "tokens_text",
    "typed_path",
]

TASK_LABEL = "Task"
FORK_TASK = "(carries on from the fork's step)"  # a fork's run may have no task of its own
RUNNING, NOT_RUN = "running", "not run"  # a call without a result, while the run goes on and after it ended
WARNING_MARK = "⚠"
NOTICE_MARK = "ℹ"  # something the run did that is worth a line, not a problem
_DECISIONS = {"approve": "approved", "deny": "denied", "abort": "aborted the run"}
#: Field metadata: the HTML shows this field and the plain text leaves it out.
HTML_ONLY: Mapping[str, bool] = {"html_only": True}


class Code(str):
    """Text a person types or reads exactly (a magic, a path); the HTML sets it in `<code>`."""

    __slots__ = ()


#: Words said in order: plain text and `Code` pieces. The text joins them; the HTML escapes each.
Words = tuple[str, ...]


def _variable(change: Mapping[str, Any]) -> str:
    """One changed name: "df mutated (DataFrame 3×2 [a:int64, b:float64] → DataFrame 3×1 [a:int64])"; with
    "(not undoable: why)" when undo cannot restore it."""
    text = f"{change.get('name', '?')} {change.get('kind', '')} ({change_words(change)})"
    return text if change.get("restorable", True) else f"{text} (not undoable: {change.get('why', '')})"


def _listed(label: str, items: Sequence[str]) -> Words:
    """`label: a, b` with each item as `Code`."""
    words: list[str] = [f"{label}: "]
    for i, item in enumerate(items):
        words += [", "] if i else []
        words.append(Code(item))
    return tuple(words)


@dataclass(frozen=True, kw_only=True)
class Header:
    """The run's first lines: who runs it with what, the conversation it belongs to, and its task."""

    title: str  # "architect run ab12 · build · model · mode yolo · dry run"
    thread: str  # "" outside a named thread
    task: str
    instructions: str = ""  # "Instructions: AGENTS.md (1,204 chars)", or "" without any
    task_label: str = TASK_LABEL


@dataclass(frozen=True, kw_only=True)
class Todo:
    """The model's checklist as it stands: shown under the header, live and in the saved output."""

    title: str  # "Todo · 2 of 5 done"
    items: tuple[tuple[str, str], ...]  # (status, text): pending, in_progress or done


TODO_MARKS = {"pending": "☐", "in_progress": "◐", "done": "☑"}


class TodoTracker:
    """Follows a run's events to the checklist they leave: the thread's at the start, then each `todo`
    call that succeeded. Fed one event at a time, so the live view pays nothing per redraw."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] | None = None  # None: the run has no list
        self._asked: dict[str, object] = {}

    def feed(self, event: Mapping[str, Any]) -> None:
        from architect_nb.tools.todo import parse_items

        kind = event.get("kind")
        if kind == "run_started" and event.get("todo"):
            with contextlib.suppress(ValueError):
                self.items = list(parse_items(list(event["todo"])))
        elif kind == "tool_call" and event.get("tool") == "todo":
            self._asked[str(event.get("call_id"))] = (event.get("arguments") or {}).get("items")
        elif kind == "tool_result" and event.get("tool") == "todo" and event.get("success"):
            with contextlib.suppress(ValueError):
                self.items = list(parse_items(self._asked.get(str(event.get("call_id")))))

    def view(self) -> Todo | None:
        from architect_nb.tools.todo import done_text

        if not self.items:
            return None
        return Todo(title=f"Todo · {done_text(self.items)}", items=tuple(self.items))


@dataclass(frozen=True, kw_only=True)
class Said:
    """What the model wrote between its tool calls."""

    text: str


@dataclass(frozen=True, kw_only=True)
class Thought:
    """What the model thought before it answered: shown folded in the HTML, named in the text."""

    title: str  # "Thinking (120 words)"
    text: str = field(metadata=HTML_ONLY)


def thought_view(text: str) -> Thought:
    words = len(text.split())
    return Thought(title=f"Thinking ({words:,} word{'s' if words != 1 else ''})", text=text.strip())


@dataclass(frozen=True, kw_only=True)
class Hook:
    """A hook's result on a call: its name, ok or failed, and what it printed."""

    name: str
    status: str
    warning: str = ""
    output: str = ""


def hook_view(hook: Mapping[str, Any]) -> Hook:
    """A hook result as the engine (`HookResult.to_dict()`, with `passed`) or a hook runner reports it."""
    if "passed" in hook:
        failed = not hook["passed"]
    else:
        failed = bool(hook.get("warning")) or hook.get("exit_code") not in (0, None)
    return Hook(
        name=str(hook.get("name") or "hook"),
        status="failed" if failed else "ok",
        warning=str(hook.get("warning") or ""),
        output=str(hook.get("output") or hook.get("reason") or ""),
    )


@dataclass(frozen=True, kw_only=True)
class CallView:
    """One tool call and its result, worded by `call_view`."""

    tool: str
    status: str
    took: str  # "0.01 s", or "" before it ends
    sandbox: str  # for commands: "sandboxed" or "not sandboxed"; "" for other tools
    changed: Words  # "Changed: a, b", or ()
    variables: Words  # "Your variables: df mutated (DataFrame 3×2 → 3×1), ...", or ()
    rewind: Words  # a finished run's step that changed files ends with the magic that rewinds it, or ()
    arguments: Mapping[str, Any] = field(metadata=HTML_ONLY)
    #: The arguments as the model wrote them, when they could not be read (the call was not run).
    raw_arguments: str | None = field(default=None, metadata=HTML_ONLY)
    sandboxed: bool | None = field(default=None, metadata=HTML_ONLY)  # the colour of `sandbox`
    output: str = field(default="", metadata=HTML_ONLY)
    error: str | None = field(default=None, metadata=HTML_ONLY)
    diff: str | None = field(default=None, metadata=HTML_ONLY)
    hooks: Sequence[Hook] = field(default=(), metadata=HTML_ONLY)
    images: Sequence[Mapping[str, Any]] = field(default=(), metadata=HTML_ONLY)


def call_view(
    *,
    tool: str,
    arguments: Mapping[str, Any],
    status: str = RUNNING,
    duration_s: float | None = None,
    sandboxed: bool | None = None,
    changed_files: Sequence[str] = (),
    changed_state: Sequence[Mapping[str, Any]] = (),
    output: str = "",
    error: str | None = None,
    diff: str | None = None,
    hooks: Sequence[Mapping[str, Any]] = (),
    images: Sequence[Mapping[str, Any]] = (),
    rewind: Words = (),
    raw_arguments: str | None = None,
) -> CallView:
    """A tool call as its `tool_call` and `tool_result` events describe it."""
    from architect_nb.execution.confirmation.confirmers import show

    return CallView(
        tool=tool,
        status=status,
        took=f"{duration_s:.2f} s" if duration_s is not None else "",
        sandbox="" if sandboxed is None else "sandboxed" if sandboxed else "not sandboxed",
        changed=_listed("Changed", [show(f) for f in changed_files]) if changed_files else (),
        variables=_listed("Your variables", [_variable(c) for c in changed_state]) if changed_state else (),
        rewind=rewind,
        arguments=arguments,
        raw_arguments=raw_arguments,
        sandboxed=sandboxed,
        output=output,
        error=error,
        diff=diff,
        hooks=tuple(hook_view(hook) for hook in hooks),
        images=images,
    )


@dataclass(frozen=True, kw_only=True)
class Decision:
    """A person's answer to a confirmation: "edit_file: denied: use a test file"."""

    tool: str
    decision: str
    reason: str = ""


@dataclass(frozen=True, kw_only=True)
class WarningView:
    message: str
    mark: str = WARNING_MARK


@dataclass(frozen=True, kw_only=True)
class ChangeView:
    """One file of the review list: its status, its diff and the magic that reverts it."""

    path: str  # shown: hidden characters as escapes
    status: str
    diff: str = field(metadata=HTML_ONLY)
    revert: Words  # "revert: %architect revert RUN PATH"


@dataclass(frozen=True, kw_only=True)
class Summary:
    """The end of the run: how it ended, what it cost, what undo does not cover, and the review list."""

    status: str
    message: str
    stop: str  # "(stop reason: completed)"
    files: Words  # "Files changed: a, b" when there is no review list to name them, else ()
    cost: str  # "3 step(s) · 12,400 tokens, 9,800 cached · $0.0012 · 1.2 s"
    note: str  # what undo does not cover, or ""
    review_title: str  # "Review: 4 file(s) changed", or "" without a review list
    revert_all: Words
    changes: tuple[ChangeView, ...]
    more_files: Words  # "2 more file(s) not listed: %architect review RUN lists them all.", or ()
    todo: str = ""  # "Todo: 3 of 4 done" when the run kept a checklist
    # The HTML shows the review's diffs; these say why one is not there.
    no_text_diff: str = field(default="No text diff (binary, empty or permissions only).", metadata=HTML_ONLY)
    diff_elsewhere: Words = field(default=(), metadata=HTML_ONLY)  # when the review's diffs are too long


@dataclass(frozen=True, kw_only=True)
class ModelCall:
    """One model call: how many messages it sent and how many were new, its tokens, and the context by part
    against the window. The whole request is in the run's transcript (`inspect`). HTML only: the plain text
    summary stays a summary."""

    title: str = field(metadata=HTML_ONLY)  # "Step 2 · the model got 5 messages (2 new) · 11 in · 7 out"
    meter: str = field(metadata=HTML_ONLY)  # "Context 3,400 of 128,000 tokens: system 900 · tools ..."
    compressed: str = field(default="", metadata=HTML_ONLY)
    inspect: Words = field(default=(), metadata=HTML_ONLY)


_PART_NAMES = {
    "system": "system prompt",
    "tools": "tool schemas",
    "earlier": "earlier cells",
    "messages": "this run",
    "tool_results": "tool results",
}


def meter_text(meter: Mapping[str, Any] | None) -> str:
    """The context by part, as the run header and each model call say it."""
    if not isinstance(meter, Mapping) or not isinstance(meter.get("parts"), Mapping):
        return ""
    parts = meter["parts"]
    total = sum(int(v) for v in parts.values() if isinstance(v, int))
    window = meter.get("window")
    share = (
        f" of {int(window):,} ({total / int(window):.0%})" if isinstance(window, int) and window > 0 else ""
    )
    shown = " · ".join(f"{name} {int(parts.get(key) or 0):,}" for key, name in _PART_NAMES.items())
    return f"context {total:,} tokens{share}: {shown}"


def _model_call(request: Mapping[str, Any], cost: Mapping[str, Any] | None, run_id: str) -> ModelCall:
    step = request.get("step")
    sent = request.get("request") or {}
    count = int(sent.get("messages") or 0)
    new = sent.get("new")
    if new is None:  # a whole record (the transcript file, or a run still in the kernel): its added hashes
        new = len(sent.get("add") or ()) if sent.get("keep") else count
    title = f"Step {step} · the model got {count} message{'s' if count != 1 else ''} ({new} new)"
    if cost:  # the step's usage (its CostUpdate comes after the request)
        title += (
            f" · {int(cost.get('prompt_tokens') or 0):,} in"
            + (f" ({int(cost['cached_tokens']):,} cached)" if cost.get("cached_tokens") else "")
            + f" · {int(cost.get('completion_tokens') or 0):,} out"
        )
    meter = request.get("meter") or {}
    inspect: Words = ("whole: ", Code(f"%architect inspect {run_id}:{step}")) if run_id else ()
    return ModelCall(
        title=title, meter=meter_text(meter), compressed=str(meter.get("compressed") or ""), inspect=inspect
    )


View = Header | Todo | Thought | Said | CallView | Decision | WarningView | Summary | ModelCall


@dataclass(frozen=True, kw_only=True)
class RunView:
    """A run's views in the order of its events, and the footer of a run that can be undone."""

    parts: tuple[View, ...]
    footer: Words  # "Run ab12 · undo with %architect undo ab12 · review with ...", or ()


def tokens_text(total: object, cached: object = 0, thinking: object = 0) -> str:
    """ "12,400 tokens, 9,800 cached, 1,200 thinking": the tokens used, how many of them the provider's prompt
    cache served (priced at its cached rate), and how many the model spent thinking (priced as output)."""
    text = f"{total if isinstance(total, int) else 0:,} tokens"
    text += f", {int(cached):,} cached" if isinstance(cached, int) and cached > 0 else ""
    return text + (f", {int(thinking):,} thinking" if isinstance(thinking, int) and thinking > 0 else "")


def typed_path(path: str) -> str:
    """A path as a person types it after `%architect revert RUN` (the magic splits its line like a shell):
    bare when safe, quoted otherwise, and as `b64:` when it holds characters that end a line or cannot be
    seen. The labextension's `typedPath` makes the same text."""
    from architect_nb.execution.confirmation.confirmers import show

    if show(path) != path:
        try:
            return "b64:" + base64.urlsafe_b64encode(path.encode("utf-8")).decode("ascii").rstrip("=")
        except UnicodeEncodeError:  # a name that is not valid UTF-8 cannot be sent at all
            return shlex.quote(path)
    return shlex.quote(path)


def thread_line(thread: object) -> str:
    """The header's line about the conversation: "continues run ab12..., thread `refactor` · 2 runs, ..."."""
    if not isinstance(thread, Mapping) or not thread.get("name"):
        return ""
    name = f"thread `{thread['name']}`"
    if thread.get("forked_from"):
        where = f"forked from {thread['forked_from']} into {name}"
    elif thread.get("follows_run"):
        where = f"continues run {thread['follows_run']}, {name}"
    else:
        return f"new {name}"
    runs, turns = int(thread.get("runs") or 0), int(thread.get("turns") or 0)
    size = (
        f"{runs} earlier run{'s' if runs != 1 else ''}, {turns} turn{'s' if turns != 1 else ''}, "
        f"~{int(thread.get('context_tokens') or 0):,} tokens of context"
    )
    cost = float(thread.get("cost_usd") or 0.0)
    return f"{where} · {size}" + (f", ${cost:.4f} so far" if cost else "")


def _lists_variables(finished: Mapping[str, Any]) -> bool:
    """Whether the run's review lists the person's variables (`KERNEL_ENTRY`) beside its files."""
    return any(
        isinstance(c, Mapping) and c.get("path") == KERNEL_ENTRY for c in finished.get("changes") or ()
    )


def _review_title(files: int, variables: bool) -> str:
    """ "Review: 2 file(s) changed", "Review: 1 file(s) and your variables changed", "Review: your variables
    changed" (as the labextension words it)."""
    if not variables:
        return f"Review: {files} file(s) changed"
    return "Review: " + (f"{files} file(s) and " if files else "") + "your variables changed"


def summary_view(finished: Mapping[str, Any], todo: Sequence[tuple[str, str]] | None = None) -> Summary:
    """The `run_finished` event's summary. Without a review list (`changes`) it names the files changed;
    with a todo list, how many of its items were done."""
    from architect_nb.execution.confirmation.confirmers import show
    from architect_nb.tools.todo import done_text

    run_id = str(finished.get("run_id") or "")
    files = [show(str(f)) for f in finished.get("files_changed") or ()]
    changes = tuple(
        ChangeView(
            path="Your variables (kernel)" if c["path"] == KERNEL_ENTRY else show(str(c["path"])),
            status=str(c.get("status", "modified")),
            diff=str(c.get("diff") or ""),
            revert=("revert: ", Code(f"%architect revert {run_id} {typed_path(str(c['path']))}")),
        )
        for c in finished.get("changes") or ()
        if isinstance(c, Mapping) and c.get("path")
    )
    variables = _lists_variables(finished)
    count = max(len(files), len(changes) - variables)
    review = Code(f"%architect review {run_id}")
    tokens = tokens_text(
        finished.get("total_tokens", 0),
        finished.get("total_cached_tokens", 0),
        finished.get("total_reasoning_tokens", 0),
    )
    cost = (
        f"{finished.get('steps', 0)} step(s) · {tokens} · "
        f"${float(finished.get('total_cost_usd', 0.0)):.4f} · {float(finished.get('duration_s', 0.0)):.1f} s"
    )
    return Summary(
        status=str(finished.get("status", "")),
        message=str(finished.get("message", "")),
        todo=f"Todo: {done_text(todo)}" if todo else "",
        stop=f"(stop reason: {finished.get('stop_reason', '')})",
        files=() if changes else _listed("Files changed", files) if files else ("Files changed: none",),
        cost=cost,
        note=str(finished.get("undo_note") or ""),
        review_title=_review_title(count, variables) if changes else "",
        revert_all=("revert all: ", Code(f"%architect undo {run_id}")),
        changes=changes,
        more_files=(
            (f"{count - len(changes)} more file(s) not listed: ", review, " lists them all.")
            if changes and count > len(changes)
            else ()
        ),
        diff_elsewhere=("Diff not shown here (the review is long): ", review, " prints it."),
    )


def run_view(events: Sequence[Mapping[str, Any]], run_id: str = "") -> RunView:
    """The views of a run's events (a transcript payload's `events`); `run_id` when the events lack it."""
    results = {str(e.get("call_id")): e for e in events if e.get("kind") == "tool_result"}
    finished = [e for e in events if e.get("kind") == "run_finished"]
    rewinds = _rewinds(events, results) if finished else {}
    costs = {e.get("step"): e for e in events if e.get("kind") == "cost"}
    parts: list[View] = []
    todo = TodoTracker()
    for event in events:
        todo.feed(event)
        kind = event.get("kind")
        if kind == "model_request":
            parts.append(_model_call(event, costs.get(event.get("step")), str(event.get("run_id") or run_id)))
        elif kind == "run_started":
            parts.append(_header(event, run_id))
        elif kind == "thinking_delta" and str(event.get("text", "")).strip():
            parts.append(thought_view(str(event["text"])))
        elif kind == "text_delta" and str(event.get("text", "")).strip():
            parts.append(Said(text=str(event["text"])))
        elif kind == "tool_call":
            call_id = str(event.get("call_id"))
            parts.append(_call(event, results.get(call_id), rewinds.get(call_id, ()), bool(finished)))
        elif kind == "confirmation_answered":
            decision = str(event.get("decision"))
            parts.append(
                Decision(
                    tool=str(event.get("tool")),
                    decision=_DECISIONS.get(decision, decision),
                    reason=str(event.get("reason") or ""),
                )
            )
        elif kind == "warning":
            notice = event.get("category") == "instructions_read"
            parts.append(
                WarningView(message=str(event.get("message")), mark=NOTICE_MARK if notice else WARNING_MARK)
            )
        elif kind == "run_finished":
            parts.append(summary_view(event, todo.items))
    # A run with an id that changed files or variables (the labextension draws Revert all, or Undo, for the
    # same runs).
    if (checklist := todo.view()) is not None:  # under the header: where the run stands, at a glance
        at = next((i + 1 for i, part in enumerate(parts) if isinstance(part, Header)), 0)
        parts.insert(at, checklist)
    last = finished[-1] if finished else {}
    undoable = bool(run_id) and bool(last.get("files_changed") or _lists_variables(last))
    undo, review = Code(f"%architect undo {run_id}"), Code(f"%architect review {run_id}")
    footer: Words = (f"Run {run_id} · undo with ", undo, " · review with ", review) if undoable else ()
    return RunView(parts=tuple(parts), footer=footer)


def _header(started: Mapping[str, Any], run_id: str) -> Header:
    run = started.get("run_id") or run_id
    files = started.get("instructions") or ()
    facts = [
        f"architect run {run}" if run else "architect",
        str(started.get("agent") or ""),
        str(started.get("model") or ""),
        f"mode {started['mode']}" if started.get("mode") else "",
        "dry run" if started.get("dry_run") else "",
    ]
    return Header(
        title=" · ".join(fact for fact in facts if fact),
        thread=thread_line(started.get("thread")),
        task=str(started.get("task", "")) or FORK_TASK,
        instructions=f"Instructions: {', '.join(map(str, files))}" if files else "",
    )


def _call(
    call: Mapping[str, Any], result: Mapping[str, Any] | None, rewind: Words, run_finished: bool
) -> CallView:
    tool, arguments = str(call.get("tool")), call.get("arguments") or {}
    raw = call.get("raw_arguments")
    raw = str(raw) if raw is not None else None
    if result is None:
        status = NOT_RUN if run_finished else RUNNING
        return call_view(tool=tool, arguments=arguments, status=status, raw_arguments=raw)
    sandboxed = result.get("sandboxed")
    return call_view(
        tool=tool,
        arguments=arguments,
        status=str(result.get("status", RUNNING)),
        duration_s=result.get("duration_s"),
        sandboxed=sandboxed if isinstance(sandboxed, bool) else None,
        changed_files=result.get("changed_files") or (),
        changed_state=result.get("changed_state") or (),
        output=str(result.get("output") or ""),
        error=result.get("error"),
        diff=result.get("diff"),
        hooks=result.get("hooks") or (),
        images=result.get("images") or (),
        rewind=rewind,
        raw_arguments=raw,
    )


def _rewinds(
    events: Sequence[Mapping[str, Any]], results: Mapping[str, Mapping[str, Any]]
) -> dict[str, Words]:
    """For a finished run, each step that changed files: its last call, and the magic that rewinds to before
    it (a run still going cannot be rewound; the labextension offers rewind on finished runs only)."""
    last_call: dict[int, str] = {}
    changed: set[int] = set()
    run_id = ""
    for event in events:
        if event.get("kind") != "tool_call" or not isinstance(event.get("step"), int):
            continue
        step, call_id = int(event["step"]), str(event.get("call_id"))
        run_id = run_id or str(event.get("run_id") or "")
        last_call[step] = call_id
        if results.get(call_id, {}).get("changed_files") or results.get(call_id, {}).get("changed_state"):
            changed.add(step)
    if not run_id:
        return {}
    return {
        last_call[s]: (f"Rewind to before step {s}: ", Code(f"%architect undo {run_id}:{s}"))
        for s in sorted(changed)
    }

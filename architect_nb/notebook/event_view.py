"""What the saved output of a run says about its events, whatever draws it (HTML or plain text)."""

from __future__ import annotations

import base64
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["thread_line", "tokens_text", "typed_path"]

_DECISIONS = {"approve": "approved", "deny": "denied", "abort": "aborted the run"}


def tokens_text(total: object, cached: object = 0) -> str:
    """ "12,400 tokens, 9,800 cached": the tokens used, and how many of them the provider's prompt cache
    served (priced at its cached rate)."""
    text = f"{total if isinstance(total, int) else 0:,} tokens"
    return text + (f", {int(cached):,} cached" if isinstance(cached, int) and cached > 0 else "")


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


def _changes(finished: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    raw = finished.get("changes") or ()
    return [c for c in raw if isinstance(c, Mapping) and c.get("path")]


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


def _rewinds(
    events: Sequence[Mapping[str, Any]], results: Mapping[str, Mapping[str, Any]]
) -> list[tuple[str, int, str]]:
    """For a finished run, each step that changed files: its last call, its number and the rewind magic."""
    if not any(e.get("kind") == "run_finished" for e in events):
        return []  # a run still going cannot be rewound (the labextension offers rewind on finished runs)
    last_call: dict[int, str] = {}
    changed: set[int] = set()
    run_id = ""
    for event in events:
        if event.get("kind") != "tool_call" or not isinstance(event.get("step"), int):
            continue
        step, call_id = int(event["step"]), str(event.get("call_id"))
        run_id = run_id or str(event.get("run_id") or "")
        last_call[step] = call_id
        if results.get(call_id, {}).get("changed_files"):
            changed.add(step)
    return [(last_call[s], s, f"%architect undo {run_id}:{s}") for s in sorted(changed) if run_id]


def _undoable(payload: Mapping[str, Any]) -> bool:
    """A run with an id that changed files (the labextension draws Revert all, or Undo, for the same runs)."""
    finished = [e for e in payload.get("events", []) if e.get("kind") == "run_finished"]
    return bool(payload.get("run_id")) and bool(finished and finished[-1].get("files_changed"))

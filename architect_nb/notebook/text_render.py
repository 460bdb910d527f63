"""The plain text of a run's output: its `text/plain`, for terminals and front ends without HTML."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from architect_nb.notebook.event_view import (
    _changes,
    _rewinds,
    _undoable,
    thread_line,
    tokens_text,
    typed_path,
)

__all__ = ["_plain"]


def _plain(payload: Mapping[str, Any]) -> str:
    from architect_nb.execution.confirmation.confirmers import show

    lines: list[str] = []
    results = {str(e.get("call_id")): e for e in payload["events"] if e.get("kind") == "tool_result"}
    rewinds = _rewinds(payload["events"], results)
    for event in payload["events"]:
        kind = event.get("kind")
        if kind == "run_started":
            lines.append(
                f"architect run {payload.get('run_id')} · {event.get('model')} · {event.get('mode')}"
            )
            if thread := thread_line(event.get("thread")):
                lines.append(thread)
            lines.append(f"Task: {event.get('task', '') or '(carries on from the fork step)'}")
        elif kind == "text_delta" and str(event.get("text", "")).strip():
            lines.append(str(event["text"]).strip())
        elif kind == "tool_call":
            r = results.get(str(event.get("call_id")), {})
            took = f" {r['duration_s']:.2f}s" if "duration_s" in r else ""
            sandboxed = r.get("sandboxed")
            box = " (sandboxed)" if sandboxed is True else " (not sandboxed)" if sandboxed is False else ""
            changed = (
                f"; changed {', '.join(map(show, r['changed_files']))}" if r.get("changed_files") else ""
            )
            lines.append(f"- {event.get('tool')}: {r.get('status', 'not run')}{took}{box}{changed}")
            lines += [f"  rewind to before step {s}: {m}" for c, s, m in rewinds if c == event.get("call_id")]
        elif kind == "warning":
            lines.append(f"! {event.get('message')}")
        elif kind == "run_finished":
            files = ", ".join(event.get("files_changed") or []) or "none"
            lines.append(
                f"{event.get('status')}: {event.get('message')} (stop reason: {event.get('stop_reason')}); "
                f"files changed: {files}; "
                f"{tokens_text(event.get('total_tokens'), event.get('total_cached_tokens', 0))}, "
                f"${float(event.get('total_cost_usd', 0.0)):.4f}"
            )
            if note := event.get("undo_note"):
                lines.append(str(note))
            run_id = payload.get("run_id")
            lines += [
                f"  {c.get('status')} {show(str(c['path']))}: "
                f"%architect revert {run_id} {typed_path(str(c['path']))}"
                for c in _changes(event)
            ]
    if _undoable(payload):
        lines.append(f"Undo this run: %architect undo {payload['run_id']}")
    return "\n".join(lines)

"""What the model saw and said at every step: each request, its raw reply and its usage, for the inspector.

`RequestLog.record` turns one request (system prompt, tool schemas, messages) into a small record: the
content hash of the system prompt and of the schemas, how many of the previous request's messages it keeps
(`keep`), and the hashes of the messages after those (`add`). Each part (a message, the schema list) is
stored once, the first time it is sent, in the record's `parts`; a step then adds its new messages and a few
hashes, whatever the length of the run. After compression or an edit the log starts the list over (`keep`
0), and the messages it holds already are found by their hashes.

`rebuild` reads the records of a transcript back into the request of one step, with the messages new since
the previous request marked; `compact` is the short form a saved notebook keeps. Nothing is redacted here:
the transcript is redacted as a whole where it is saved or shown.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["RequestLog", "compact", "part_hash", "rebuild", "reply_record"]

Message = Mapping[str, Any]


def part_hash(part: object) -> str:
    """A short content hash of a JSON-able part (sorted keys: the same content, the same hash)."""
    text = json.dumps(part, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16]


class RequestLog:
    """The requests of one run, each stored as what changed since the one before."""

    def __init__(self) -> None:
        self._known: set[str] = set()  # parts written to the transcript already
        self._sent: list[str] = []  # the hashes of the previous request's messages
        self._sent_list: Sequence[Message] | None = None
        self._tools: tuple[int, str] | None = None  # (id of the schema list, its hash): hashed once a run
        self._stale = True  # the list was rewritten in place (compression, an edit): hash it all again

    @property
    def hashes(self) -> list[str]:
        """The content hashes of the last request's messages, in order."""
        return self._sent

    def rewritten(self) -> None:
        """The messages were changed in place since the last request; the next record hashes them again."""
        self._stale = True

    def record(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """(the request as hashes, the parts not stored before). The list is taken to have only grown since
        the last call unless `rewritten` said otherwise."""
        parts: dict[str, Any] = {}
        if self._tools is None or self._tools[0] != id(tools):
            self._tools = (id(tools), part_hash(list(tools)))
        tools_hash = self._tools[1]
        if tools_hash not in self._known:
            parts[tools_hash] = list(tools)
        keep = 0 if self._stale or messages is not self._sent_list else min(len(self._sent), len(messages))
        added = [part_hash(message) for message in messages[keep:]]
        for digest, message in zip(added, messages[keep:], strict=True):
            if digest not in self._known and digest not in parts:
                parts[digest] = dict(message)
        self._known.update(parts)
        if keep == len(self._sent):  # the usual step: the list only grew
            self._sent.extend(added)
        else:
            self._sent = self._sent[:keep] + added
        self._sent_list, self._stale = messages, False
        return {"tools": tools_hash, "keep": keep, "add": added, "messages": len(self._sent)}, parts


def reply_record(response: Any) -> dict[str, Any]:
    """The raw reply: its text, each call with its arguments exactly as written, and the thinking."""
    calls = [
        {"id": call.id, "name": call.name, "arguments": call.raw_arguments or json.dumps(call.arguments)}
        for call in response.tool_calls
    ]
    usage = response.usage
    return {
        "content": response.content,
        "tool_calls": calls,
        "thinking": response.thinking,
        "finish_reason": response.finish_reason,
        "usage": {
            "input_tokens": usage.prompt_tokens,
            "cached_tokens": usage.cached_tokens,
            "output_tokens": usage.completion_tokens,
            "reasoning_tokens": usage.reasoning_tokens,
            "cost_usd": usage.cost_usd,
            "priced": usage.priced,
        },
    }


def rebuild(events: Sequence[Mapping[str, Any]], step: int) -> dict[str, Any] | None:
    """The request and reply of `step` from a transcript's events: `{"step", "tools", "messages", "new",
    "reply", "meter"}`, `new` being the indexes of the messages the previous request did not hold. None when
    the transcript has no request for that step (an older transcript, or a step that never called the model).
    """
    parts: dict[str, Any] = {}
    sent: list[str] = []
    found: dict[str, Any] | None = None
    for event in events:
        kind = event.get("kind")
        if kind == "model_request":
            parts.update(event.get("parts") or {})
            request = event.get("request") or {}
            previous = set(sent)
            sent = sent[: int(request.get("keep", 0))] + list(request.get("add", ()))
            if event.get("step") == step:
                found = {
                    "step": step,
                    "tools": parts.get(str(request.get("tools")), []),
                    "messages": [parts.get(h, {"missing": h}) for h in sent],
                    "new": [i for i, h in enumerate(sent) if h not in previous],
                    "meter": event.get("meter"),
                    "reply": None,
                }
        elif kind == "model_reply" and found is not None and event.get("step") == step:
            found["reply"] = {k: v for k, v in event.items() if k not in ("kind", "run_id", "at", "step")}
    return found


def compact(event: Mapping[str, Any]) -> dict[str, Any]:
    """A model request as a saved notebook keeps it: how many messages and which were new, no contents (the
    transcript file has them, and the reply and the tool results are in the notebook already)."""
    request = event.get("request") or {}
    return {
        "kind": event.get("kind"),
        "run_id": event.get("run_id"),
        "at": event.get("at"),
        "step": event.get("step"),
        "request": {
            "messages": request.get("messages", 0),
            "new": len(request.get("add", ())) if request.get("keep") else request.get("messages", 0),
        },
        "meter": event.get("meter"),
    }

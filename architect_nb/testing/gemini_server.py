"""A server speaking the Gemini API's `generateContent` on 127.0.0.1, with thoughts and thought signatures.

It answers `POST /v1beta/models/{model}:generateContent` with one `GenerateContentResponse`, and
`:streamGenerateContent?alt=sse` with a stream of them (`data: {...}` events). A reply's `thinking` comes as
a part with `thought: true`; each tool call as a `functionCall` part, the first of a turn carrying a
`thoughtSignature` (as Gemini signs the first call of a parallel batch), or, in a turn without calls, the
last text part carrying it. `usageMetadata` has `promptTokenCount`, `candidatesTokenCount` (the answer),
`thoughtsTokenCount` (the thinking, billed as output), `cachedContentTokenCount` and `totalTokenCount`.
The request's `generationConfig.thinkingConfig` is recorded with it.

What comes back is checked as Gemini 3 checks it, for every model: a `functionCall` part the server signed
must come back with that signature (none: 400 "Function call is missing a thought_signature in functionCall
parts"; another one: 400 "Corrupted thought signature."), and each function response turn must follow its
function call turn with as many parts. A signed text part that comes back without its signature is noted in
`problems` (Gemini does not refuse it).

Failures in Gemini's words: 429 `RESOURCE_EXHAUSTED` with a `RetryInfo` `retryDelay`, 503 `UNAVAILABLE`
"The model is overloaded", 400 `INVALID_ARGUMENT` "The input token count (N) exceeds the maximum number of
tokens allowed"; a prompt blocked for safety (`promptFeedback.blockReason`), an answer stopped for it
(`finishReason: SAFETY`, with a `finishMessage`). `finishReason: MAX_TOKENS` on a reply with tool calls sends
its thinking only: Gemini never sends half a function call, the limit falls before it.

    with GeminiStubServer() as server:
        server.queue(Reply.calls(("read_file", {"path": "a.py"}), thinking="a.py first"), Reply.text("ok"))
        litellm.completion(model="gemini/gemini-2.5-flash", api_base=server.url, api_key="test", ...)
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from typing import Any

from architect_nb.testing.stub_server import Reply, StubHandler, StubServer

__all__ = ["GeminiStubServer", "Reply"]

_SIGNATURES_DOCS = "https://ai.google.dev/gemini-api/docs/thought-signatures"


class GeminiStubServer(StubServer):
    """The Gemini API (AI Studio's `v1beta`), signing what it says."""

    name = "gemini"

    def __init__(self) -> None:
        self.signatures_checked = 0  # signed parts that came back with their signature
        self._salt = secrets.token_hex(8)
        self._signed: dict[str, str] = {}  # a part's key (call or text) -> the signature it was sent with
        super().__init__()

    @property
    def url(self) -> str:
        return f"{self.origin}/v1beta"

    def respond(self, handler: StubHandler, body: dict[str, Any]) -> None:
        self.record(body, handler.path)
        if (refused := self._check(body)) is not None:
            handler.send_json(400, _error(400, refused, "INVALID_ARGUMENT"))
            return
        reply = self.next_reply()
        if reply is None:
            handler.send_json(500, _error(500, "the stub server has no reply queued", "INTERNAL"))
            return
        model = handler.path.split("/models/", 1)[-1].split(":", 1)[0]
        if reply.failure == "refused":  # the prompt itself was blocked
            blocked = {
                "promptFeedback": {"blockReason": "SAFETY"},
                "usageMetadata": _usage(reply),
                "modelVersion": model,
            }
            handler.send_json(200, blocked)
            return
        if reply.failure is not None or reply.status != 200:
            status, error = _failure(reply)
            handler.send_json(status, error)
            return
        config = body.get("generationConfig") or {}
        limit = config.get("maxOutputTokens", config.get("max_output_tokens"))
        reply = reply.with_(completion_tokens=reply.output_tokens(limit))
        parts = self._parts(reply)
        if ":streamGenerateContent" in handler.path:
            events = [f"data: {json.dumps(c)}\r\n\r\n".encode() for c in _chunks(parts, reply, model)]
            handler.send_stream(events, delay=reply.delay, stall=reply.stall, cut=reply.cut)
        else:
            handler.send_json(200, _response(parts, reply, model))

    def _sign(self, key: str) -> str:
        digest = hashlib.sha256(f"{self._salt}:{key}".encode()).digest()
        signature = base64.b64encode(digest * 4).decode()
        with self._lock:
            self._signed[key] = signature
        return signature

    def _parts(self, reply: Reply) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = [{"text": reply.thinking, "thought": True}] if reply.thinking else []
        calls = [] if reply.finish == "length" else reply.tool_calls
        text = reply.content if reply.finish != "refusal" else None
        if text and reply.finish == "length":  # cut at the limit; a turn with calls stops before them
            text = None if reply.tool_calls else text[: max(1, len(text) // 2)]
        if text:
            parts.append({"text": text})
        for n, (name, args) in enumerate(calls):
            arguments = json.loads(args) if isinstance(args, str) else args
            part: dict[str, Any] = {"functionCall": {"name": name, "args": arguments}}
            if n == 0:
                part["thoughtSignature"] = self._sign(_call_key(name, arguments))
            parts.append(part)
        if not calls and parts and "text" in parts[-1] and not parts[-1].get("thought"):
            parts[-1]["thoughtSignature"] = self._sign(f"text:{parts[-1]['text']}")
        return parts

    def _check(self, body: dict[str, Any]) -> str | None:
        """Why Gemini would refuse what came back (a signature missing or changed, a function response out
        of place), or None; a signed text part without its signature is only noted."""
        contents = list(body.get("contents") or [])
        for n, content in enumerate(contents):
            parts = [p for p in content.get("parts") or [] if isinstance(p, dict)]
            responses = sum(1 for p in parts if _get(p, "functionResponse") is not None)
            if responses:
                previous = contents[n - 1] if n else {}
                calls = sum(1 for p in previous.get("parts") or [] if _get(p, "functionCall") is not None)
                if previous.get("role") != "model" or calls == 0:
                    said = "function response turn comes immediately after a function call turn."
                    return self.problem(f"Please ensure that {said}")
                if calls != responses:
                    return self.problem(
                        "Please ensure that the number of function response parts is equal to the number of "
                        "function call parts of the function call turn."
                    )
            if content.get("role") != "model":
                continue
            for position, part in enumerate(parts):
                if (problem := self._check_part(part, position)) is not None:
                    return problem
        return None

    def _check_part(self, part: dict[str, Any], position: int) -> str | None:
        call = _get(part, "functionCall")
        key = _call_key(call.get("name", ""), call.get("args") or {}) if isinstance(call, dict) else None
        if key is None and isinstance(part.get("text"), str):
            key = f"text:{part['text']}"
        sent = self._signed.get(key or "")
        if sent is None:
            return None
        back = _get(part, "thoughtSignature")
        if back == sent:
            self.signatures_checked += 1
            return None
        if call is None:
            self.problem(f"the signature of the text part {position} did not come back")
            return None
        if back is None:
            return self.problem(
                "Function call is missing a thought_signature in functionCall parts. This is required for "
                "tools to work correctly, and missing thought_signature may lead to degraded model "
                "performance. "
                f"Additional data, function call `default_api:{call.get('name')}` , position {position + 1}. "
                f"Please refer to {_SIGNATURES_DOCS} for more details."
            )
        return self.problem("Corrupted thought signature.")


def _get(part: dict[str, Any], camel: str) -> Any:
    """A part's field in either JSON spelling the API accepts (`functionCall` or `function_call`)."""
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
    return part.get(camel, part.get(snake))


def _call_key(name: str, arguments: Any) -> str:
    return f"call:{name}:{json.dumps(arguments, sort_keys=True)}"


def _error(
    code: int, message: str, status: str, details: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message, "status": status}
    if details:
        error["details"] = details
    return {"error": error}


def _failure(reply: Reply) -> tuple[int, dict[str, Any]]:
    if reply.failure == "rate_limit":
        delay = f"{reply.retry_after:g}s" if reply.retry_after is not None else "1s"
        details: list[dict[str, Any]] = [
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [
                    {"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests"}
                ],
            },
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay},
        ]
        message = (
            "You exceeded your current quota, please check your plan and billing details. For more "
            "information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. "
            f"Please retry in {delay}."
        )
        return 429, _error(429, message, "RESOURCE_EXHAUSTED", details)
    if reply.failure == "overloaded":
        return 503, _error(503, "The model is overloaded. Please try again later.", "UNAVAILABLE")
    if reply.failure == "context_window":
        message = "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
        return 400, _error(400, message, "INVALID_ARGUMENT")
    message = str(reply.error_body.get("error", {}).get("message", "error"))
    return reply.status, _error(reply.status, message, "INTERNAL")


def _usage(reply: Reply) -> dict[str, Any]:
    thoughts = reply.reasoning_tokens or (max(1, len(reply.thinking or "") // 4) if reply.thinking else 0)
    answer = max(0, reply.completion_tokens - thoughts)
    usage = {
        "promptTokenCount": reply.prompt_tokens,
        "candidatesTokenCount": answer,
        "totalTokenCount": reply.prompt_tokens + answer + thoughts,
    }
    if thoughts:
        usage["thoughtsTokenCount"] = thoughts
    if reply.cached_tokens:
        usage["cachedContentTokenCount"] = reply.cached_tokens
    return usage


def _finish(reply: Reply) -> str:
    return {"length": "MAX_TOKENS", "refusal": "SAFETY"}.get(reply.finish or "", "STOP")


def _candidate(parts: list[dict[str, Any]], reply: Reply, finish: str | None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
        if finish == "SAFETY":
            candidate["finishMessage"] = reply.content or "The response was blocked for safety reasons."
            candidate["safetyRatings"] = [
                {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}
            ]
    return candidate


def _response(parts: list[dict[str, Any]], reply: Reply, model: str) -> dict[str, Any]:
    return {
        "candidates": [_candidate(parts, reply, _finish(reply))],
        "usageMetadata": _usage(reply),
        "modelVersion": model,
        "responseId": "stub-response",
    }


def _chunks(parts: list[dict[str, Any]], reply: Reply, model: str) -> list[dict[str, Any]]:
    """One chunk per part (text parts in pieces), the last with the finish reason and the whole usage."""
    pieces: list[dict[str, Any]] = []
    for part in parts:
        text = part.get("text")
        if isinstance(text, str) and "thoughtSignature" not in part and len(text) > 12:
            pieces += [{**part, "text": text[i : i + 12]} for i in range(0, len(text), 12)]
        else:
            pieces.append(part)
    running = {"promptTokenCount": reply.prompt_tokens, "totalTokenCount": reply.prompt_tokens}
    chunks = [
        {"candidates": [_candidate([piece], reply, None)], "usageMetadata": running, "modelVersion": model}
        for piece in pieces
    ]
    last = {
        "candidates": [_candidate([{"text": ""}], reply, _finish(reply))],
        "usageMetadata": _usage(reply),
        "modelVersion": model,
    }
    return [*chunks, last]

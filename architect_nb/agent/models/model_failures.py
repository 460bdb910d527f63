"""What went wrong with a model call, told apart from LiteLLM's exception: `classify` and `explain`.

LiteLLM maps each provider's errors onto its own exception classes, but not evenly: Anthropic's 529
`overloaded_error` arrives as an `InternalServerError` with status 500, Gemini's and an OpenAI-compatible
server's as an `APIError` with status 529; a context window exceeded on Ollama is a plain `BadRequestError`;
OpenAI's `content_policy_violation` too; a stream cut short or stalled is a `MidStreamFallbackError` around
the real cause; only OpenAI's errors carry the HTTP response with its `retry-after`. So `classify` looks at
the class, the status and the provider's own words together, and `retry_after` reads every place a
provider says how long to wait (the header in seconds, a date or milliseconds, Gemini's `retryDelay`,
OpenAI's "try again in 20ms").
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Failure", "FailureKind", "classify", "explain", "missing_key", "provider_words"]

FailureKind = Literal[
    "rate_limit",
    "overloaded",
    "server",
    "connection",
    "stalled",
    "cut_short",
    "context_window",
    "refused",
    "budget",
    "auth",
    "missing_key",
    "unknown_model",
    "unsupported",
    "no_tools",
    "other",
]

_CONTEXT = re.compile(
    r"context.{0,3}(length|window)|prompt is too long|too many tokens|exceeds? the (maximum|max)"
    r"|maximum context|input length .{0,30}exceeds|input token count",
    re.IGNORECASE,
)
_POLICY = re.compile(
    r"content.?policy|content_filter|content management policy|safety system|responsible ai", re.IGNORECASE
)
_CUT = re.compile(
    r"stream ended before|peer closed connection|incomplete chunked|incomplete message body|"
    r"server disconnected|connection reset",
    re.IGNORECASE,
)
_STALLED = re.compile(r"timed? ?out|timeout", re.IGNORECASE)
_TRY_AGAIN = re.compile(r"try again in (\d+(?:\.\d+)?)\s*(ms|s\b|sec|second)", re.IGNORECASE)
_BODY_CODE = re.compile(r'"code"\s*:\s*(5\d\d)\b')
_RETRY_DELAY = re.compile(r'"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"')
_UNKNOWN_MODEL = re.compile(
    r"model.{0,60}(not found|does not exist|not supported|unknown|invalid)|(unknown|invalid|no such) model"
    r"|model_not_found|LLM Provider NOT provided",
    re.IGNORECASE,
)
# A LiteLLM proxy refusing a key whose budget is spent: `BudgetExceededError` (status 422, 429 before, or 400
# with `type: budget_exceeded`), "Budget has been exceeded! Current cost: ..., Max budget: ...".
_BUDGET = re.compile(
    r"budget_exceeded|budget has been exceeded|exceeded (its|the|your)? ?budget", re.IGNORECASE
)
_BOILERPLATE = ("This looks like a bug in LiteLLM", "Received Model Group", "LiteLLM Retried")


@dataclass(frozen=True)
class Failure:
    """One failed model call: what kind of failure, the HTTP status, the provider's words, and how long the
    provider asked to wait before the next call (None when it did not say)."""

    kind: FailureKind
    name: str
    status: int | None
    detail: str
    retry_after: float | None = None


def classify(exc: BaseException) -> Failure:
    """What `exc` (raised by `litellm.completion` or while reading its stream) means."""
    inner = getattr(exc, "original_exception", None)
    cause = inner if isinstance(inner, BaseException) else exc
    names = {type(exc).__name__, type(cause).__name__}
    status = _status(cause) if cause is not exc else _status(exc)  # a wrapper's status is made up
    text = f"{exc} {cause}" if cause is not exc else str(exc)
    if status == 500:  # LiteLLM's status for errors it did not place: the body says the real one
        code = _BODY_CODE.search(text)
        status = 529 if "overloaded_error" in text else int(code.group(1)) if code else status
    detail = provider_words(str(cause))
    wait = retry_after(exc) if retry_after(exc) is not None else retry_after(cause)

    def failure(kind: FailureKind) -> Failure:
        return Failure(kind, type(cause).__name__, status, detail, wait)

    if "BudgetExceededError" in names or _BUDGET.search(text):  # before rate limits: waiting cannot help
        return failure("budget")
    if "UnsupportedParamsError" in names or "does not support thinking" in text:
        return failure("unsupported")
    if "does not support tools" in text:  # Ollama, for a model whose template has no tools
        return failure("no_tools")
    if names & {"AuthenticationError", "PermissionDeniedError"} or status in (401, 403):
        return failure("auth")
    if "RateLimitError" in names or status == 429:  # before the key: a proxy's limit names the key it hit
        return failure("rate_limit")
    if missing_key(text):
        return failure("missing_key")
    if "ContextWindowExceededError" in names or (status in (400, 413, None) and _CONTEXT.search(text)):
        return failure("context_window")
    if "ContentPolicyViolationError" in names or (status in (400, None) and _POLICY.search(text)):
        return failure("refused")
    unavailable = type(cause).__name__ == "ServiceUnavailableError"
    if status in (503, 529) or "overloaded" in text.lower() or unavailable:
        return failure("overloaded")
    if "Timeout" in names or (_STALLED.search(text) and "APIConnectionError" in names):
        return failure("stalled")
    if _CUT.search(text) or ("MidStreamFallbackError" in names and "APIConnectionError" in names):
        return failure(
            "cut_short"
        )  # a stream that broke after it began (the OpenAI SDK says only "Connection error")
    if names & {"InternalServerError", "APIError"} and (status or 500) >= 500:
        return failure("server")
    if "APIConnectionError" in names:
        return failure("connection")
    if "NotFoundError" in names or ("BadRequestError" in names and _UNKNOWN_MODEL.search(detail)):
        return failure("unknown_model")
    return failure("other")


def provider_words(text: str) -> str:
    """The provider's own message in LiteLLM's exception text (the JSON error body's `message`, or the
    text after LiteLLM's prefixes), on one line."""
    for marker in _BOILERPLATE:
        if (cut := text.find(marker)) >= 0:
            text = text[:cut]
    start = text.find("{")
    if start >= 0:
        found = _message_in(text[start:])
        if found:
            return found
    tail = text.rsplit("Exception - ", 1)[-1]
    tail = re.sub(r"^(litellm\.\w+: )+", "", tail.strip())
    return " ".join(tail.split())[:400] or text.strip()[:400]


def _message_in(text: str) -> str | None:
    try:
        data, _ = json.JSONDecoder().raw_decode(text)
    except ValueError:
        return None
    while isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, str):
            return error
        if not isinstance(error, dict):
            return None
        message = error.get("message")
        if isinstance(message, str):
            return " ".join(message.split())[:400]
        if error is data:
            return None
        data = error
    return None


def retry_after(exc: BaseException) -> float | None:
    """The seconds the provider asked to wait, from the response headers or its error body."""
    for headers in _headers(exc):
        try:
            millis = headers.get("retry-after-ms")
            if millis is not None:
                return max(0.0, float(millis) / 1000)
            value = headers.get("retry-after")
        except (AttributeError, ValueError, TypeError):
            continue
        if value is None:
            continue
        seconds = _seconds(str(value))
        if seconds is not None:
            return seconds
    text = str(exc)
    if found := _RETRY_DELAY.search(text):
        return float(found.group(1))
    if found := _TRY_AGAIN.search(text):
        value = float(found.group(1))
        return value / 1000 if found.group(2).lower() == "ms" else value
    return None


def _seconds(value: str) -> float | None:
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _headers(exc: BaseException) -> list[Any]:
    found = []
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is not None:
        found.append(headers)
    extra = getattr(exc, "litellm_response_headers", None)
    if extra is not None:
        found.append(extra)
    return found


def _status(exc: BaseException) -> int | None:
    value = getattr(exc, "status_code", None)
    return value if isinstance(value, int) else None


def missing_key(text: str) -> bool:
    text = text.lower()
    return "api_key" in text or "api key" in text or "missing credentials" in text


def explain(
    failure: Failure,
    model: str,
    *,
    timeout: float,
    retried: int,
    missing_keys: Sequence[str] = (),
    max_wait: float = 0.0,
    gateway: str | None = None,
    key_env: str | None = None,
) -> str:
    """The one-line message of a call that failed for good, saying what to do next. `gateway` is the URL of
    the gateway the call went through and `key_env` the variable its key came from, if it went through one."""
    said = f"{failure.status}: {failure.detail}" if failure.status else failure.detail
    again = f" after {retried} retr{'y' if retried == 1 else 'ies'}" if retried else ""
    kind = failure.kind
    if kind == "budget":
        return (
            f"The gateway refuses to call {model}: the budget is spent ({failure.detail}); ask whoever runs "
            "it (your teacher) to raise the budget."
        )
    if gateway is not None and kind in ("auth", "missing_key"):
        where = f"the key in {key_env}" if key_env else "the call (no key was sent)"
        return f"The gateway {gateway} refused {where} ({said}); check that the key is set and still valid."
    if kind == "missing_key":
        variable = missing_keys[0] if missing_keys else "OPENAI_API_KEY"
        return (
            f"No API key for {model}: set {', '.join(missing_keys) or 'the provider key variable'} "
            f"(for example `%env {variable}=...` in a cell), or use the scripted model: "
            "--model scripted/<script.yaml>."
        )
    if kind == "auth":
        return f"The model {model} refused the API key ({said}). Check the key's environment variable."
    if kind == "unknown_model":
        return f"Unknown model {model!r} ({said}). Check its name, or use --model scripted/<script.yaml>."
    if kind == "unsupported":
        return (
            f"The model {model} does not take a setting it was given ({failure.detail.split('.')[0]}). "
            "Leave out --think (llm.thinking, llm.reasoning_effort) for it, or pick a model that thinks."
        )
    if kind == "no_tools":
        return (
            f"The model {model} cannot call tools ({failure.detail}); pick one that can (on Ollama, a model "
            "whose template has tools: qwen3, llama3.1, mistral-nemo, ...)."
        )
    if kind == "rate_limit" and failure.retry_after is not None and failure.retry_after > max_wait:
        return (
            f"The provider asks to wait {failure.retry_after:.0f} s before calling {model} again ({said}), "
            f"longer than architect-nb waits ({max_wait:.0f} s); try again later."
        )
    if kind == "rate_limit":
        return f"The provider kept rate limiting {model}{again} ({said}); wait, then run the cell again."
    if kind == "overloaded":
        return f"The provider of {model} is overloaded ({said}) and stayed so{again}; try again in a while."
    if kind == "stalled":
        return (
            f"The model {model} sent nothing for {timeout:g} s (llm.timeout){again}; raise llm.timeout for a "
            "slow model, or check that its server is up."
        )
    if kind == "cut_short":
        return (
            f"The answer of {model} stopped before its end{again} (the connection closed early: "
            f"{failure.detail}); run the cell again."
        )
    if kind == "context_window":
        return f"The conversation is longer than {model}'s context window ({said})."
    if kind == "refused":
        return f"The provider refused to answer: {failure.detail}"
    if kind in ("server", "connection"):
        return f"The model call failed{again} ({failure.name}: {said})."
    return f"The model call failed ({failure.name}: {said})."

"""Talking to the model through LiteLLM: one `complete()` call per step, streamed, retried, priced.

LiteLLM is imported on the first call, never when `architect_nb` is imported (it takes seconds), and it is
told to use its bundled price list instead of downloading one. The `scripted/<script.yaml>` model is a
LiteLLM custom provider, so demos and tests go through the same code path as real models.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from architect_nb.agent.prompt_cache import cache_counts, needs_markers, with_markers
from architect_nb.config.schema import LLMConfig
from architect_nb.log import get_logger

__all__ = [
    "LLMClient",
    "LLMError",
    "LLMResponse",
    "LiteLLMClient",
    "RunCancelledError",
    "ToolCall",
    "Usage",
    "import_litellm",
]

log = get_logger(__name__)

SCRIPTED_PREFIX = "scripted/"
_RETRYABLE = (
    "RateLimitError",
    "InternalServerError",
    "ServiceUnavailableError",
    "APIConnectionError",
    "Timeout",
)
_litellm_lock = threading.Lock()
_litellm: Any = None
LITELLM_IMPORT_SECONDS: float | None = None


class LLMError(RuntimeError):
    """The model could not be called. The message says what to do (set a key, fix the model name, ...).

    `kind` is "script" when a scripted run left its script, otherwise "llm".
    """

    def __init__(self, message: str, kind: str = "llm") -> None:
        super().__init__(message)
        self.kind = kind


class RunCancelledError(RuntimeError):
    """The run was cancelled while waiting for the model."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str = ""
    parse_error: str | None = None

    def to_message(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.raw_arguments or json.dumps(self.arguments)},
        }


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens of one model turn. `cached_tokens` of the `prompt_tokens` were read from the provider's prompt
    cache and `cache_write_tokens` written to it; both are priced at the provider's cached rates."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    priced: bool = False
    cached_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True)
class LLMResponse:
    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    finish_reason: str = "stop"

    def to_message(self) -> dict[str, Any]:
        """The assistant message to append to the conversation (OpenAI format)."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [call.to_message() for call in self.tool_calls]
        return message


class LLMClient(Protocol):
    """What the agent loop needs from a model. `LiteLLMClient` is the real one."""

    model: str

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        *,
        on_text: Callable[[str], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        thread_position: tuple[int, int] = (0, 0),
    ) -> LLMResponse:
        """One model turn. `thread_position` is (assistant turns, runs) the thread held before this run, so
        the scripted model answers a follow-up run from the first turn of its own script."""
        ...

    def context_window(self) -> int: ...

    def supports_images(self) -> bool:
        """Whether the model accepts images (plots made by run_python are then sent to it)."""
        ...


def import_litellm() -> Any:
    """Import LiteLLM once, offline: bundled price map, no telemetry, no banner; register `scripted/`."""
    global _litellm, LITELLM_IMPORT_SECONDS  # noqa: PLW0603 - one lazy import per process
    with _litellm_lock:
        if _litellm is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            os.environ.setdefault("LITELLM_TELEMETRY", "False")
            started = time.perf_counter()
            import litellm

            # LiteLLM touches a Pydantic attribute deprecated in 2.11; keep that out of notebook cells.
            warnings.filterwarnings("ignore", message="Accessing the 'model_", module="litellm")

            LITELLM_IMPORT_SECONDS = time.perf_counter() - started
            litellm.suppress_debug_info = True
            litellm.telemetry = False
            from architect_nb.agent.scripted_provider import scripted_provider

            litellm.custom_provider_map = [
                entry for entry in litellm.custom_provider_map if entry.get("provider") != "scripted"
            ] + [{"provider": "scripted", "custom_handler": scripted_provider()}]
            _litellm = litellm
        return _litellm


class LiteLLMClient:
    """A model reached through LiteLLM: any provider's model string, a local `api_base`, or `scripted/...`."""

    def __init__(
        self,
        config: LLMConfig,
        *,
        workspace: Path | None = None,
        context_window: int | None = None,
        cache_markers: bool = True,
    ):
        """`cache_markers=False` sends no prompt-cache markers even to models that need them (for
        comparisons: `benchmarks/prompt_caching.py`)."""
        self.config = config
        self.cache_markers = cache_markers
        self.model = config.model
        self.display_name = config.model  # what the user wrote; `model` becomes an absolute script path
        self.workspace = workspace
        self._context_window = context_window
        self._price_as: str | None = None
        if self.model.startswith(SCRIPTED_PREFIX):
            self._resolve_script()

    def _resolve_script(self) -> None:
        from architect_nb.agent.scripted import load_script, resolve_script_path

        path = resolve_script_path(self.model[len(SCRIPTED_PREFIX) :], self.workspace)
        self.model = f"{SCRIPTED_PREFIX}{path}"
        self._price_as = load_script(path).price_as

    # ------------------------------------------------------------------ calling

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        *,
        on_text: Callable[[str], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        thread_position: tuple[int, int] = (0, 0),
    ) -> LLMResponse:
        litellm = import_litellm()
        marked = self.cache_markers and needs_markers(self.model)  # the provider called, not `price_as`
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": with_markers(messages) if marked else list(messages),
            "timeout": self.config.timeout,
            "max_retries": 0,  # we retry ourselves, with backoff and cancellation
        }
        if self.model.startswith(SCRIPTED_PREFIX):  # LiteLLM hands `metadata` to the provider, not the wire
            kwargs["metadata"] = {"turns_before": thread_position[0], "run_index": thread_position[1]}
        if tools:
            kwargs["tools"] = list(tools)
        if self.config.api_base:
            kwargs["api_base"] = self.config.api_base
        if self.config.api_key_env:
            key = os.environ.get(self.config.api_key_env)
            if not key:
                raise LLMError(
                    f"The API key variable {self.config.api_key_env} is not set. Set it (for example in your "
                    "shell or with %env), or use the scripted model: --model scripted/<script.yaml>."
                )
            kwargs["api_key"] = key
        attempt = 0
        while True:
            try:
                if self.config.stream:
                    return self._stream(litellm, kwargs, on_text, should_stop)
                return self._once(litellm, kwargs, on_text)
            except RunCancelledError:
                raise
            except Exception as exc:
                name = type(exc).__name__
                if self.model.startswith(SCRIPTED_PREFIX):
                    raise LLMError(_script_message(exc), kind="script") from exc
                # A missing key comes back from some providers as a server error; retrying cannot fix it.
                if name in _RETRYABLE and attempt < self.config.retries and not _missing_key(exc):
                    attempt += 1
                    delay = _backoff(attempt, exc)
                    log.warning(
                        "llm_retry", model=self.model, error=name, attempt=attempt, delay_s=round(delay, 2)
                    )
                    _sleep(delay, should_stop)
                    continue
                raise LLMError(_explain(exc, self.model, self._missing_key_names(litellm))) from exc

    def _missing_key_names(self, litellm: Any) -> list[str]:
        """The environment variables LiteLLM says the model's provider needs and are unset (best effort)."""
        if self.config.api_key_env:
            return []
        try:
            found = litellm.validate_environment(self.model, api_base=self.config.api_base)
            return [str(k) for k in found.get("missing_keys", [])]
        except Exception:  # an unknown provider: the error message says enough
            return []

    def _once(
        self, litellm: Any, kwargs: dict[str, Any], on_text: Callable[[str], None] | None
    ) -> LLMResponse:
        response = litellm.completion(**kwargs)
        choice = response.choices[0]
        message = choice.message
        content = message.content
        if content and on_text is not None:
            on_text(content)
        calls = [
            _make_call(c.id or f"call_{i}", c.function.name or "", c.function.arguments or "")
            for i, c in enumerate(message.tool_calls or [])
        ]
        usage = getattr(response, "usage", None)
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion = int(getattr(usage, "completion_tokens", 0) or 0)
        priced = self._price(prompt, completion, usage)
        return LLMResponse(content, calls, priced, choice.finish_reason or "stop")

    def _stream(
        self,
        litellm: Any,
        kwargs: dict[str, Any],
        on_text: Callable[[str], None] | None,
        should_stop: Callable[[], bool] | None,
    ) -> LLMResponse:
        stream = litellm.completion(**kwargs, stream=True, stream_options={"include_usage": True})
        text: list[str] = []
        parts: dict[int, dict[str, str]] = {}
        prompt = completion = 0
        reported: Any = None
        finish = "stop"
        try:
            for chunk in stream:
                if should_stop is not None and should_stop():
                    raise RunCancelledError("cancelled while the model was answering")
                usage = getattr(chunk, "usage", None)
                if usage:
                    reported = usage
                    prompt = int(getattr(usage, "prompt_tokens", 0) or prompt)
                    completion = int(getattr(usage, "completion_tokens", 0) or completion)
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                finish = choice.finish_reason or finish
                delta = choice.delta
                if delta.content:
                    text.append(delta.content)
                    if on_text is not None:
                        on_text(delta.content)
                for n, tc in enumerate(delta.tool_calls or []):
                    index = tc.index if tc.index is not None else n
                    part = parts.setdefault(index, {"id": "", "name": "", "arguments": ""})
                    part["id"] = tc.id or part["id"]
                    if tc.function is not None:
                        part["name"] = tc.function.name or part["name"]
                        part["arguments"] += tc.function.arguments or ""
        finally:
            close = getattr(stream, "close", None)
            if callable(close):
                close()
        calls = [
            _make_call(p["id"] or f"call_{i}", p["name"], p["arguments"]) for i, p in sorted(parts.items())
        ]
        content = "".join(text) or None
        if not prompt:
            prompt = _estimate_tokens(kwargs["messages"])
            completion = max(1, len(content or "") // 4 + sum(len(c.raw_arguments) for c in calls) // 4)
            reported = None
        return LLMResponse(content, calls, self._price(prompt, completion, reported), finish)

    # ------------------------------------------------------------------ prices and limits

    def _price(self, prompt: int, completion: int, usage: Any = None) -> Usage:
        """The turn's usage, priced with LiteLLM's price list: cached input at the provider's cached rates."""
        read, written = cache_counts(usage)
        model = self._price_as or self.model
        if model.startswith(SCRIPTED_PREFIX):
            return Usage(prompt, completion, 0.0, False, read, written)
        try:
            prompt_cost, completion_cost = import_litellm().cost_per_token(
                model=model,
                prompt_tokens=prompt,
                completion_tokens=completion,
                cache_read_input_tokens=read,
                cache_creation_input_tokens=written,
            )
        except Exception:
            return Usage(prompt, completion, 0.0, False, read, written)
        return Usage(prompt, completion, float(prompt_cost + completion_cost), True, read, written)

    def supports_images(self) -> bool:
        model = self._price_as or self.model
        if model.startswith(SCRIPTED_PREFIX):
            return False
        try:
            return bool(import_litellm().supports_vision(model=model))
        except Exception:  # an unknown model: images are described in words instead
            return False

    def context_window(self) -> int:
        if self._context_window is not None:
            return self._context_window
        model = self._price_as or self.model
        if not model.startswith(SCRIPTED_PREFIX):
            try:
                info = import_litellm().get_model_info(model)
                window = info.get("max_input_tokens") or info.get("max_tokens")
                if window:
                    return int(window)
            except Exception:  # noqa: S110 - unknown models get the default below
                pass
        return 128_000


def _make_call(call_id: str, name: str, raw: str) -> ToolCall:
    try:
        parsed = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as exc:
        return ToolCall(call_id, name, {}, raw, f"the arguments are not valid JSON ({exc.msg} at {exc.pos})")
    if not isinstance(parsed, dict):
        return ToolCall(call_id, name, {}, raw, "the arguments must be a JSON object")
    return ToolCall(call_id, name, parsed, raw)


def _estimate_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    return max(1, len(json.dumps(list(messages), default=str)) // 4)


def _backoff(attempt: int, exc: Exception) -> float:
    retry_after = _retry_after(exc)
    if retry_after is not None:
        return min(retry_after, 60.0)
    jitter = 0.75 + random.random() / 2  # noqa: S311 - jitter, not cryptography
    return float(min(30.0, 0.5 * 2 ** (attempt - 1)) * jitter)


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    value = headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _sleep(seconds: float, should_stop: Callable[[], bool] | None) -> None:
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        if should_stop is not None and should_stop():
            raise RunCancelledError("cancelled while waiting to retry the model")
        time.sleep(min(0.05, left))


def _without_litellm_boilerplate(text: str) -> str:
    cut = text.find("This looks like a bug in LiteLLM")
    return text[:cut].rstrip() if cut >= 0 else text


def _script_message(exc: Exception) -> str:
    text = _without_litellm_boilerplate(str(exc))
    start = text.find("Scripted model:")
    return text[start:] if start >= 0 else f"Scripted model failed: {text}"


def _missing_key(exc: Exception) -> bool:
    text = str(exc).lower()
    return "api_key" in text or "api key" in text or "missing credentials" in text


def _explain(exc: Exception, model: str, missing_keys: Sequence[str] = ()) -> str:
    name = type(exc).__name__
    raw = _without_litellm_boilerplate(str(exc)).strip()
    text = raw.splitlines()[0] if raw else name
    if name == "AuthenticationError":
        return f"The model {model} refused the API key ({text}). Check the key's environment variable."
    if name in ("NotFoundError", "BadRequestError") and "model" in text.lower():
        return (
            f"Unknown model {model!r} ({text}). Check the model name, or use --model scripted/<script.yaml>."
        )
    if _missing_key(exc):
        variable = missing_keys[0] if missing_keys else "OPENAI_API_KEY"
        return (
            f"No API key for {model}: set {', '.join(missing_keys) or 'the provider key variable'} "
            f"(for example `%env {variable}=...` in a cell), or use the scripted model: "
            "--model scripted/<script.yaml>."
        )
    return f"The model call failed ({name}: {text})."

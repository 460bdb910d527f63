"""Talking to the model through LiteLLM: one `complete()` call per step, streamed, retried, priced.

LiteLLM is imported on the first call, never when `architect_nb` is imported (it takes seconds), and it is
told to use its bundled price list instead of downloading one. The `scripted/<script.yaml>` model goes
through this same turn without LiteLLM (`scripted_client`), as a gateway's model does (`gateway`).

One call is the request (`llm.thinking`, `llm.reasoning_effort` and `llm.max_tokens` pass through to
LiteLLM), then attempts until one gives an answer: a failure is told apart (`model_failures`) and retried or
not (`retry_policy`), each wait announced through `on_notice`; an answer cut off at the length limit in the
middle of a tool call is asked again once with more room (`length_cuts`); a refusal ends the call with the
provider's words. A streamed answer is rebuilt by LiteLLM's own `stream_chunk_builder`, so it is read
exactly as an unstreamed one (`reply_parsing`), what the provider attached (thinking blocks, signatures)
included; the text shown as it streams leaves out the thinking and calls a local model writes into it.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from architect_nb.agent.models.client import LLMClient, LLMError, RunCancelledError
from architect_nb.agent.models.length_cuts import added, cut_where, more_room_for, told_cut
from architect_nb.agent.models.litellm_import import import_litellm
from architect_nb.agent.models.model_failures import Failure, classify, explain
from architect_nb.agent.models.model_reply import LLMResponse, ToolCall, Usage, make_call
from architect_nb.agent.models.offline import offline_refusal
from architect_nb.agent.models.prompt_cache import needs_markers, with_markers
from architect_nb.agent.models.reply_parsing import parse_reply, refusal_words
from architect_nb.agent.models.retry_policy import MAX_WAIT_S, RetryPolicy
from architect_nb.agent.models.text_tool_calls import LiveText
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
    "make_call",
]

log = get_logger(__name__)

SCRIPTED_PREFIX = "scripted/"
_SIGNED_CALL_IDS = ("gemini/", "vertex_ai/")  # LiteLLM would put Gemini's thought signatures in call ids


class LiteLLMClient:
    """A model reached through LiteLLM: any provider's model string, or a local `api_base`."""

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

    def endpoint(self) -> str | None:
        """Where the calls go, when this client says: `llm.api_base`, or for a model behind LiteLLM's proxy
        the variable LiteLLM reads its address from."""
        if self.config.api_base:
            return self.config.api_base
        if self.model.startswith("litellm_proxy/"):
            return os.environ.get("LITELLM_PROXY_API_BASE")
        return None

    # ------------------------------------------------------------------ calling

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        *,
        on_text: Callable[[str], None] | None = None,
        on_thinking: Callable[[str], None] | None = None,
        on_notice: Callable[[str], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        thread_position: tuple[int, int] = (0, 0),
    ) -> LLMResponse:
        kwargs = self._request(messages, tools, thread_position)
        if (refused := offline_refusal(self.model, self.endpoint())) is not None:
            raise LLMError(refused)  # after the checks that need no network, which say more
        backend = self._backend()  # LiteLLM's import (seconds): not for a call refused before it
        policy = self._retry_policy()
        text, thinking = _Echo(on_text), _Echo(on_thinking)
        more_room = True
        spent = Usage()  # the tokens of an answer cut at the length limit and asked again: billed too
        while True:
            text.again()
            thinking.again()
            try:
                raw = self._call(backend, kwargs, text, thinking, should_stop)
            except RunCancelledError:
                raise
            except Exception as exc:
                self._retry_or_raise(backend, exc, policy, on_notice, should_stop)
                continue
            response = parse_reply(raw)
            if not thinking.shown and response.thinking:  # thinking that came whole (encrypted blocks)
                thinking(response.thinking)
            if (refused := refusal_words(raw, response)) is not None:
                raise LLMError(f"The provider refused to answer: {refused}", kind="refused")
            if response.finish_reason == "length":
                cut_early = bool(response.tool_calls) or not response.content  # mid-call, or before a word
                limit = self._model_info("max_output_tokens")
                room = more_room_for(kwargs, response, limit) if cut_early and more_room else None
                if room is not None:
                    more_room, spent = False, added(spent, response.usage)
                    kwargs["max_tokens"] = room
                    _say(on_notice, f"{cut_where(response)}; asking again with room for {room:,} tokens.")
                    continue
                response, said = told_cut(response, retried=not more_room)
                _say(on_notice, said)
            return dataclasses.replace(response, usage=self._price(added(spent, response.usage), backend))

    def _backend(self) -> Any:
        """What one call's attempts go through: LiteLLM here (`GatewayClient`: its HTTP client)."""
        return import_litellm()

    def _retry_policy(self) -> RetryPolicy:
        """One call's retries: `llm.retries` of each kind (`GatewayClient`: a busy gateway's uncounted)."""
        return RetryPolicy(self.config.retries, float(self.config.timeout))

    def count_tokens(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] = ()
    ) -> int:
        """Tokens of a request's `messages` and `tools` by LiteLLM's counter for this model (a model LiteLLM
        does not know is counted with its default tokenizer)."""
        litellm = import_litellm()
        return int(
            litellm.token_counter(model=self.model, messages=list(messages), tools=list(tools) or None)
        )

    def _request(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        thread_position: tuple[int, int],
    ) -> dict[str, Any]:
        marked = self.cache_markers and needs_markers(self.model)  # the provider called, not `price_as`
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": with_markers(messages) if marked else list(messages),
            "timeout": self.config.timeout,
            "max_retries": 0,  # we retry ourselves, with backoff and cancellation
        }
        if self.config.thinking is not None:
            kwargs["thinking"] = {"type": "enabled", "budget_tokens": self.config.thinking}
        if self.config.reasoning_effort is not None:
            kwargs["reasoning_effort"] = self.config.reasoning_effort
        if self.model.startswith(_SIGNED_CALL_IDS):  # they stay in the call's provider fields instead
            kwargs["thought_signature_in_tool_call_id"] = False
        if self.config.max_tokens is not None:
            kwargs["max_tokens"] = self.config.max_tokens
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
        return kwargs

    def _retry_or_raise(
        self,
        litellm: Any,
        exc: Exception,
        policy: RetryPolicy,
        on_notice: Callable[[str], None] | None,
        should_stop: Callable[[], bool] | None,
    ) -> None:
        """Wait before the next attempt (saying so), or raise the `LLMError` that says what went wrong."""
        failure = classify(exc)
        delay = policy.wait(failure)
        if delay is None:
            kind = failure.kind if failure.kind in ("context_window", "refused") else "llm"
            raise LLMError(self._explain(failure, policy, litellm), kind=kind) from exc
        log.warning(
            "llm_retry",
            model=self.model,
            error=failure.kind,
            attempt=policy.tries + policy.busy,
            delay_s=round(delay, 2),
        )
        _say(on_notice, policy.notice(failure, delay))
        _sleep(delay, should_stop)

    def _explain(self, failure: Failure, policy: RetryPolicy, litellm: Any) -> str:
        """The sentence of a call that failed for good."""
        missing = self._missing_key_names(litellm) if failure.kind == "missing_key" else []
        return explain(
            failure,
            self.model,
            timeout=float(self.config.timeout),
            retried=policy.tries,
            missing_keys=missing,
            max_wait=MAX_WAIT_S,
        )

    def _missing_key_names(self, litellm: Any) -> list[str]:
        """The environment variables LiteLLM says the model's provider needs and are unset (best effort)."""
        if self.config.api_key_env:
            return []
        try:
            found = litellm.validate_environment(self.model, api_base=self.config.api_base)
            return [str(k) for k in found.get("missing_keys", [])]
        except Exception:  # an unknown provider: the error message says enough
            return []

    def _call(
        self,
        litellm: Any,
        kwargs: dict[str, Any],
        on_text: Callable[[str], None],
        on_thinking: Callable[[str], None],
        should_stop: Callable[[], bool] | None,
    ) -> Any:
        """One attempt: LiteLLM's whole response, streamed (and rebuilt) or not. The text goes to `on_text`
        without the thinking or calls a local model wrote into it (`LiveText`)."""
        live = LiveText(on_text, on_thinking)
        if not self.config.stream:
            response = litellm.completion(**kwargs)
            message = response.choices[0].message
            reasoning = getattr(message, "reasoning_content", None)
            if isinstance(reasoning, str) and reasoning:
                on_thinking(reasoning)
            if isinstance(message.content, str) and message.content:
                live(message.content)
            live.close()
            return response
        stream = litellm.completion(**kwargs, stream=True, stream_options={"include_usage": True})
        chunks: list[Any] = []
        try:
            for chunk in stream:
                if should_stop is not None and should_stop():
                    raise RunCancelledError("cancelled while the model was answering")
                chunks.append(chunk)
                delta = chunk.choices[0].delta if chunk.choices else None
                reasoning = getattr(delta, "reasoning_content", None)
                if isinstance(reasoning, str) and reasoning:
                    on_thinking(reasoning)
                if delta is not None and isinstance(delta.content, str) and delta.content:
                    live(delta.content)
            live.close()
        finally:
            close = getattr(stream, "close", None)
            if callable(close):
                close()
        built = litellm.stream_chunk_builder(chunks, messages=kwargs["messages"]) if chunks else None
        if built is None or not built.choices:
            raise _EmptyStreamError("the stream ended before a finish_reason: it held no answer")
        return built

    # ------------------------------------------------------------------ prices and limits

    def _price(self, usage: Usage, backend: Any = None) -> Usage:
        """The turn's usage, priced with LiteLLM's price list: cached input at the provider's cached rates,
        thinking (part of the output) at the output rate."""
        try:
            prompt_cost, completion_cost = import_litellm().cost_per_token(
                model=self.model,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                cache_read_input_tokens=usage.cached_tokens,
                cache_creation_input_tokens=usage.cache_write_tokens,
            )
        except Exception:
            return usage
        return dataclasses.replace(usage, cost_usd=float(prompt_cost + completion_cost), priced=True)

    def _model_info(self, key: str) -> int | None:
        model = self.model
        # Ollama's server says what its model is (LiteLLM asks its /api/show); other providers are looked up.
        base = self.config.api_base if model.startswith(("ollama/", "ollama_chat/")) else None
        try:
            value = import_litellm().get_model_info(model, api_base=base).get(key)
        except Exception:  # an unknown model
            return None
        return int(value) if isinstance(value, int) and value > 0 else None

    def supports_images(self) -> bool:
        try:
            return bool(import_litellm().supports_vision(model=self.model))
        except Exception:  # an unknown model: images are described in words instead
            return False

    def context_window(self) -> int:
        if self._context_window is not None:
            return self._context_window
        return self._model_info("max_input_tokens") or self._model_info("max_tokens") or 128_000


class _EmptyStreamError(RuntimeError):
    """A stream that ended without a single chunk (classified as a stream cut short)."""


class _Echo:
    """Passes streamed text on, once: an attempt that repeats what an earlier one already showed (a retry
    after a stream cut short) shows only what is new."""

    def __init__(self, sink: Callable[[str], None] | None) -> None:
        self.sink = sink
        self.shown = ""
        self.attempt = ""

    def again(self) -> None:
        self.attempt = ""

    def __call__(self, piece: str) -> None:
        self.attempt += piece
        if self.sink is None:
            return
        if self.shown.startswith(self.attempt):
            return  # said already
        if self.attempt.startswith(self.shown):
            new, self.shown = self.attempt[len(self.shown) :], self.attempt
            self.sink(new)
            return
        self.shown = self.attempt  # a different answer: shown after what was
        self.sink(piece)


def _say(on_notice: Callable[[str], None] | None, message: str) -> None:
    if on_notice is not None:
        on_notice(message)


def _sleep(seconds: float, should_stop: Callable[[], bool] | None) -> None:
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        if should_stop is not None and should_stop():
            raise RunCancelledError("cancelled while waiting to retry the model")
        time.sleep(min(0.05, left))

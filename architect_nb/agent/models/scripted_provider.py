"""The LiteLLM custom provider behind `scripted/<script.yaml>`. Imported only by `import_litellm()`."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from litellm.llms.custom_llm import CustomLLM
from litellm.types.utils import GenericStreamingChunk, ModelResponse

from architect_nb.agent.models.scripted import Script, ScriptedReply, load_script, next_reply

__all__ = ["ScriptedLLM", "scripted_provider"]

_CHUNK_CHARS = 12  # stream text in small pieces, as real models do


class ScriptedLLM(CustomLLM):
    """Answers from a script file; streams like a real model and reports token usage."""

    def __init__(self) -> None:
        super().__init__()
        self._cache: dict[Path, tuple[float, Script]] = {}
        self._lock = threading.Lock()

    def _reply(
        self,
        model: str,
        messages: list[dict[str, Any]],
        params: dict[str, Any] | None,
        metadata: dict[str, Any] | None,
    ) -> ScriptedReply:
        path = Path(model)
        mtime = path.stat().st_mtime
        with self._lock:
            cached = self._cache.get(path)
            if cached is None or cached[0] != mtime:
                cached = (mtime, load_script(path))
                self._cache[path] = cached
        tools = (params or {}).get("tools") or ()
        position = metadata or {}
        return next_reply(
            cached[1],
            messages,
            source=path.name,
            tools=tools,
            turns_before=int(position.get("turns_before", 0)),
            run_index=int(position.get("run_index", 0)),
        )

    def completion(
        self, model: str, messages: list[dict[str, Any]], *args: Any, **kwargs: Any
    ) -> ModelResponse:
        reply = self._reply(model, messages, kwargs.get("optional_params"), _metadata(kwargs))
        finish = "tool_calls" if reply.tool_calls else "stop"
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.thinking:
            message["reasoning_content"] = reply.thinking
        if reply.tool_calls:
            message["tool_calls"] = reply.tool_calls
        return ModelResponse(
            model=f"scripted/{Path(model).name}",
            choices=[{"index": 0, "message": message, "finish_reason": finish}],
            usage={
                "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": reply.completion_tokens,
                "total_tokens": reply.prompt_tokens + reply.completion_tokens,
            },
        )

    def streaming(
        self, model: str, messages: list[dict[str, Any]], *args: Any, **kwargs: Any
    ) -> Iterator[GenericStreamingChunk]:
        reply = self._reply(model, messages, kwargs.get("optional_params"), _metadata(kwargs))
        # A custom provider's stream has no field for thinking: it comes first in the text, between <think>
        # tags, as a local model writes it (the client shows it as thinking and keeps it out of the text).
        text = (
            f"<think>{reply.thinking}</think>{reply.content or ''}" if reply.thinking else reply.content or ""
        )
        for start in range(0, len(text), _CHUNK_CHARS):
            yield _chunk(text=text[start : start + _CHUNK_CHARS])
        for index, call in enumerate(reply.tool_calls):
            raw = call["function"]["arguments"]
            half = len(raw) // 2
            # Split the arguments across deltas so the client's assembly is exercised like a real stream's.
            first = {"id": call["id"], "type": "function", "index": index}
            yield _chunk(
                tool_use={**first, "function": {"name": call["function"]["name"], "arguments": raw[:half]}}
            )
            rest = {"id": None, "type": "function", "index": index}
            yield _chunk(tool_use={**rest, "function": {"name": None, "arguments": raw[half:]}})
        usage = {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        }
        yield _chunk(finished="tool_calls" if reply.tool_calls else "stop", usage=usage)

    async def acompletion(
        self, model: str, messages: list[dict[str, Any]], *args: Any, **kwargs: Any
    ) -> ModelResponse:
        return self.completion(model, messages, **kwargs)

    async def astreaming(  # type: ignore[override]
        self, model: str, messages: list[dict[str, Any]], *args: Any, **kwargs: Any
    ) -> AsyncIterator[GenericStreamingChunk]:
        for chunk in self.streaming(model, messages, **kwargs):
            yield chunk


def _metadata(kwargs: dict[str, Any]) -> dict[str, Any] | None:
    """Where the run starts in its thread, which the client passes as LiteLLM `metadata`."""
    params = kwargs.get("litellm_params") or {}
    metadata = params.get("metadata") if isinstance(params, dict) else None
    return metadata if isinstance(metadata, dict) else None


def _chunk(
    *,
    text: str = "",
    tool_use: dict[str, Any] | None = None,
    finished: str = "",
    usage: dict[str, int] | None = None,
) -> GenericStreamingChunk:
    return GenericStreamingChunk(
        text=text,
        tool_use=tool_use,  # type: ignore[typeddict-item]
        is_finished=bool(finished),
        finish_reason=finished,
        usage=usage,  # type: ignore[typeddict-item]
        index=0,
    )


_provider: ScriptedLLM | None = None


def scripted_provider() -> ScriptedLLM:
    global _provider  # noqa: PLW0603 - one handler per process, registered with LiteLLM
    if _provider is None:
        _provider = ScriptedLLM()
    return _provider

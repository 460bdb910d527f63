"""A model behind an OpenAI-compatible gateway (a LiteLLM proxy), called over HTTP without LiteLLM.

On a JupyterHub node, each kernel that imports LiteLLM holds about 280 MB more and waits seconds for the
import; a class runs dozens of kernels. When `llm.gateway` is on (or the model is named
`litellm_proxy/<model>`), the kernel posts to `llm.api_base`'s `/chat/completions` with `httpx` instead:
tens of megabytes, imported in a fraction of a second (by the warm-up, before the first cell). The proxy
holds the providers' keys, the budgets and the model allow list; the kernel holds one virtual key, from
`llm.api_key_env` or else `LITELLM_PROXY_API_KEY` (what the hub sets for each user), and the URL from
`llm.api_base` or else `LITELLM_PROXY_API_BASE`.

`GatewayClient` is `LiteLLMClient` with another way to make one attempt, so the turn is the same: retries
and their notices, length cuts, refusals, the live text. A turn is priced from the proxy's
`x-litellm-response-cost` header when it sends one (it does for unstreamed answers), else from LiteLLM's
bundled price list (`price_list`, read without importing LiteLLM). A spent budget and a refused key each end
in one sentence that says what to do (`model_failures.explain`). A rate limit (429) is the class gateway
being busy (its rpm or `max_parallel_requests` limit reached by the whole class): the cell says so and the
call waits and tries again, with jittered backoff, for as long as it takes or until the person interrupts it
(`retry_policy.BusyGatewayPolicy`).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from architect_nb.agent.models.client import LLMError, RunCancelledError
from architect_nb.agent.models.gateway_wire import (
    APIConnectionError,
    StreamedAnswer,
    Timeout,
    answer,
    event_data,
    http_error,
)
from architect_nb.agent.models.llm import SCRIPTED_PREFIX, LiteLLMClient
from architect_nb.agent.models.model_failures import Failure, explain
from architect_nb.agent.models.model_reply import Usage
from architect_nb.agent.models.price_list import ListedModel, model_entry, price
from architect_nb.agent.models.prompt_cache import needs_markers, with_markers
from architect_nb.agent.models.retry_policy import MAX_WAIT_S, BusyGatewayPolicy, RetryPolicy
from architect_nb.agent.models.text_tool_calls import LiveText
from architect_nb.config.schema import LLMConfig

if TYPE_CHECKING:
    import ssl

    import httpx

__all__ = [
    "BASE_ENV",
    "KEY_ENV",
    "PROXY_PREFIX",
    "GatewayClient",
    "uses_gateway",
    "warm_up_http",
]

PROXY_PREFIX = "litellm_proxy/"  # LiteLLM's own name for a model behind its proxy
KEY_ENV = "LITELLM_PROXY_API_KEY"  # LiteLLM's variables for its proxy, so in-process LiteLLM reads them too
BASE_ENV = "LITELLM_PROXY_API_BASE"
COST_HEADER = "x-litellm-response-cost"


def uses_gateway(config: LLMConfig) -> bool:
    """Whether `config` names a gateway: `llm.gateway`, or unset and a `litellm_proxy/` model."""
    if config.model.startswith(SCRIPTED_PREFIX):
        return False
    return config.gateway if config.gateway is not None else config.model.startswith(PROXY_PREFIX)


def warm_up_http() -> None:
    """Import what the first gateway call needs (the HTTP stack and its parts loaded on a first request)."""
    import h11  # noqa: F401
    import httpcore  # noqa: F401
    import httpx

    httpx.Client(verify=_tls()).close()


def _tls() -> ssl.SSLContext:
    """The process's TLS context for gateways, made once per CA setting (`SSL_CERT_FILE`, `SSL_CERT_DIR`).
    httpx makes one per client by default, loading the whole CA bundle: 50 ms of CPU for every run, which a
    class of 30 starting at once pays on the node's few cores."""
    return _tls_for(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _tls_for(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    import httpx

    return httpx.create_ssl_context()  # reads the same variables, as each client would


class _Attempts:
    """One turn's HTTP client, and the costs the gateway reported for its attempts that answered."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http
        self.costs: list[float | None] = []


class GatewayClient(ListedModel, LiteLLMClient):
    """A model reached through a gateway's Chat Completions endpoint, with `httpx`."""

    def __init__(
        self, config: LLMConfig, *, workspace: Path | None = None, context_window: int | None = None
    ) -> None:
        super().__init__(config, workspace=workspace, context_window=context_window)
        base = config.api_base or os.environ.get(BASE_ENV)
        if not base:
            raise LLMError(
                f"llm.gateway is on but there is no gateway URL: set llm.api_base (or {BASE_ENV}) to the "
                "proxy's address, for example http://litellm:4000."
            )
        self.base = base.rstrip("/")
        self.key_env = config.api_key_env or KEY_ENV
        self.served_name = config.model.removeprefix(PROXY_PREFIX)  # the name the proxy knows it by
        self._http: httpx.Client | None = None

    def endpoint(self) -> str | None:
        return self.base

    # ------------------------------------------------------------------ one attempt

    def _backend(self) -> _Attempts:
        import httpx  # imported here, so `import architect_nb` stays cheap (the warm-up imports it early)

        if self._http is None:
            read = float(self.config.timeout)  # seconds with nothing received, as llm.timeout means
            timeout = httpx.Timeout(read, connect=min(read, 10.0))
            self._http = httpx.Client(timeout=timeout, verify=_tls())
            weakref.finalize(self, self._http.close)  # its pooled connections close with the client
        return _Attempts(self._http)

    def _retry_policy(self) -> RetryPolicy:
        return BusyGatewayPolicy(self.config.retries, float(self.config.timeout))

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None

    def _request(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        thread_position: tuple[int, int],
    ) -> dict[str, Any]:
        marked = self.cache_markers and needs_markers(self.served_name)
        body: dict[str, Any] = {
            "model": self.served_name,
            "messages": with_markers(messages) if marked else list(messages),
        }
        if self.config.thinking is not None:  # the proxy passes both on to its provider as LiteLLM would
            body["thinking"] = {"type": "enabled", "budget_tokens": self.config.thinking}
        if self.config.reasoning_effort is not None:
            body["reasoning_effort"] = self.config.reasoning_effort
        if self.config.max_tokens is not None:
            body["max_tokens"] = self.config.max_tokens
        if tools:
            body["tools"] = list(tools)
        return body

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.key_env)
        return {"authorization": f"Bearer {key}"} if key else {}

    def _call(
        self,
        backend: _Attempts,
        kwargs: dict[str, Any],
        on_text: Callable[[str], None],
        on_thinking: Callable[[str], None],
        should_stop: Callable[[], bool] | None,
    ) -> Any:
        import httpx

        url = f"{self.base}/chat/completions"
        live = LiveText(on_text, on_thinking)
        try:
            if not self.config.stream:
                response = backend.http.post(url, json=kwargs, headers=self._headers())
                if response.status_code >= 400:
                    raise http_error(response.status_code, response.text, response.headers)
                built = answer(response.json())
                message = built.choices[0].message if built.choices else None
                reasoning = getattr(message, "reasoning_content", None)
                if isinstance(reasoning, str) and reasoning:
                    on_thinking(reasoning)
                if message is not None and isinstance(message.content, str) and message.content:
                    live(message.content)
                live.close()
                backend.costs.append(_cost(response.headers))
                if not built.choices:
                    raise APIConnectionError("the gateway's answer held no choice: stream ended before")
                return built
            body = {**kwargs, "stream": True, "stream_options": {"include_usage": True}}
            with backend.http.stream("POST", url, json=body, headers=self._headers()) as response:
                if response.status_code >= 400:
                    said = response.read().decode(errors="replace")
                    raise http_error(response.status_code, said, response.headers)
                streamed = _read_stream(response, live, on_thinking, should_stop)
                backend.costs.append(_cost(response.headers))
            return streamed.result()
        except httpx.TimeoutException as exc:
            raise Timeout(f"the gateway sent nothing for {self.config.timeout} s: timed out ({exc})") from exc
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            raise APIConnectionError(f"peer closed connection: stream ended before its end ({exc})") from exc
        except httpx.TransportError as exc:
            raise APIConnectionError(f"the gateway {self.base} could not be reached ({exc})") from exc
        except json.JSONDecodeError as exc:
            raise APIConnectionError(f"the gateway sent something that is not JSON ({exc})") from exc

    # ------------------------------------------------------------------ failures

    def _explain(self, failure: Failure, policy: RetryPolicy, litellm: Any) -> str:
        if failure.kind == "auth" and "not allowed to access model" in failure.detail:
            return (
                f"The gateway {self.base} does not let your key use {self.served_name} ({failure.detail}); "
                "pick a model it allows."
            )
        return explain(
            failure,
            self.served_name,
            timeout=float(self.config.timeout),
            retried=policy.tries,
            max_wait=MAX_WAIT_S,
            gateway=self.base,
            key_env=self.key_env if os.environ.get(self.key_env) else None,
        )

    # ------------------------------------------------------------------ prices and limits

    def _price(self, usage: Usage, backend: Any = None) -> Usage:
        costs = backend.costs if isinstance(backend, _Attempts) else []
        if costs and all(cost is not None for cost in costs):
            return dataclasses.replace(usage, cost_usd=sum(c or 0.0 for c in costs), priced=True)
        return price(usage, self._entry())

    def _entry(self) -> dict[str, Any] | None:
        return model_entry(self.served_name)


def _read_stream(
    response: httpx.Response,
    live: LiveText,
    on_thinking: Callable[[str], None],
    should_stop: Callable[[], bool] | None,
) -> StreamedAnswer:
    streamed = StreamedAnswer()
    for line in response.iter_lines():
        if should_stop is not None and should_stop():
            raise RunCancelledError("cancelled while the model was answering")
        data = event_data(line)
        if data is None:
            continue
        if isinstance(data.get("error"), Mapping):  # a failure after the stream began (the proxy's words)
            error = data["error"]
            status = _int(error.get("code")) or 500
            raise http_error(status, json.dumps(data), response.headers)
        text, thought = streamed.add(data)
        if thought:
            on_thinking(thought)
        if text:
            live(text)
    live.close()
    if streamed.finish is None:
        raise APIConnectionError("the stream ended before a finish_reason: it held no answer")
    return streamed


def _cost(headers: Mapping[str, str]) -> float | None:
    """The proxy's price of the answer, or None when it did not say (streamed answers, other gateways)."""
    try:
        value = float(headers.get(COST_HEADER) or "")
    except ValueError:
        return None
    return value if value >= 0 else None


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None

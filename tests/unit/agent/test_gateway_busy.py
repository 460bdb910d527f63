"""A busy class gateway: its 429s are waited out without a count, and the run ends as if nothing happened.

A LiteLLM proxy whose rpm or `max_parallel_requests` limit the whole class has reached answers 429; a
student's run must not fail for that. The gateway client says the class gateway is busy and tries again with
a jittered backoff (honouring `retry-after`, but not a parallel limit's wait for its rate window's end) until
it gets through or the person interrupts the cell. A spent budget and a refused key are still not retried.
Against the local OpenAI-compatible server, with `retry-after` values of hundredths of a second.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from architect_nb.agent import LiteLLMClient, LLMError, create_loop
from architect_nb.agent.events import AgentEvent, RunWarning
from architect_nb.agent.models.client import RunCancelledError
from architect_nb.agent.models.gateway import GatewayClient
from architect_nb.agent.models.model_failures import Failure
from architect_nb.agent.models.retry_policy import BusyGatewayPolicy, RetryPolicy
from architect_nb.config import LLMConfig, load_config
from architect_nb.testing.openai_server import OpenAIStubServer, Reply

USER = [{"role": "user", "content": "hi"}]
PARALLEL = "Max parallel request limit reached Hit Global Limit: Limit=10, current: 10"
RPM = "Rate limit exceeded for api_key: class-key. Limit type: requests. Current limit: 60, Remaining: 0."
BUDGET = "Budget has been exceeded! Current cost: 0.0021, Max budget: 0.002"


@pytest.fixture(scope="module")
def server() -> Any:
    with OpenAIStubServer() as stub:
        yield stub


@pytest.fixture(autouse=True)
def _fresh(server: OpenAIStubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LITELLM_PROXY_API_KEY", "sk-student-0123456789")
    server.replies.clear()
    server.requests.clear()
    server.request_times.clear()


def proxy_429(message: str, retry_after: str | None = None, kind: str = "throttling_error") -> Reply:
    """A 429 as LiteLLM's proxy words it, with its `retry-after` header."""
    headers = (("retry-after", retry_after),) if retry_after is not None else ()
    body = {"error": {"message": message, "type": kind, "param": None, "code": "429"}}
    return Reply(status=429, error_body=body, headers=headers)


def gateway(server: OpenAIStubServer, retries: int = 1) -> GatewayClient:
    return GatewayClient(LLMConfig(model="litellm_proxy/gpt-4o-mini", api_base=server.url, retries=retries))


def busy(failure_detail: str, retry_after: float | None = None) -> Failure:
    return Failure("rate_limit", "RateLimitError", 429, failure_detail, retry_after)


def warnings(events: list[AgentEvent]) -> list[str]:
    return [e.message for e in events if isinstance(e, RunWarning)]


# --------------------------------------------------------------------------- a whole run


def test_many_busy_answers_then_answers_end_the_run_normally_with_the_busy_notices(
    server: OpenAIStubServer, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    llm = {"model": "litellm_proxy/gpt-4o-mini", "api_base": server.url, "retries": 1}
    config = load_config(overrides={"workspace.root": str(tmp_path), "llm": llm}, environ={})
    server.queue(
        *[proxy_429(PARALLEL, "0.01")] * 12,  # six times llm.retries, and more
        Reply.calls(("read_file", {"path": "notes.txt"})),
        *[proxy_429(RPM, "0.02")] * 3,
        Reply.text("The notes say hello."),
    )
    events: list[AgentEvent] = []
    loop = create_loop(config, mode="yolo", on_event=events.append)
    try:
        result = loop.run("What do the notes say?")
    finally:
        loop.close()
    assert result.stop_reason == "completed", result.message
    assert result.final_text == "The notes say hello."
    said = [w for w in warnings(events) if w.startswith("The class gateway is busy")]
    assert len(said) == 15 and len(server.requests) == 17
    assert said[0].startswith(f"The class gateway is busy (429: {PARALLEL}); retrying in 0.0 s (retry 1).")
    assert "(retry 12)" in said[11] and said[12].startswith(f"The class gateway is busy (429: {RPM}); ")
    assert "(retry 1)" in said[12]  # each model call has its own busy spell
    assert all(w.endswith("Interrupt the cell to stop waiting.") for w in said)
    assert server.requests[-1]["messages"][-1]["role"] == "tool"  # the run went on where it was


def test_a_busy_wait_stops_promptly_when_the_person_interrupts(
    server: OpenAIStubServer, tmp_path: Path
) -> None:
    llm = {"model": "litellm_proxy/gpt-4o-mini", "api_base": server.url}
    config = load_config(overrides={"workspace.root": str(tmp_path), "llm": llm}, environ={})
    server.queue(proxy_429(RPM, "30"))  # a rate limit's retry-after is honoured: 30 s and a little more
    events: list[AgentEvent] = []
    loop = create_loop(config, mode="yolo", on_event=events.append)
    timer = threading.Timer(0.3, loop.cancel)  # the person interrupts the cell while it waits
    started = time.monotonic()
    timer.start()
    try:
        result = loop.run("Say hello.")
    finally:
        timer.cancel()
        loop.close()
    assert result.stop_reason == "interrupted" and time.monotonic() - started < 2
    assert len(server.requests) == 1
    (notice,) = warnings(events)
    assert notice.startswith("The class gateway is busy (429: Rate limit exceeded")
    assert "retrying in 3" in notice


def test_a_busy_wait_ends_at_the_runs_time_limit(server: OpenAIStubServer, tmp_path: Path) -> None:
    """An unattended run (a batch) against a gateway that stays busy ends at its own time limit."""
    llm = {"model": "litellm_proxy/gpt-4o-mini", "api_base": server.url}
    config = load_config(overrides={"workspace.root": str(tmp_path), "llm": llm}, environ={})
    server.queue(proxy_429(RPM, "30"))
    loop = create_loop(config, mode="yolo", timeout_s=0.5)
    started = time.monotonic()
    try:
        result = loop.run("Say hello.")
    finally:
        loop.close()
    assert result.stop_reason == "timeout" and time.monotonic() - started < 2.5
    assert result.message == "Stopped: the run took longer than 0.5 s."


def test_cancel_is_seen_during_the_wait_itself(server: OpenAIStubServer) -> None:
    server.queue(proxy_429(RPM, "20"))
    stop = threading.Event()
    threading.Timer(0.2, stop.set).start()
    started = time.monotonic()
    with pytest.raises(RunCancelledError):
        gateway(server).complete(USER, [], should_stop=stop.is_set)
    assert time.monotonic() - started < 1.5 and len(server.requests) == 1


# --------------------------------------------------------------------------- what is still not retried


@pytest.mark.parametrize("status", [400, 429])
def test_a_spent_budget_after_busy_answers_is_not_retried(server: OpenAIStubServer, status: int) -> None:
    budget = proxy_429(BUDGET, kind="budget_exceeded").with_(status=status)
    server.queue(*[proxy_429(PARALLEL, "0.01")] * 3, budget, Reply.text("never reached"))
    notices: list[str] = []
    with pytest.raises(LLMError) as raised:
        gateway(server, retries=0).complete(USER, [], on_notice=notices.append)
    assert str(raised.value).startswith("The gateway refuses to call gpt-4o-mini: the budget is spent")
    assert len(server.requests) == 4 and len(notices) == 3


def test_a_refused_key_after_busy_answers_is_not_retried(server: OpenAIStubServer) -> None:
    refused = proxy_429("Authentication Error, Invalid proxy server token passed.", kind="auth_error")
    server.queue(proxy_429(PARALLEL, "0.01"), refused.with_(status=401), Reply.text("never reached"))
    with pytest.raises(LLMError, match=r"refused the key in LITELLM_PROXY_API_KEY \(401: Authentication"):
        gateway(server).complete(USER, [])
    assert len(server.requests) == 2


# --------------------------------------------------------------------------- how long each wait is


def test_a_parallel_limit_is_not_waited_for_its_rate_windows_end() -> None:
    """LiteLLM's limiters send the time to their window's end (up to 60 s) for a parallel limit too."""
    v1 = busy(PARALLEL, retry_after=58.0)
    v3 = busy("Rate limit exceeded for api_key: k. Limit type: max_parallel_requests. Current limit: 2", 60.0)
    for failure in (v1, v3):
        policy = BusyGatewayPolicy(retries=2, timeout=60)
        waits = [policy.wait(failure) for _ in range(8)]
        assert all(w is not None and w <= 15 for w in waits), waits
        assert waits[0] is not None and waits[0] <= 1.5  # a place frees when any request ends
    rpm = BusyGatewayPolicy(retries=2, timeout=60).wait(busy(RPM, retry_after=20.0))
    assert rpm is not None and 20.0 <= rpm <= 25.0  # a rate limit's own time is honoured


def test_busy_waits_are_spread_so_a_class_does_not_come_back_in_lockstep() -> None:
    firsts = [BusyGatewayPolicy(retries=2, timeout=60).wait(busy(PARALLEL)) or 0.0 for _ in range(30)]
    assert all(0.5 <= w <= 1.5 for w in firsts) and max(firsts) - min(firsts) > 0.3
    told = busy(RPM, retry_after=2.0)
    asked = [BusyGatewayPolicy(retries=2, timeout=60).wait(told) or 0.0 for _ in range(30)]
    assert all(2.0 <= w <= 2.5 for w in asked) and len(set(asked)) > 1
    policy = BusyGatewayPolicy(retries=0, timeout=60)
    later = [policy.wait(busy(PARALLEL)) or 0.0 for _ in range(12)]
    assert later[5] >= 5 and max(later) <= 15  # backs off to its cap, and never stops
    assert policy.busy == 12 and policy.tries == 0


def test_in_process_litellm_keeps_its_counted_retries() -> None:
    policy = LiteLLMClient(LLMConfig(model="openai/gpt-4o-mini", retries=1))._retry_policy()
    assert type(policy) is RetryPolicy
    assert policy.wait(busy(PARALLEL, 0.0)) == 0.0 and policy.wait(busy(PARALLEL, 0.0)) is None
    assert "rate limiting" in policy.notice(busy(PARALLEL, 0.0), 0.0)

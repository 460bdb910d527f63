"""Which failed model calls are tried again, after how long, and what the person is told while they wait.

Rate limits (429), an overloaded provider (529, 503), server errors, connection errors and a stream that
stalled past `llm.timeout` are retried up to `llm.retries` times. The wait honours the provider's
`retry-after` (up to `MAX_WAIT_S`: a longer one is a quota, and the call fails saying so), else it backs off
exponentially with jitter. A stream that ended early is asked again once. Every other failure (a refused
key, an unknown model, a context window exceeded, a refusal) is not retried here: retrying cannot fix it.
Each wait is announced (`notice`) before it starts, and can be cancelled.

`BusyGatewayPolicy` is the gateway client's: a 429 from a class gateway (a LiteLLM proxy at its rpm or
`max_parallel_requests` limit) says the class is busy, not that the run is wrong, so it is waited out however
often it comes, outside `llm.retries`, until the person interrupts the cell. A spent budget (`budget`, told
apart before rate limits) and a refused key still end the call at once.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from architect_nb.agent.models.model_failures import Failure

__all__ = ["BUSY_CAP_S", "BUSY_FIRST_S", "MAX_WAIT_S", "BusyGatewayPolicy", "RetryPolicy", "busy_delay"]

MAX_WAIT_S = 120.0
BUSY_FIRST_S = 1.0  # a busy gateway's first backoff: a request in flight there ends within seconds
BUSY_CAP_S = 10.0  # the longest backoff while it stays busy (before jitter)
# A limit on requests in flight (LiteLLM's "Max parallel request limit reached", its v3 limiter's "Limit type:
# max_parallel_requests"), as opposed to one on requests per minute.
_IN_FLIGHT = re.compile(r"parallel|concurren", re.IGNORECASE)
_BACKED_OFF = frozenset({"rate_limit", "overloaded", "server", "connection", "stalled"})
_WHAT = {
    "rate_limit": "The provider is rate limiting the model",
    "overloaded": "The provider is overloaded",
    "server": "The provider failed",
    "connection": "The model could not be reached",
}


@dataclass
class RetryPolicy:
    """The retries of one model call. `wait` says how long to wait before the next try, or None to stop."""

    retries: int
    timeout: float
    tries: int = 0  # retries made so far
    cut_short: int = 0  # of them, after a stream that ended early
    busy: int = 0  # waits for a busy gateway (`BusyGatewayPolicy`), not counted in `tries`

    def wait(self, failure: Failure) -> float | None:
        if self.tries >= self.retries:
            return None
        if failure.kind == "cut_short":
            if self.cut_short >= 1:
                return None
            self.cut_short += 1
            self.tries += 1
            return 0.2
        if failure.kind not in _BACKED_OFF:
            return None
        if failure.retry_after is not None and failure.retry_after > MAX_WAIT_S:
            return None
        self.tries += 1
        if failure.retry_after is not None:
            return failure.retry_after
        jitter = 0.75 + random.random() / 2  # noqa: S311 - jitter, not cryptography
        return float(min(30.0, 0.5 * 2 ** (self.tries - 1)) * jitter)

    def notice(self, failure: Failure, delay: float) -> str:
        """What the cell says while it waits to retry (after `wait` said how long)."""
        if failure.kind == "cut_short":
            return f"The model's answer stopped before its end ({failure.detail}); asking again."
        said = f"{failure.status}: {failure.detail}" if failure.status else failure.detail
        if failure.kind == "stalled":
            what = f"The model sent nothing for {self.timeout:g} s (llm.timeout)"
        else:
            what = f"{_WHAT.get(failure.kind, 'The model call failed')} ({said})"
        asked = " as the provider asked" if failure.retry_after is not None else ""
        return (
            f"{what}; waiting {delay:.1f} s{asked} before retry {self.tries} of {self.retries}. "
            "Interrupt the cell to stop waiting."
        )


@dataclass
class BusyGatewayPolicy(RetryPolicy):
    """A gateway's retries: its rate limits are waited out without a count, each wait jittered, so that the
    kernels of a class turned away together do not come back together. Only a `retry-after` longer than
    `MAX_WAIT_S` (a quota, not a busy minute) ends the call; the person can always interrupt the wait."""

    def wait(self, failure: Failure) -> float | None:
        if failure.kind != "rate_limit":
            return super().wait(failure)
        if failure.retry_after is not None and failure.retry_after > MAX_WAIT_S:
            return None
        self.busy += 1
        return busy_delay(failure, self.busy)

    def notice(self, failure: Failure, delay: float) -> str:
        if failure.kind != "rate_limit":
            return super().notice(failure, delay)
        said = f"{failure.status}: {failure.detail}" if failure.status else failure.detail
        shown = f"{delay:.0f}" if delay >= 10 else f"{delay:.1f}"
        return (
            f"The class gateway is busy ({said}); retrying in {shown} s (retry {self.busy}). "
            "Interrupt the cell to stop waiting."
        )


def busy_delay(failure: Failure, tries: int) -> float:
    """How long to wait before try `tries` + 1 at a busy gateway: its `retry-after` with up to a quarter more,
    else a backoff doubling from `BUSY_FIRST_S` to `BUSY_CAP_S`, spread over half to one and a half times."""
    doubled = float(BUSY_FIRST_S * 2.0 ** min(tries - 1, 16))  # the cap long before a float overflows
    backoff = min(BUSY_CAP_S, doubled) * (0.5 + random.random())  # noqa: S311 - jitter, not cryptography
    after = failure.retry_after
    if after is None:
        return backoff
    if after > backoff and _IN_FLIGHT.search(failure.detail):
        # LiteLLM's proxy answers a limit on requests in flight with the time to its rate window's end (up to
        # 60 s), but a place frees as soon as any request in flight ends: a class would idle for a minute.
        return backoff
    return after * (1 + random.random() / 4)  # noqa: S311 - jitter, not cryptography

"""Which failed model calls are tried again, after how long, and what the person is told while they wait.

Rate limits (429), an overloaded provider (529, 503), server errors, connection errors and a stream that
stalled past `llm.timeout` are retried up to `llm.retries` times. The wait honours the provider's
`retry-after` (up to `MAX_WAIT_S`: a longer one is a quota, and the call fails saying so), else it backs off
exponentially with jitter. A stream that ended early is asked again once. Every other failure (a refused
key, an unknown model, a context window exceeded, a refusal) is not retried here: retrying cannot fix it.
Each wait is announced (`notice`) before it starts, and can be cancelled.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from architect_nb.agent.models.model_failures import Failure

__all__ = ["MAX_WAIT_S", "RetryPolicy"]

MAX_WAIT_S = 120.0
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

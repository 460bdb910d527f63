"""`CallOutcome`: how one tool call ended, said by the layer that decided it, never guessed back from flags.

The engine decides most outcomes (a guardrail or a hook refused the call, a person denied it, it was only
described); the agent loop decides those of calls it never sends to the engine (a tool not offered to the
run, arguments that are not JSON, a call skipped while stepping). A tool's own result is `OK` or `FAILED`.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["CallOutcome"]


class CallOutcome(StrEnum):
    """How a call ended. Its value is the status the run's record and the timeline show."""

    OK = "ok"  # the tool ran and did what was asked
    FAILED = "failed"  # the tool ran and failed, or the engine broke while handling it
    INVALID = "invalid"  # a malformed call (unknown tool, arguments that do not validate): nothing ran
    DENIED = "denied"  # a person said no
    BLOCKED = "blocked"  # a guardrail, a rule or a pre_tool_use hook refused it
    ABORTED = "aborted"  # the person aborted the run
    DRY_RUN = "dry_run"  # described, not run
    SKIPPED = "skipped"  # not run: a person skipped it while stepping, or the run stopped before it
    NEEDS_PERSON = "needs_person"  # it needed a person's approval, and nobody could be asked

    @property
    def broke(self) -> bool:
        """A tool (or the engine) broke: what `on_error` hooks are for. A refusal is no error."""
        return self is CallOutcome.FAILED

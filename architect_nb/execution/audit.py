"""The audit log: one record per tool call, logged once through structlog and kept for the run transcript.

A record holds the tool, its arguments, the decision taken at each pipeline step, the duration and whether
the call succeeded. Arguments are redacted (secrets) and shortened only when a record is logged or turned
into a transcript, so a call whose log level filters it out pays nothing for it.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from architect_nb.log import get_logger
from architect_nb.redaction import default_redactor

__all__ = ["AuditLog", "AuditRecord", "AuditStep"]

_INFO = 20
_MAX_ARG_CHARS = 2000


@dataclass(frozen=True, slots=True)
class AuditStep:
    """One pipeline step's outcome: `step` (lookup, validate, guardrails, ...), `decision`, `detail`."""

    step: str
    decision: str
    detail: str = ""


@dataclass(slots=True, kw_only=True)
class AuditRecord:
    call_id: int
    run_id: str
    tool: str
    args: Mapping[str, Any]
    started_at: float = field(default_factory=time.time)
    steps: list[AuditStep] = field(default_factory=list)
    duration: float = 0.0
    success: bool = False
    error: str | None = None

    def step(self, step: str, decision: str, detail: str = "") -> None:
        self.steps.append(AuditStep(step, decision, detail))

    def decision(self, step: str) -> str | None:
        """The decision recorded for `step` (the last one, if it ran twice), or None."""
        for s in reversed(self.steps):
            if s.step == step:
                return s.decision
        return None

    def as_dict(self) -> dict[str, Any]:
        """A JSON-able, redacted view for logs and transcripts."""
        redactor = default_redactor()
        return {
            "call_id": self.call_id,
            "run_id": self.run_id,
            "tool": self.tool,
            "args": _shorten(
                redactor.redact_data(self.args)
            ),  # redacted first: no cut leaves part of a secret
            "steps": [
                {
                    "step": s.step,
                    "decision": s.decision,
                    **({"detail": redactor.redact(s.detail)} if s.detail else {}),
                }
                for s in self.steps
            ],
            "started_at": self.started_at,
            "duration_ms": round(self.duration * 1000, 3),
            "success": self.success,
            "error": redactor.redact(self.error) if self.error else None,
        }


def _shorten(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= _MAX_ARG_CHARS else value[:_MAX_ARG_CHARS] + f"... [{len(value)} chars]"
    if isinstance(value, Mapping):
        return {str(k): _shorten(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_shorten(v) for v in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    return _shorten(str(value))


class AuditLog:
    """The last `maxlen` call records, in order. Thread-safe."""

    def __init__(self, maxlen: int = 10_000) -> None:
        self._records: deque[AuditRecord] = deque(maxlen=maxlen)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._log = get_logger("architect_nb.audit")

    def new_record(self, run_id: str, tool: str, args: Mapping[str, Any]) -> AuditRecord:
        return AuditRecord(call_id=next(self._ids), run_id=run_id, tool=str(tool), args=args)

    def commit(self, record: AuditRecord) -> None:
        """Keep `record` and log it once (at info level, only if that level is enabled)."""
        with self._lock:
            self._records.append(record)
        bound = self._log.bind()
        if bound.is_enabled_for(_INFO):
            bound.info("tool_call", **record.as_dict())

    def records(self, run_id: str | None = None) -> list[AuditRecord]:
        with self._lock:
            return [r for r in self._records if run_id is None or r.run_id == run_id]

    def to_transcript(self, run_id: str | None = None) -> list[dict[str, Any]]:
        """The records (of one run, or all) as redacted dicts, oldest first."""
        return [r.as_dict() for r in self.records(run_id)]

    def clear(self) -> None:
        with self._lock:
            self._records.clear()

    def __iter__(self) -> Iterator[AuditRecord]:
        return iter(self.records())

    def __len__(self) -> int:
        with self._lock:
            return len(self._records)

"""`QualityGateResult`: what one quality gate reported. Its own module, so the gate runners (commands, kernel
checks, notebook checks) all build it and `quality_gates` imports them one way."""

from __future__ import annotations

import time
from dataclasses import dataclass

from architect_nb.config.schema import QualityGateConfig

__all__ = ["QualityGateResult"]


@dataclass(frozen=True, slots=True, kw_only=True)
class QualityGateResult:
    name: str
    passed: bool
    required: bool
    exit_code: int | None
    output: str
    duration: float

    def report(self) -> str:
        state = "passed" if self.passed else ("FAILED" if self.required else "failed (optional)")
        return f"[Quality gate {self.name}: {state}]" + (f"\n{self.output}" if not self.passed else "")

    @classmethod
    def judged(cls, gate: QualityGateConfig, started: float, passed: bool, output: str) -> QualityGateResult:
        """The result of a gate judged in-process (a kernel or notebook check) that began at `started`
        (`time.perf_counter()`)."""
        return cls(
            name=gate.name,
            passed=passed,
            required=gate.required,
            exit_code=0 if passed else 1,
            output=output,
            duration=time.perf_counter() - started,
        )

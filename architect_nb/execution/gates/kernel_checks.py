"""Kernel checks: quality gates that are Python expressions evaluated in the notebook's kernel.

A check such as `cleaning.clean(raw).equals(df)` proves a refactor on the person's real data. It runs when
the agent says it is done, like the command gates. It sees the person's variables through a fresh scratch
layer (never the names the agent's own run_python made, so the agent cannot pass it by defining `df`), and
imports the workspace's modules afresh, so it tests the code on disk. Truthy passes; falsy, an exception or
the time bound fails, and the output goes back to the model.
"""

from __future__ import annotations

import time
from pathlib import Path

from architect_nb.config.schema import QualityGateConfig
from architect_nb.execution.gates.gate_result import QualityGateResult
from architect_nb.python_syntax import parse_expression
from architect_nb.tools.kernel.execute import CodeOutcome, run_code
from architect_nb.tools.kernel.kernel_tools import fresh_workspace_modules
from architect_nb.tools.kernel.namespace import ScratchNamespace
from architect_nb.tools.kernel.session import KernelSession

__all__ = ["run_kernel_check"]

_RESULT = "__architect_check__"


def run_kernel_check(
    gate: QualityGateConfig, session: KernelSession | None, workspace_root: Path
) -> QualityGateResult:
    started = time.perf_counter()
    expression = gate.python or ""

    def result(passed: bool, output: str) -> QualityGateResult:
        return QualityGateResult.judged(gate, started, passed, output)

    if session is None:
        return result(False, "a kernel check needs a kernel: run the agent from a notebook cell")
    try:
        parse_expression(expression)
    except SyntaxError as exc:
        return result(
            False, f"`{expression}` is not a Python expression ({exc.msg}); fix guardrails.quality_gates"
        )
    namespace = ScratchNamespace(session.namespace)
    code = f"{_RESULT} = bool(\n{expression}\n)"

    def work() -> CodeOutcome:
        with fresh_workspace_modules(workspace_root):
            return run_code(code, namespace, timeout=float(gate.timeout), displays=session.displays)

    outcome = session.call(work)
    printed = "\n".join(part for part in (outcome.stdout.strip(), outcome.stderr.strip()) if part)
    if outcome.timed_out or outcome.interrupted:
        why = f"timed out after {gate.timeout}s" if outcome.timed_out else "was interrupted"
        return result(False, f"`{expression}` {why}\n{printed}".strip())
    if outcome.error is not None:
        return result(False, f"`{expression}` raised:\n{outcome.error}\n{printed}".strip())
    if not namespace.get(_RESULT):
        return result(False, f"`{expression}` is false\n{printed}".strip())
    return result(True, f"`{expression}` is true\n{printed}".strip())

"""Quality gates: what runs when the agent says it is done, and what each gate reported.

A gate is a shell command run in the workspace (exit 0 passes), a kernel check (`python:`, an expression
evaluated in the notebook's kernel, `kernel_checks`) or a notebook check (`notebook:`, the notebook run
before and after the run and its outputs compared, `notebook_checks`). A failed required gate goes back to
the model, which keeps working; an optional one only warns.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from architect_nb.config.schema import QualityGateConfig
from architect_nb.execution.gates.gate_result import QualityGateResult
from architect_nb.process_group import process_group, wait_or_kill

if TYPE_CHECKING:
    from architect_nb.tools.kernel.session import KernelSession

__all__ = ["QualityGateResult", "gates_passed", "run_command_gate", "run_quality_gates"]

_MAX_OUTPUT_CHARS = 4000


def run_quality_gates(
    gates: Iterable[QualityGateConfig],
    workspace_root: Path,
    kernel: KernelSession | None = None,
    write_before: Callable[[Path], list[str]] | None = None,
) -> list[QualityGateResult]:
    """Run `gates` in order: commands in the workspace, kernel checks in `kernel`, notebook checks against
    the workspace as `write_before(folder)` writes it (as it was before the run)."""
    results = []
    for gate in gates:
        if gate.notebook is not None:
            from architect_nb.execution.gates.notebook_checks import run_notebook_gate  # runs notebooks: lazy

            results.append(run_notebook_gate(gate, workspace_root, write_before))
        elif gate.python is not None:
            from architect_nb.execution.gates.kernel_checks import run_kernel_check  # the kernel tools: lazy

            results.append(run_kernel_check(gate, kernel, workspace_root))
        elif gate.command is not None:
            results.append(run_command_gate(gate, workspace_root))
    return results


def gates_passed(results: Iterable[QualityGateResult]) -> bool:
    """True when every required gate passed."""
    return all(r.passed or not r.required for r in results)


def run_command_gate(gate: QualityGateConfig, cwd: Path) -> QualityGateResult:
    """Run a command gate in its own process group, killed with everything it started at its timeout."""
    started = time.perf_counter()
    # A file, not a pipe: a background job that keeps a pipe open cannot make the gate wait for it.
    with tempfile.TemporaryFile() as output:
        with process_group(  # noqa: S604 - quality gates are shell commands the person configured
            gate.command or "",
            shell=True,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
        ) as proc:
            code = wait_or_kill(proc, gate.timeout)
        output.seek(0)
        text = output.read().decode("utf-8", "replace")
    if code is None:
        text = f"timed out after {gate.timeout}s and was stopped"
    text = text.strip()
    if len(text) > _MAX_OUTPUT_CHARS:
        text = "[...]\n" + text[-_MAX_OUTPUT_CHARS:]
    return QualityGateResult(
        name=gate.name,
        passed=code == 0,
        required=gate.required,
        exit_code=code,
        output=text,
        duration=time.perf_counter() - started,
    )

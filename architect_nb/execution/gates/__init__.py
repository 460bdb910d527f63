"""Quality gates: checks run when the agent says it is done; a failed required gate sends it back to work.

- `quality_gates`: `run_quality_gates`, every gate in order, and `run_command_gate`, a shell command's.
- `gate_result`: `QualityGateResult`, what one gate reported.
- `kernel_checks`: `run_kernel_check`, a Python expression evaluated in the notebook's kernel.
- `notebook_checks`: `run_notebook_gate`, a notebook run before and after the run, its outputs compared.

Depends on `architect_nb.config`, `architect_nb.tools.kernel` and `architect_nb.checks`; on no other
execution family (the engine hands the notebook check the before side, from its checkpoints).
"""

from __future__ import annotations

from architect_nb._lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from architect_nb.execution.gates.kernel_checks import run_kernel_check

__all__ = ["run_kernel_check"]

__getattr__ = lazy_exports(__name__, {"run_kernel_check": ".kernel_checks"})

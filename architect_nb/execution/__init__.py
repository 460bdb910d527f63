"""The execution side: every tool call goes through one pipeline, `engine.ExecutionEngine`.

The pipeline, at the top of the package:

- `engine`: `ExecutionEngine`, the ten-step pipeline, and `RunContext`, what belongs to one run.
- `build`: `build_engine(config)`, which builds an engine whole from a config.
- `snapshots`: which calls are snapshotted for undo, of what, and the change records they leave.
- `steps`: one call's state and the pipeline steps that need no engine state.
- `audit`: `AuditLog`, one record per call, and the run's transcript of them.
- `validators`: the design document's path of `validate_path`, which lives in the leaf `architect_nb.paths`.

The families below it, one package each (each `__init__` says what it holds and what it depends on), with
their entry points:

- `confirmation`: `ConfirmationPolicy` (who must be asked) and the `Confirmer`s (how they are asked).
- `checkpoints`: `CheckpointStore`, the snapshots around each call, and undo, rewind, revert and review.
- `gates`: the quality gates run when the agent says it is done (commands and kernel checks).
- `hooks`: `HookExecutor`, the person's hooks, with Claude Code's settings and tool shapes.
- `guardrails`: `GuardrailsEngine`, the deterministic rules, with Claude Code's permission rules.

Arrows point one way: the pipeline uses the families; `guardrails` uses `hooks` (Claude Code's settings),
`hooks` uses `checkpoints` (where a run's transcript is kept); `confirmation`, `checkpoints` and `gates` use
no other family. The families use `architect_nb.tools`, never the other way round
(`tests/unit/core/test_package_layout.py` pins it).

Depends on `architect_nb.config`, `architect_nb.paths`, `architect_nb.provenance`, and the tools it runs:
`tools.base`, `tools.registry`, `tools.workspace`, `tools.setup`, `tools.state_snapshot`, `tools.commands`,
`tools.filesystem` and `tools.kernel`. The design document's names are exported here too:
`from architect_nb.execution import ExecutionEngine, ConfirmationPolicy, HookExecutor, GuardrailsEngine`.

Errors::

    RuntimeError
     ├── NoTTYError            a confirmation was needed and there is no terminal (confirmation.policy)
     └── ScriptExhaustedError  a scripted confirmer ran out of answers (confirmation.confirmers)
    ValueError
     └── PathTraversalError    a path reaches outside the workspace (architect_nb.paths.validators)

The engine itself never raises from `execute_tool_call`: each of these becomes a failed `ToolResult`.
"""

from __future__ import annotations

from architect_nb._lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from architect_nb.execution.build import build_engine
    from architect_nb.execution.checkpoints.store import CheckpointStore
    from architect_nb.execution.confirmation.confirmers import Confirmer, ScriptedConfirmer, TerminalConfirmer
    from architect_nb.execution.confirmation.policy import ConfirmationPolicy
    from architect_nb.execution.engine import ExecutionEngine
    from architect_nb.execution.guardrails.rails import GuardrailsEngine
    from architect_nb.execution.hooks.executor import HookExecutor
    from architect_nb.paths.validators import PathTraversalError, validate_path

__all__ = [
    "CheckpointStore",
    "ConfirmationPolicy",
    "Confirmer",
    "ExecutionEngine",
    "GuardrailsEngine",
    "HookExecutor",
    "PathTraversalError",
    "ScriptedConfirmer",
    "TerminalConfirmer",
    "build_engine",
    "validate_path",
]

__getattr__ = lazy_exports(
    __name__,
    {
        "CheckpointStore": ".checkpoints.store",
        "ConfirmationPolicy": ".confirmation.policy",
        "Confirmer": ".confirmation.confirmers",
        "ExecutionEngine": ".engine",
        "GuardrailsEngine": ".guardrails.rails",
        "HookExecutor": ".hooks.executor",
        "PathTraversalError": "architect_nb.paths.validators",
        "ScriptedConfirmer": ".confirmation.confirmers",
        "TerminalConfirmer": ".confirmation.confirmers",
        "build_engine": ".build",
        "validate_path": "architect_nb.paths.validators",
    },
)

"""Hooks: shell commands the person configures around tool calls and the agent's other events, ours and
Claude Code's.

- `executor`: `HookExecutor`, the entry point: runs the hooks of an event (`run_event`) in their own process
  groups, with their timeouts.
- `protocol`: `HookEvent`, `HookDecision`, `HookResult`, and how a hook's exit code and output are read.
- `claude_settings`: reading `.claude/settings.json` (its hooks and permission rules).
- `claude_shape`: Claude Code's names for our tools and their fields, both ways.
- `transcript`: the run's transcript as a file, for the `transcript_path` Claude-style hooks read.

Claude Code's settings and shapes live here because its hooks are their main reader; the guardrails read its
permission rules through them. Depends on `architect_nb.config`, `architect_nb.redaction`, the patch parser of
`architect_nb.tools.patch`, and `execution.checkpoints` (where a run's transcript file is kept).
"""

from __future__ import annotations

from architect_nb._lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from architect_nb.execution.hooks.executor import HookExecutor
    from architect_nb.execution.hooks.protocol import HookDecision, HookEvent, HookResult

__all__ = ["HookDecision", "HookEvent", "HookExecutor", "HookResult"]

__getattr__ = lazy_exports(
    __name__,
    {
        "HookDecision": ".protocol",
        "HookEvent": ".protocol",
        "HookExecutor": ".executor",
        "HookResult": ".protocol",
    },
)

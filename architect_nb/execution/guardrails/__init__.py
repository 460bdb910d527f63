"""Guardrails: deterministic rules checked before any hook runs, which the model can never turn off.

- `rails`: `GuardrailsEngine`, the entry point: protected and sensitive files, edit limits, code rules, the
  command blocklist's file checks, and the filter that keeps sensitive lines out of command and search output.
  Commands are judged on the shell parse the classifier reads (`tools.commands.shell_parse`), by two
  sub-packages: `reads` (a sensitive file read without being named) and `writes` (a protected file changed,
  named or not).
- What both read: `shell_runs`, the commands a script runs (wrappers and `bash -c` strings followed, the
  folders `cd` moves to); `mentions`, the names a command mentions; `guarded_files`, the sensitive or
  protected files on disk now.
- `secret_files`: the secret values in sensitive files, so they are redacted wherever they turn up.
- `claude_permissions`: Claude Code's `permissions` rules, applied as guardrails and reasons to ask.

Depends on `architect_nb.config`, `architect_nb.paths`, the shell parse of `architect_nb.tools.commands`
and its program models (`architect_nb.tools.commands.programs`: options, writes, walks),
and `execution.hooks` for Claude Code's settings and tool names.
"""

from __future__ import annotations

from architect_nb._lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from architect_nb.execution.guardrails.claude_permissions import ClaudePermissions
    from architect_nb.execution.guardrails.rails import CodeRuleHit, GuardrailsEngine

__all__ = ["ClaudePermissions", "CodeRuleHit", "GuardrailsEngine"]

__getattr__ = lazy_exports(
    __name__,
    {"ClaudePermissions": ".claude_permissions", "CodeRuleHit": ".rails", "GuardrailsEngine": ".rails"},
)

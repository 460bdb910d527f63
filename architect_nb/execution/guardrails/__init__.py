"""Guardrails: deterministic rules checked before any hook runs, which the model can never turn off.

- `rails`: `GuardrailsEngine`, the entry point: protected and sensitive files, edit limits, code rules, the
  command blocklist's file checks, and the filter that keeps sensitive lines out of command and search output.
- `unnamed_reads`: commands that read a sensitive file without naming it (globs, recursive searches, ...).
- `program_walks`: the per-program models: the trees a recursive reader, lister or copier reaches.
- `program_options`: programs' command lines read as GNU getopt does, for those models.
- `secret_files`: the secret values in sensitive files, so they are redacted wherever they turn up.
- `claude_permissions`: Claude Code's `permissions` rules, applied as guardrails and reasons to ask.

Depends on `architect_nb.config`, `architect_nb.paths`, the shell parse of `architect_nb.tools.commands`, and
`execution.hooks` for Claude Code's settings and tool names.
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

"""Workspace paths: the gate every user-supplied path passes, and the glob patterns that name files.

- `validators`: `validate_path`, `is_inside`, `visible` and `PathTraversalError`, the workspace sandbox.
- `globs`: `PathGlobs`, protected and sensitive file patterns as the guardrails and the OS sandbox match them.

A leaf: it depends on the standard library only, and both `architect_nb.tools` and `architect_nb.execution`
use it.
"""

from __future__ import annotations

from architect_nb._lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from architect_nb.paths.globs import PathGlobs
    from architect_nb.paths.validators import PathTraversalError, is_inside, validate_path, visible

__all__ = ["PathGlobs", "PathTraversalError", "is_inside", "validate_path", "visible"]

__getattr__ = lazy_exports(
    __name__,
    {
        "PathGlobs": ".globs",
        "PathTraversalError": ".validators",
        "is_inside": ".validators",
        "validate_path": ".validators",
        "visible": ".validators",
    },
)

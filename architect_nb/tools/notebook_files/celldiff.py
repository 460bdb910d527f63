"""Cell-level diffs: one ordinary unified-diff section per changed cell, whose header names the notebook and
the cell, with the cell's source diff inside. Both renderers (the notebook's HTML and the labextension) split
sections on `--- `/`+++ ` headers, so a notebook change shows as readable cell diffs, never as raw JSON:

    --- a/analysis.ipynb [cell 3 id=ab12 code]
    +++ b/analysis.ipynb [cell 3 id=ab12 code]
    @@ -1,3 +1 @@
    -def load(path):
    ...

An inserted cell's section starts `--- /dev/null`, a deleted one's ends `+++ /dev/null`, as `git diff`
shows a created or deleted file.
"""

from __future__ import annotations

from typing import Any

from architect_nb.tools.filesystem.diffs import unified_diff
from architect_nb.tools.notebook_files.model import cell_label, cell_source

__all__ = ["cell_diff", "cell_header"]

_NULL = "/dev/null"


def cell_header(shown: str, index: int, cell: dict[str, Any]) -> str:
    """'analysis.ipynb [cell 3 id=ab12 code]'."""
    return f"{shown} [{cell_label(index, cell)}]"


def cell_diff(
    shown: str, before: tuple[int, dict[str, Any]] | None, after: tuple[int, dict[str, Any]] | None
) -> str:
    """The diff section for one cell: edited (both given), inserted (no `before`) or deleted (no `after`)."""
    old_name = f"a/{cell_header(shown, *before)}" if before else _NULL
    new_name = f"b/{cell_header(shown, *after)}" if after else _NULL
    old = cell_source(before[1]) if before else ""
    new = cell_source(after[1]) if after else ""
    body = unified_diff(old, new, "x")
    hunks = body.split("\n", 2)[2] if body else ""
    return f"--- {old_name}\n+++ {new_name}\n{hunks}"

"""The workspace as it was before a run, written to another folder (for a notebook check's before side).

The folder gets a copy of the workspace as it is now (its data too, which snapshots may not hold because
`.gitignore` hides it), then every file the run changed is put back as the run's first snapshot of it had it:
rewritten, or removed if the run created it. Version-control and environment folders are not copied.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from architect_nb.execution.checkpoints.restore import PathPlan
from architect_nb.execution.checkpoints.shadow_git import ShadowRepo

__all__ = ["SKIPPED", "write_workspace_before"]

#: Folders never copied: they are not what a notebook's outputs depend on, and can be large.
SKIPPED = frozenset(
    {".git", ".venv", "venv", "node_modules", "__pycache__", ".ipynb_checkpoints", ".mypy_cache"}
)


def write_workspace_before(shadow: ShadowRepo, plans: list[PathPlan], directory: Path) -> None:
    """Copy the workspace into `directory` (created; it must not exist) and undo `plans` there."""
    root = shadow.workspace
    shutil.copytree(
        root, directory, symlinks=True, ignore=lambda _d, names: [n for n in names if n in SKIPPED]
    )
    for plan in plans:
        target = directory / plan.path
        if target.is_symlink() or target.is_file():
            target.unlink()
        if plan.original is None:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        data = shadow.read(plan.original.blob)
        if plan.original.mode == "120000":  # a link: kept only when it stays inside the copy
            link = os.fsdecode(data)
            if not os.path.isabs(link) and os.path.realpath(target.parent / link).startswith(
                os.path.realpath(directory) + os.sep
            ):
                os.symlink(link, target)
            continue
        target.write_bytes(data)
        if plan.original.mode == "100755":
            target.chmod(0o755)

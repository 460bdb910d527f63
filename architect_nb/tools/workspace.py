"""`WorkspaceTool`: the base of every tool confined to one workspace folder, and `ToolArgs`, its args base."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from architect_nb.paths.validators import validate_path
from architect_nb.tools.base import BaseTool

__all__ = ["PATH_HELP", "ToolArgs", "WorkspaceTool"]

PATH_HELP = "Path relative to the workspace root."


class ToolArgs(BaseModel):
    """Base of the tools' argument models: unknown arguments are an error the model can read and fix."""

    model_config = ConfigDict(extra="forbid")


class WorkspaceTool(BaseTool):
    """A tool confined to one workspace folder. Every path goes through `validate_path` before any I/O."""

    def __init__(self, workspace_root: Path) -> None:
        self.workspace_root = Path(os.path.realpath(workspace_root))

    def resolve(self, path: str) -> Path:
        """`validate_path` against this tool's workspace."""
        return validate_path(path, self.workspace_root)

    def rel(self, path: Path) -> str:
        """`path` relative to the workspace, as shown to the model."""
        if path == self.workspace_root:
            return "."
        return path.relative_to(self.workspace_root).as_posix()

    def target_paths(self, args: dict[str, Any]) -> list[Path]:
        """The files this call reads or writes (its `path` argument), for guardrails and checkpoints.

        Returns an empty list when the path is missing or invalid; the tool itself reports that error.
        """
        path = args.get("path")
        if not isinstance(path, str):
            return []
        try:
            return [self.resolve(path)]
        except ValueError:
            return []

"""`WorkspaceTool`: the base of every tool confined to one workspace folder, and `ToolArgs`, its args base."""

from __future__ import annotations

import copy
import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict

from architect_nb.paths.validators import is_inside, read_root_of, validate_path
from architect_nb.tools.base import BaseTool, ToolResult

__all__ = ["PATH_HELP", "ToolArgs", "WorkspaceTool"]

PATH_HELP = "Path relative to the workspace root."


class ToolArgs(BaseModel):
    """Base of the tools' argument models: unknown arguments are an error the model can read and fix."""

    model_config = ConfigDict(extra="forbid")


class WorkspaceTool(BaseTool):
    """A tool confined to one workspace folder. Every path goes through `validate_path` before any I/O.

    `read_roots` (`workspace.read_roots`, set by `tools.setup`) are folders outside the workspace that paths
    may also resolve into: tools that only read use them (`in_read_root`), tools that change files refuse
    them with a message saying so.
    """

    def __init__(self, workspace_root: Path) -> None:
        self.workspace_root = Path(os.path.realpath(workspace_root))
        self.read_roots: tuple[Path, ...] = ()
        #: Set on the copy `in_read_root` makes: its root is a read root, and paths are shown absolute.
        self.in_data_folder = False

    def resolve(self, path: str) -> Path:
        """`validate_path` against this tool's workspace and read roots (refused for writing)."""
        return validate_path(path, self.workspace_root, read_roots=self.read_roots, write=self.mutates_files)

    def rel(self, path: Path) -> str:
        """`path` relative to the workspace, as shown to the model; absolute in a read root."""
        if self.in_data_folder or not is_inside(path, self.workspace_root):
            return path.as_posix()
        if path == self.workspace_root:
            return "."
        return path.relative_to(self.workspace_root).as_posix()

    def run_in_read_root(self, kwargs: dict[str, Any], *, lists_paths: bool = False) -> ToolResult | None:
        """For a reading tool whose `path` lies in a read root: the call, run by a copy of this tool rooted
        there (`lists_paths`: its output lists paths, said to be relative to that folder). None otherwise:
        the tool itself then resolves the path, and reports it if it is invalid."""
        moved = self.in_read_root(kwargs)
        if moved is None:
            return None
        twin, inner = moved
        result = twin.execute(**inner)
        if lists_paths and result.success:
            note = f"(Paths below are relative to the read-only data folder {twin.workspace_root}.)\n"
            result = replace(result, output=note + result.output)
        return result

    def in_read_root(self, kwargs: dict[str, Any], key: str = "path") -> tuple[Self, dict[str, Any]] | None:
        """For a reading tool whose `key` argument lies in a read root: a copy of this tool rooted at that
        read root, and the arguments with the path relative to it; None otherwise."""
        path = kwargs.get(key)
        if self.mutates_files or not self.read_roots or not isinstance(path, str):
            return None
        try:
            target = self.resolve(path)
        except ValueError:
            return None
        folder = read_root_of(target, self.read_roots) if not is_inside(target, self.workspace_root) else None
        if folder is None:
            return None
        twin = copy.copy(self)
        twin.rooted_at(folder)
        inner = target.relative_to(folder).as_posix() if target != folder else "."
        return twin, {**kwargs, key: inner}

    def rooted_at(self, folder: Path) -> None:
        """Make this copy work in the read root `folder` (a search tool also rebuilds its scope)."""
        self.workspace_root = folder
        self.read_roots = ()
        self.in_data_folder = True

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

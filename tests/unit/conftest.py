"""The unit tests' fixtures. Tests build real files in a temporary workspace; nothing is mocked."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from architect_nb.config import WorkspaceConfig
from architect_nb.tools.registry import ToolRegistry
from architect_nb.tools.setup import register_all_tools


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace folder next to an `outside/` folder holding a secret a tool must never reach."""
    root = tmp_path / "ws"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP-SECRET\n")
    return Path(os.path.realpath(root))


@pytest.fixture
def outside(workspace: Path) -> Path:
    return workspace.parent / "outside"


@pytest.fixture
def registry(workspace: Path) -> ToolRegistry:
    reg = ToolRegistry()
    register_all_tools(reg, WorkspaceConfig(root=workspace, allow_delete=True))
    return reg

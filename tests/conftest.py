"""Shared fixtures. Tests build real files in a temporary workspace; nothing is mocked."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from sandbox_support import check_bwrap_is_hidden

from architect_nb.config import WorkspaceConfig
from architect_nb.tools.registry import ToolRegistry
from architect_nb.tools.setup import register_all_tools


def pytest_configure(config: pytest.Config) -> None:
    # Saved checkpoints go to the user's state folder; tests (and the kernels they start) use a fresh one.
    os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="architect-test-state-")
    check_bwrap_is_hidden()


def pytest_unconfigure(config: pytest.Config) -> None:
    state = os.environ.get("XDG_STATE_HOME", "")
    if os.path.basename(state).startswith("architect-test-state-"):
        shutil.rmtree(state, ignore_errors=True)


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

"""Helpers for the tests that need real bubblewrap: CI installs it (`.ci/run`), so there a missing or broken
bubblewrap fails the test; on a developer machine without it the test is skipped and says why."""

from __future__ import annotations

import os

import pytest

from architect_nb.config import SandboxConfig
from architect_nb.tools.commands.sandbox import sandbox_unavailable_reason


def require_bwrap(config: SandboxConfig | None = None) -> None:
    reason = sandbox_unavailable_reason(config or SandboxConfig())
    if reason is None:
        return
    message = f"the sandbox tests need a working bubblewrap: {reason}"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)

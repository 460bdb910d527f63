"""Helpers for the tests that need real bubblewrap: CI installs it (`.ci/run`), so there a missing or broken
bubblewrap fails the test; on a developer machine without it the test is skipped and says why.

`scripts/without-bwrap` runs the tests as on a machine without bubblewrap and sets WITHOUT_BWRAP_VARIABLE, so
CI checks that path too: the sandbox tests skip there, even under CI, and the run stops if bwrap is found.
"""

from __future__ import annotations

import os

import pytest

from architect_nb.config import SandboxConfig
from architect_nb.tools.commands.sandbox import sandbox_unavailable_reason

WITHOUT_BWRAP_VARIABLE = "ARCHITECT_TESTS_WITHOUT_BWRAP"


def running_without_bwrap_on_purpose() -> bool:
    return bool(os.environ.get(WITHOUT_BWRAP_VARIABLE))


def require_bwrap(config: SandboxConfig | None = None) -> None:
    reason = sandbox_unavailable_reason(config or SandboxConfig())
    if reason is None:
        return
    message = f"the sandbox tests need a working bubblewrap: {reason}"
    if os.environ.get("CI") and not running_without_bwrap_on_purpose():
        pytest.fail(message)
    pytest.skip(message)


def check_bwrap_is_hidden() -> None:
    """Stops the run when it was meant to be without bubblewrap but bubblewrap still starts."""
    if running_without_bwrap_on_purpose() and sandbox_unavailable_reason(SandboxConfig()) is None:
        raise pytest.UsageError(
            f"{WITHOUT_BWRAP_VARIABLE} is set, but bubblewrap can still be found on PATH: run the tests "
            "through scripts/without-bwrap"
        )

"""Set up for every layer: saved checkpoints go to a fresh state folder, never the user's."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from architect_nb.agent.models.offline import OFFLINE_VARIABLE
from tests.support.sandbox import check_bwrap_is_hidden


def pytest_configure(config: pytest.Config) -> None:
    # Saved checkpoints go to the user's state folder; tests (and the kernels they start) use a fresh one.
    os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="architect-test-state-")
    # No test may call a paid provider: only scripted models and servers on loopback
    # (agent/models/offline.py).
    os.environ[OFFLINE_VARIABLE] = "1"
    check_bwrap_is_hidden()


def pytest_unconfigure(config: pytest.Config) -> None:
    state = os.environ.get("XDG_STATE_HOME", "")
    if os.path.basename(state).startswith("architect-test-state-"):
        shutil.rmtree(state, ignore_errors=True)

"""Set up for every layer: saved checkpoints go to a fresh state folder, never the user's; the layers with the
longest files start first."""

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
    # `%load_ext architect_nb` in this process (the in-process IPython tests) would start the warm-up thread,
    # which imports LiteLLM and the agent while the worker's next tests import them too: Python's import locks
    # then broke a cycle by handing one thread a half-imported module ("partially initialized module
    # 'litellm' has no attribute 'utils'", every later model call of that worker failing). The warm-up's
    # own tests turn it on in the processes they start.
    os.environ["ARCHITECT_WARMUP"] = "0"
    check_bwrap_is_hidden()


def pytest_unconfigure(config: pytest.Config) -> None:
    state = os.environ.get("XDG_STATE_HOME", "")
    if os.path.basename(state).startswith("architect-test-state-"):
        shutil.rmtree(state, ignore_errors=True)


#: The layers by how long their files take, longest first (docs/development.md).
_LAYERS = ("browser", "kernel", "unit")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The browser files first, then the kernel files, then the unit files. The workers take a file at a time
    in this order (`--dist loadfile --no-loadscope-reorder`, in the Makefile), so no long file is handed out
    last to keep one worker busy alone at the end. The sort is stable, so pytest-randomly's order (it
    shuffles before this hook) holds within each layer."""

    def layer(item: pytest.Item) -> int:
        parts = item.path.parts
        for rank, name in enumerate(_LAYERS):
            if "tests" in parts and name in parts:
                return rank
        return len(_LAYERS)

    items.sort(key=layer)

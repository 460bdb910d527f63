"""LiteLLM, imported once per process and offline: seconds of import paid on first use, never by `import
architect_nb`; its bundled price map, no telemetry, no banner."""

from __future__ import annotations

import os
import threading
import warnings
from typing import Any

__all__ = ["import_litellm"]

_litellm_lock = threading.Lock()
_litellm: Any = None


def import_litellm() -> Any:
    """Import LiteLLM once, offline: bundled price map, no telemetry, no banner."""
    global _litellm  # noqa: PLW0603 - one lazy import per process
    with _litellm_lock:
        if _litellm is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            os.environ.setdefault("LITELLM_TELEMETRY", "False")
            import litellm

            # LiteLLM touches a Pydantic attribute deprecated in 2.11, and its Gemini types make Pydantic warn
            # about `ReadOnly` items on the first Gemini call; keep both out of notebook cells.
            warnings.filterwarnings("ignore", message="Accessing the 'model_", module="litellm")
            warnings.filterwarnings(
                "ignore", message=".* using the `ReadOnly` qualifier", category=UserWarning
            )

            litellm.suppress_debug_info = True
            litellm.telemetry = False
            _litellm = litellm
        return _litellm

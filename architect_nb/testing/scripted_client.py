"""`scripted_model`: the scripted model as a model client to hand to `create_loop(llm=...)`.

The same replaying model `scripted/<script.yaml>` names (`docs/scripted-model.md`), as an object: a test, a
notebook or an integrator passes it in, and no model string, config key or provider is involved.
"""

from __future__ import annotations

from pathlib import Path

from architect_nb.agent.models.client import LLMClient
from architect_nb.agent.models.llm import SCRIPTED_PREFIX
from architect_nb.agent.models.scripted_client import ScriptedClient
from architect_nb.config.schema import LLMConfig

__all__ = ["scripted_model"]


def scripted_model(script: str | Path, *, workspace: Path | None = None, stream: bool = True) -> LLMClient:
    """A model client that replays `script` (a path; a relative one is looked up in `workspace` first)."""
    config = LLMConfig(model=f"{SCRIPTED_PREFIX}{script}", stream=stream)
    return ScriptedClient(config, workspace=workspace)

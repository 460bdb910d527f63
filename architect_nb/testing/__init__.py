"""Test doubles that ship with the package: the scripted model and local servers that speak providers' APIs.

Tests, notebooks and users share them. Nothing here calls a paid API.

- `scripted_client`: `scripted_model`, the scripted model as a client to pass to `create_loop(llm=...)`.
- `openai_server`, `anthropic_server`, `anthropic_cache`, `gemini_server`, `ollama_server`, `stub_server`:
  local HTTP servers that answer as those providers do, for tests over real HTTP.
- `notebook_run`, `open_notebooks`, `every_tool_session`: runs and notebooks the tests and the docs share.

Depends on `architect_nb.agent`, `architect_nb.checks` (how long a notebook run waits for outputs),
`architect_nb.config` and `tools.notebook_files`.
"""

from __future__ import annotations

from architect_nb._lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from architect_nb.testing.scripted_client import scripted_model

__all__ = ["scripted_model"]

__getattr__ = lazy_exports(__name__, {"scripted_model": ".scripted_client"})

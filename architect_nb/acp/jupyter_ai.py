"""`@architect` in Jupyter AI's chat: a persona that runs `architect-nb-acp` through jupyter-ai-acp-client.

Jupyter AI finds it through the `jupyter_ai.personas` entry point (pyproject.toml); nothing else imports
this module, so architect-nb never needs Jupyter AI. The chat's folder is the session's workspace (the
client sends it as `cwd`), so that folder's `.architect.yaml` and `.claude/settings.json` apply. The agent
is the same process an editor starts: approvals appear as the chat's permission buttons, `/undo` is a
slash command. A notebook attached to a message has its kernel connected for the run (`notebook_kernel`),
so the kernel tools work on it; without one they are left out and the agent says so.
"""

from __future__ import annotations

import sys
from pathlib import Path

from jupyter_ai_acp_client.base_acp_persona import BaseAcpPersona
from jupyter_ai_persona_manager import PersonaDefaults

__all__ = ["ArchitectAcpPersona"]

AVATAR = Path(__file__).with_name("architect.svg")


class ArchitectAcpPersona(BaseAcpPersona):  # type: ignore[misc]  # Jupyter AI's classes are untyped
    """architect-nb's agent, mentioned as `@architect`."""

    # Jupyter AI puts this before a session's first prompt; its default names notebook MCP tools this agent
    # does not have. architect-nb's own notebook tools edit .ipynb files cell by cell.
    NOTEBOOK_EDITING_GUIDANCE = (
        "System note: edit .ipynb notebooks with the notebook tools (read_notebook, edit_notebook_cell, "
        "insert_notebook_cell, delete_notebook_cell), never as raw JSON."
    )

    def __init__(self, *args: object, **kwargs: object) -> None:
        # This Python's own copy of the agent, found without PATH (a server started from a launcher has none).
        executable = [sys.executable, "-m", "architect_nb.acp.server"]
        super().__init__(*args, executable=executable, **kwargs)

    @property
    def defaults(self) -> PersonaDefaults:
        return PersonaDefaults(
            name="architect",
            description="architect-nb's coding agent: sandboxed tools, approvals with diffs, hooks, /undo.",
            avatar_path=str(AVATAR),
            system_prompt="unused",  # the agent has its own, per agent in .architect.yaml
        )

    async def is_authed(self) -> bool:
        return True  # the model's key comes from the environment or .architect.yaml, as everywhere

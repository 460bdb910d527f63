"""architect-nb: a tool-calling coding agent for Jupyter notebooks.

Importing this package is cheap on purpose: it loads no tool, model client or widget library. Import what you
need from its modules (`architect_nb.tools.registry`, `architect_nb.config`, ...).
"""

from __future__ import annotations

__version__ = "0.1.0.dev0"

__all__ = ["__version__"]

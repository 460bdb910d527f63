"""architect-nb: a tool-calling coding agent for Jupyter notebooks.

Importing this package is cheap on purpose: it loads no tool, model client or widget library. Import what you
need from its modules (`architect_nb.tools.registry`, `architect_nb.config`, ...).
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` costs milliseconds to import; annotations here are only for type checkers
if TYPE_CHECKING:
    from typing import Any

__version__ = "0.1.0.dev0"

__all__ = ["__version__", "load_ipython_extension", "unload_ipython_extension"]


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext architect_nb`: the `%architect` line magic and `%%architect` cells."""
    from architect_nb.notebook import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from architect_nb.notebook import unload_ipython_extension as unload

    unload(ipython)

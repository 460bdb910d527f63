"""Modules a run changed on disk that the kernel had already imported: the person's next cells would still use
the old code. The run's cell names them and the cells that import them, and offers to reload them
(`ReloadOffer`: a Reload button in JupyterLab and Notebook 7, `%architect reload` anywhere); where IPython's
autoreload would reload them before the next cell anyway, it says so instead.

`reload_modules` reloads them with `importlib.reload`, in the order they were first imported (a package's
modules before the ones that import them, usually), and points the person's names that were taken from them
(`from shop.cart import total`) at the new objects, so the next cell uses the new code either way.
"""

from __future__ import annotations

import html
import importlib
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from architect_nb.notebook.context.names import cell_names
from architect_nb.notebook.context.view import NotebookView

__all__ = [
    "RELOAD_MIME",
    "ReloadOffer",
    "StaleModule",
    "autoreload_covers",
    "reload_modules",
    "stale_modules",
]

RELOAD_MIME = "application/vnd.architect-nb.reload+json"


@dataclass(frozen=True, slots=True)
class StaleModule:
    name: str  # as imported: "shop.cart"
    path: str  # the file the run changed, relative to the workspace
    cells: tuple[str, ...] = ()  # the cells that import it: "cell 3 [4]"


def stale_modules(changed: Iterable[str], root: Path, view: NotebookView | None = None) -> list[StaleModule]:
    """The imported modules whose files are among `changed` (workspace-relative), in import order."""
    wanted = {os.path.realpath(root / path): path for path in changed if path.endswith(".py")}
    if not wanted:
        return []
    found = []
    for name, module in sys.modules.copy().items():  # a copy in one step: another thread may be importing
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and (real := os.path.realpath(file)) in wanted:
            found.append(StaleModule(name=name, path=wanted[real], cells=_users(name, view)))
    return found


def _users(module: str, view: NotebookView | None) -> tuple[str, ...]:
    if view is None:
        return ()
    parent = module.rpartition(".")[0]
    users = []
    for cell in view.cells:
        if cell.kind != "code" or cell.is_architect:
            continue
        imports = cell_names(cell.source).imports
        if any(m == module or m.startswith(module + ".") or (parent and m == parent) for m in imports):
            users.append(cell.label)
    return tuple(users)


def autoreload_covers(shell: Any, modules: Sequence[StaleModule]) -> str | None:
    """What IPython's autoreload will do about `modules` before the next cell, or None if it is off."""
    registry = getattr(getattr(shell, "magics_manager", None), "registry", None) or {}
    magics = registry.get("AutoreloadMagics") if isinstance(registry, Mapping) else None
    reloader = getattr(magics, "_reloader", None)
    if reloader is None or not getattr(reloader, "enabled", False):
        return None
    if getattr(reloader, "check_all", False):
        return "IPython's autoreload is on: it reloads them before your next cell runs."
    marked = set(getattr(reloader, "modules", {}) or {})
    covered = [m.name for m in modules if m.name in marked]
    if len(covered) == len(modules):
        return "IPython's autoreload is on for them (%aimport): it reloads them before your next cell runs."
    return None


@dataclass(frozen=True)
class ReloadOffer:
    """The note under a run that changed modules the kernel had loaded, with the offer to reload them."""

    modules: tuple[StaleModule, ...]
    autoreload: str | None = None

    def text(self) -> str:
        names = ", ".join(f"{m.name} ({m.path})" for m in self.modules)
        users = sorted({cell for m in self.modules for cell in m.cells})
        lines = [f"The run changed modules this kernel had already imported: {names}."]
        if users:
            lines.append(f"Cells that import them: {', '.join(users)}.")
        if self.autoreload is not None:
            lines.append(self.autoreload)
        else:
            lines.append("Your next cells would still use the old code: reload them (%architect reload).")
        return "\n".join(lines)

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None, **kwargs: Any
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        text = self.text()
        payload = {
            "modules": [{"name": m.name, "path": m.path, "cells": list(m.cells)} for m in self.modules],
            "autoreload": self.autoreload,
            "text": text,
        }
        body = html.escape(text).replace("\n", "<br>")
        data = {
            RELOAD_MIME: payload,
            "text/html": f'<div class="anb-reload" style="color:#57606a;white-space:pre-wrap">{body}</div>',
            "text/plain": text,
        }
        return data, {}


def _bindings(namespace: Mapping[str, Any], modules: Sequence[Any]) -> dict[str, tuple[str, str]]:
    """The person's names holding a function or class defined in one of `modules`: name -> (module, attr)."""
    by_id: dict[int, tuple[str, str]] = {}
    for module in modules:
        for attr, value in list(vars(module).items()):
            if getattr(value, "__module__", None) == module.__name__ and callable(value):
                by_id[id(value)] = (module.__name__, attr)
    return {
        name: by_id[id(value)]
        for name, value in list(namespace.items())
        if not name.startswith("_") and id(value) in by_id
    }


def reload_modules(names: Sequence[str], namespace: dict[str, Any]) -> tuple[list[str], list[str], list[str]]:
    """Reload `names` (in import order) and rebind the person's names taken from them. Returns the modules
    reloaded, the names rebound, and the problems ("shop.cart: SyntaxError ...")."""
    order = [name for name in sys.modules if name in set(names)]
    modules = [sys.modules[name] for name in order]
    bindings = _bindings(namespace, modules)
    reloaded: list[str] = []
    problems: list[str] = []
    for module in modules:
        try:
            importlib.reload(module)
        except Exception as exc:  # the person's module: its error is theirs to see
            problems.append(f"{module.__name__}: {type(exc).__name__}: {exc}")
            continue
        reloaded.append(module.__name__)
    rebound = []
    for name, (module_name, attr) in bindings.items():
        if module_name in reloaded and hasattr(sys.modules[module_name], attr):
            namespace[name] = getattr(sys.modules[module_name], attr)
            rebound.append(name)
    return reloaded, rebound, problems

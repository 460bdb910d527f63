"""The person's variables, and the scratch namespace the agent's code runs in.

`person_variables` is what list_variables shows: the names a person made, without modules, what came from
libraries, or IPython's own (`In`, `Out`, `_`, `exit`, ...). `ScratchNamespace` is a dict layered over the
person's namespace: reading falls through to their variables, assigning stays in the layer, so the agent's
experiments never overwrite them. Functions the agent defines see both (their globals are the layer).
"""

from __future__ import annotations

import builtins
import inspect
import types
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["ScratchNamespace", "person_variables"]

_IPYTHON_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit", "open"})


class ScratchNamespace(dict[str, Any]):
    """Globals for the agent's code: its own names first, then the person's (read-only by convention).

    CPython looks names up in globals that are a dict subclass through `__getitem__`, so `__missing__` falls
    through to the person's namespace, and a name found in neither goes on to builtins. In-place changes to
    the person's objects are not isolated.
    """

    def __init__(self, person: Mapping[str, Any]) -> None:
        super().__init__(__builtins__=builtins, __name__="__main__")
        self.person = person

    def __missing__(self, name: str) -> Any:
        return self.person[name]  # a KeyError sends Python on to `__builtins__`, then to NameError

    def own(self) -> dict[str, Any]:
        """The names the agent's code assigned."""
        return {k: v for k, v in self.items() if k not in ("__builtins__", "__name__")}


def person_variables(namespace: Mapping[str, Any], hidden: Mapping[str, Any] | None = None) -> Iterator[str]:
    """The names of the person's own variables in `namespace`, in the order they were made.

    `hidden` is IPython's `user_ns_hidden` (what the shell put there itself)."""
    hidden = hidden or {}
    for name, value in list(namespace.items()):
        if name.startswith("_") or name in _IPYTHON_NAMES or name in hidden:
            continue
        if isinstance(value, types.ModuleType):
            continue
        if (inspect.isfunction(value) or inspect.isclass(value) or inspect.isbuiltin(value)) and getattr(
            value, "__module__", "__main__"
        ) != "__main__":
            continue  # imported from a library, not written here
        yield name

"""Package exports that load on first use (PEP 562), so a package can name its public API cheaply.

Importing a package runs its `__init__`; when that imports every module of the package, using one small
module costs the import of all of them (and risks import cycles between families). A package built with
`lazy_exports` imports the module that defines a name only when the name is first read.
"""

from __future__ import annotations

import importlib
import sys

TYPE_CHECKING = False  # `typing` costs milliseconds to import; annotations here are only for type checkers
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module-level `__getattr__` for `package`: `exports` maps each public name to the module that
    defines it, relative to the package (`.store`) or absolute (`architect_nb.config`)."""

    def __getattr__(name: str) -> Any:  # noqa: N807 - the name PEP 562 looks up
        where = exports.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where, package), name)
        setattr(sys.modules[package], name, value)  # the next read is a plain attribute
        return value

    return __getattr__

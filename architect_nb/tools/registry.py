"""`ToolRegistry`: the in-memory store of every tool the agent may call.

Exceptions::

    LookupError
     └── ToolRegistryError
          ├── DuplicateToolError   a name registered twice without allow_override
          └── ToolNotFoundError    a name that is not registered
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from architect_nb.tools.base import BaseTool

__all__ = ["DuplicateToolError", "ToolNotFoundError", "ToolRegistry", "ToolRegistryError"]


class ToolRegistryError(LookupError):
    """Base class of the registry's errors."""


class DuplicateToolError(ToolRegistryError):
    """A tool with this name is already registered."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"A tool named {name!r} is already registered; pass allow_override=True to replace it."
        )
        self.name = name


class ToolNotFoundError(ToolRegistryError):
    """No tool with this name is registered."""

    def __init__(self, name: str, available: Iterable[str] = ()) -> None:
        names = ", ".join(sorted(available)) or "none"
        super().__init__(f"No tool named {name!r}. Available tools: {names}.")
        self.name = name


class ToolRegistry:
    """Tools by name. `get_schemas` is called on every model turn, so it does no work beyond a lookup."""

    def __init__(self) -> None:
        self._tools: dict[str, BaseTool] = {}

    def register(self, tool: BaseTool, allow_override: bool = False) -> None:
        """Add `tool`. Raises `DuplicateToolError` if its name is taken and `allow_override` is false."""
        if not isinstance(tool, BaseTool):
            raise TypeError(f"Only BaseTool instances can be registered, not {type(tool).__name__}.")
        if tool.name in self._tools and not allow_override:
            raise DuplicateToolError(tool.name)
        self._tools[tool.name] = tool

    def get(self, name: str) -> BaseTool:
        """The tool called `name`. Raises `ToolNotFoundError` if there is none."""
        try:
            return self._tools[name]
        except (KeyError, TypeError):
            raise ToolNotFoundError(str(name), self._tools) from None

    def list_all(self) -> list[BaseTool]:
        """Every tool, sorted by name."""
        return [self._tools[name] for name in sorted(self._tools)]

    def get_schemas(self, allowed: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """OpenAI-format schemas of all tools, or of the `allowed` names only. Unknown names are ignored."""
        return [tool.get_schema() for tool in self._select(allowed)]

    def filter_by_names(self, names: Iterable[str]) -> list[BaseTool]:
        """The registered tools among `names`, sorted by name. Unknown names are ignored."""
        return self._select(names)

    def has_tool(self, name: str) -> bool:
        return name in self._tools

    def count(self) -> int:
        return len(self._tools)

    def clear(self) -> None:
        """Remove every tool (for tests)."""
        self._tools.clear()

    def names(self) -> list[str]:
        return sorted(self._tools)

    def _select(self, names: Iterable[str] | None) -> list[BaseTool]:
        if names is None:
            return self.list_all()
        wanted = {name for name in names if isinstance(name, str)}
        return [self._tools[name] for name in sorted(wanted) if name in self._tools]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"<ToolRegistry {self.names()}>"

"""`MCPToolAdapter`: a tool on an MCP server, made indistinguishable from a local tool.

Each remote tool gets its own small `MCPToolAdapter` subclass, so `name`, `description`, `args_model` and
`sensitive` stay class attributes as `BaseTool` declares them. The args model (built from the server's
`inputSchema`) validates; the schema the model sees is the server's own `inputSchema`, minus titles.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from architect_nb.mcp.client import MCPServerError
from architect_nb.mcp.schema_model import MCPArgsModel, build_args_model, clean_input_schema
from architect_nb.tools.base import BaseTool, ToolResult, parameters_schema
from architect_nb.tools.metadata import ToolMetadata

if TYPE_CHECKING:
    from mcp.types import CallToolResult, Tool

__all__ = ["MCPToolAdapter", "ToolCaller", "mcp_tool_name"]

MAX_NAME_LENGTH = 64  # OpenAI's limit on function names
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


class ToolCaller(Protocol):
    """What an adapter needs from a connection (`MCPServerConnection` is one)."""

    name: str

    def call_tool(
        self, name: str, arguments: Mapping[str, Any], timeout: float | None = None
    ) -> CallToolResult:
        """Call the server's tool `name`; raise `MCPServerError` when the call cannot be made."""
        ...


def mcp_tool_name(server: str, tool: str, taken: Collection[str] = ()) -> str:
    """`mcp_{server}_{tool}` made safe for function-calling APIs: `[a-zA-Z0-9_-]`, at most 64 characters.

    A name that had to be shortened, or that is already in `taken`, ends with a short hash of the original
    pair so that different tools never share a name.
    """
    name = _UNSAFE.sub("_", f"mcp_{server}_{tool}")
    if len(name) <= MAX_NAME_LENGTH and name not in taken:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()
    for size in (8, 16, 64):
        suffix = f"_{digest[:size]}"
        candidate = name[: MAX_NAME_LENGTH - len(suffix)] + suffix
        if candidate not in taken:
            return candidate
    raise ValueError(f"Cannot find a free name for tool {tool!r} of MCP server {server!r}.")


class MCPToolAdapter(BaseTool):
    """A remote MCP tool. Build instances with `MCPToolAdapter.create(...)`.

    Attributes:
        server_name: The server's name in `mcp.servers`.
        original_name: The tool's own name on the server (what is sent in `tools/call`).
        input_schema: The server's `inputSchema`, unchanged.
    """

    sensitive: ClassVar[bool] = True
    unknown_effects: ClassVar[bool] = True
    server_name: ClassVar[str]
    original_name: ClassVar[str]
    input_schema: ClassVar[dict[str, Any]]
    _model_schema: ClassVar[dict[str, Any] | None]

    def __init__(self, caller: ToolCaller) -> None:
        self.caller = caller

    @classmethod
    def create(
        cls,
        caller: ToolCaller,
        definition: Tool,
        *,
        server_name: str | None = None,
        taken: Collection[str] = (),
    ) -> MCPToolAdapter:
        """An adapter for `definition` (a tool as `tools/list` returns it) on the server behind `caller`."""
        server = server_name if server_name is not None else caller.name
        name = mcp_tool_name(server, definition.name, taken)
        schema = definition.input_schema if isinstance(definition.input_schema, dict) else {}
        description = (definition.description or "").strip() or (
            f"The {definition.name!r} tool of the MCP server {server!r}."
        )
        subclass = type(
            f"MCPTool_{name}",
            (cls,),
            {
                "__module__": cls.__module__,
                "name": name,
                "description": description,
                "args_model": build_args_model(schema, f"{name}_args"),
                "sensitive": True,
                "server_name": server,
                "original_name": definition.name,
                "input_schema": copy.deepcopy(schema),
                "_model_schema": clean_input_schema(schema),
            },
        )
        tool: MCPToolAdapter = subclass(caller)
        return tool

    def get_schema(self) -> dict[str, Any]:
        """The tool in OpenAI's format, with the server's own `inputSchema` as the parameters."""
        parameters = self._model_schema
        if parameters is None:
            parameters = parameters_schema(self.args_model)
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": copy.deepcopy(parameters),
            },
        }

    def execute(self, **kwargs: Any) -> ToolResult:
        arguments = self.wire_arguments(kwargs)
        try:
            result = self.caller.call_tool(self.original_name, arguments)
        except MCPServerError as exc:
            return ToolResult.fail(str(exc), server=self.server_name, tool=self.original_name)
        return result_to_tool_result(result, self.name, self.server_name, self.original_name)

    def wire_arguments(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """`kwargs` (by field name or by the server's names) as the JSON object to send to the server.

        Raises Pydantic's `ValidationError` on bad input. Arguments left out stay out, and a `None` for a
        property whose schema does not allow null is dropped: it can only mean "not given".
        """
        model: MCPArgsModel = self.args_model.model_validate(dict(kwargs))  # type: ignore[assignment]
        data = model.model_dump(mode="json", by_alias=True, exclude_unset=True)
        properties = self.input_schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        return {
            key: value
            for key, value in data.items()
            if value is not None or key not in properties or _allows_null(properties[key])
        }


def result_to_tool_result(result: CallToolResult, name: str, server: str, original: str) -> ToolResult:
    """The text of a `CallToolResult` as a `ToolResult`; `isError` results become failures."""
    text = content_text(result)
    metadata: ToolMetadata = {"server": server, "tool": original}
    if result.structured_content is not None:
        metadata["structured_content"] = result.structured_content
    if result.is_error:
        message = text or "the tool reported an error without a message"
        return ToolResult.fail(
            f"{name} (MCP server {server!r}) reported an error: {message}. "
            "Fix the arguments or try another approach.",
            **metadata,
        )
    return ToolResult.ok(text or "(the tool returned no content)", **metadata)


def content_text(result: CallToolResult) -> str:
    """The content blocks of a result as text: text verbatim, other kinds as a one-line placeholder."""
    parts: list[str] = []
    for block in result.content:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(str(getattr(block, "text", "")))
        elif kind in ("image", "audio"):
            data = str(getattr(block, "data", ""))
            parts.append(f"[{kind} content, {getattr(block, 'mime_type', '?')}, {len(data) * 3 // 4} bytes]")
        elif kind == "resource":
            resource = getattr(block, "resource", None)
            text = getattr(resource, "text", None)
            if isinstance(text, str):
                parts.append(text)
            else:
                parts.append(f"[binary resource {getattr(resource, 'uri', '?')}]")
        elif kind == "resource_link":
            parts.append(f"[resource link {getattr(block, 'uri', '?')}]")
        else:
            parts.append(f"[{kind or 'unknown'} content]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, default=str))
    return "\n".join(parts)


def _allows_null(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return True
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if kind is not None:
        return False
    for combinator in ("anyOf", "oneOf"):
        branches = schema.get(combinator)
        if isinstance(branches, list):
            return any(_allows_null(b) for b in branches)
    return True

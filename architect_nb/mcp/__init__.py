"""MCP servers' tools as local tools.

`register_mcp_tools(registry, config.mcp)` connects to every server in `mcp.servers` (stdio or streamable
HTTP), wraps each remote tool in an `MCPToolAdapter` named `mcp_{server}_{tool}`, and returns warnings for the
servers left out. `inject_mcp_tools(allowed_tools, registry)` adds those tools to an agent's explicit tool
list.

- `client`: one server's connection (stdio or streamable HTTP) in a thread of its own; `restart`: a
  server that stopped, started again within a run.
- `discovery`: connecting to every configured server and registering its tools.
- `adapter`: `MCPToolAdapter`, a remote tool as a local one; `schema_model`: its input schema as Pydantic.

Importing this package does not import the `mcp` SDK; connecting does.

Depends on `architect_nb.config` and the tools core (`tools.base`, `tools.metadata`, `tools.registry`).
"""

from __future__ import annotations

from architect_nb.mcp.adapter import MCPToolAdapter, ToolCaller, mcp_tool_name
from architect_nb.mcp.client import MCPCallError, MCPConnectionError, MCPServerConnection, MCPServerError
from architect_nb.mcp.discovery import MCPManager, close_all_mcp_servers, inject_mcp_tools, register_mcp_tools
from architect_nb.mcp.schema_model import MCPArgsModel, build_args_model, clean_input_schema

__all__ = [
    "MCPArgsModel",
    "MCPCallError",
    "MCPConnectionError",
    "MCPManager",
    "MCPServerConnection",
    "MCPServerError",
    "MCPToolAdapter",
    "ToolCaller",
    "build_args_model",
    "clean_input_schema",
    "close_all_mcp_servers",
    "inject_mcp_tools",
    "mcp_tool_name",
    "register_mcp_tools",
]

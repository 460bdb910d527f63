"""The MCP servers an ACP client offers a session (`session/new`'s `mcpServers`), as architect-nb's own.

Editors and Jupyter AI pass the servers their user configured; they join the workspace's `mcp.servers`
(`.architect.yaml`), so their tools go through the same engine: approvals, guardrails, snapshots around
tools whose effects are unknown, redaction. A stdio server and a streamable HTTP server are taken; an HTTP
server's bearer token is handed over through an environment variable of this process (the config names
variables, never tokens) and redacted wherever it turns up. SSE servers, HTTP headers other than a bearer
token, and a name the workspace already uses are left out, each with a sentence saying why.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

from architect_nb.config import AppConfig
from architect_nb.config.schema import MCPServerConfig
from architect_nb.redaction import default_redactor

__all__ = ["with_offered_servers"]

_BEARER = re.compile(r"\s*Bearer\s+(\S+)\s*$", re.IGNORECASE)


def with_offered_servers(config: AppConfig, offered: Sequence[Any]) -> tuple[AppConfig, list[str]]:
    """`config` with the client's `offered` servers added to `mcp.servers`, and why any were left out."""
    taken: list[MCPServerConfig] = []
    left_out: list[str] = []
    names = {server.name for server in config.mcp.servers}
    for server in offered:
        name = str(getattr(server, "name", "") or "").strip()
        if not name:
            left_out.append("an MCP server without a name")
            continue
        if name in names:
            left_out.append(f"MCP server {name!r}: .architect.yaml has a server of that name, which is kept")
            continue
        converted = _converted(server, name)
        if isinstance(converted, str):
            left_out.append(f"MCP server {name!r}: {converted}")
            continue
        taken.append(converted)
        names.add(name)
    if not taken:
        return config, left_out
    mcp = config.mcp.model_copy(update={"servers": [*config.mcp.servers, *taken]})
    return config.model_copy(update={"mcp": mcp}), left_out


def _converted(server: Any, name: str) -> MCPServerConfig | str:
    kind = getattr(server, "type", None)
    if kind not in (None, "stdio", "http"):
        return f"{kind} servers are not supported (stdio and streamable HTTP are)"
    if kind == "http":
        headers = {h.name.lower(): h.value for h in getattr(server, "headers", None) or ()}
        token_env = None
        if "authorization" in headers:
            bearer = _BEARER.match(headers.pop("authorization"))
            if bearer is None:
                return "its Authorization header is not a bearer token"
            token_env = _token_variable(name)
            os.environ[token_env] = bearer.group(1)
            default_redactor().add({token_env: bearer.group(1)})
        if headers:
            return f"HTTP headers other than a bearer token are not supported ({', '.join(sorted(headers))})"
        return MCPServerConfig(name=name, url=str(server.url), token_env=token_env)
    command = getattr(server, "command", None)
    if not isinstance(command, str) or not command:
        return "it has neither a command nor a URL"
    env = {str(v.name): str(v.value) for v in getattr(server, "env", None) or ()}
    return MCPServerConfig(name=name, command=command, args=[str(a) for a in server.args or ()], env=env)


def _token_variable(name: str) -> str:
    return "ARCHITECT_ACP_MCP_TOKEN_" + re.sub(r"[^0-9A-Za-z]", "_", name).upper()

"""Which MCP servers an ACP client offers join a session, and why the others are left out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from acp.schema import HttpHeader, HttpMcpServer, McpServerStdio, SseMcpServer

from architect_nb.acp.mcp_servers import with_offered_servers
from architect_nb.config import load_config
from architect_nb.redaction import default_redactor


def test_offered_servers_join_the_workspaces_own_and_a_bearer_token_goes_by_variable_and_is_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".architect.yaml").write_text(
        "mcp:\n  servers:\n    - name: mine\n      command: mine-server\n"
    )
    config = load_config(overrides={"workspace.root": str(tmp_path)}, search_from=tmp_path)
    token = "tok-editor-5f4e3d2c1b0a9988"
    offered = [
        McpServerStdio(name="notebook tools", command="/usr/bin/nb-mcp", args=["--stdio"], env=[]),
        HttpMcpServer(
            type="http",
            name="web",
            url="http://127.0.0.1:1/mcp",
            headers=[HttpHeader(name="Authorization", value=f"Bearer {token}")],
        ),
        HttpMcpServer(
            type="http",
            name="cookie",
            url="http://127.0.0.1:1/mcp",
            headers=[HttpHeader(name="Cookie", value="a=b")],
        ),
        HttpMcpServer(
            type="http",
            name="basic",
            url="http://127.0.0.1:1/mcp",
            headers=[HttpHeader(name="Authorization", value="Basic eDp5")],
        ),
        SseMcpServer(type="sse", name="old", url="http://127.0.0.1:1/sse", headers=[]),
        McpServerStdio(name="mine", command="/usr/bin/other", args=[], env=[]),
        McpServerStdio(name=" ", command="/usr/bin/x", args=[], env=[]),
    ]
    try:
        merged, left_out = with_offered_servers(config, offered)
        servers = {s.name: s for s in merged.mcp.servers}
        assert sorted(servers) == ["mine", "notebook tools", "web"]
        assert servers["mine"].command == "mine-server"  # the workspace's own is kept
        assert servers["notebook tools"].command == "/usr/bin/nb-mcp" and servers["notebook tools"].args == [
            "--stdio"
        ]
        web = servers["web"]
        assert web.url == "http://127.0.0.1:1/mcp" and web.token_env is not None
        assert os.environ[web.token_env] == token and token not in str(merged.model_dump())
        assert default_redactor().redact(f"sent {token}") == f"sent [REDACTED:{web.token_env}]"
        assert left_out == [
            "MCP server 'cookie': HTTP headers other than a bearer token are not supported (cookie)",
            "MCP server 'basic': its Authorization header is not a bearer token",
            "MCP server 'old': sse servers are not supported (stdio and streamable HTTP are)",
            "MCP server 'mine': .architect.yaml has a server of that name, which is kept",
            "an MCP server without a name",
        ]
        assert with_offered_servers(config, []) == (config, [])
    finally:
        for name in [n for n in os.environ if n.startswith("ARCHITECT_ACP_MCP_TOKEN_")]:
            monkeypatch.delenv(name)
        default_redactor().refresh()

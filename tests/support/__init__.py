"""Helpers the tests share (not test modules): a real project and loop (`agent`), engines with small test
tools (`engine`), front ends played over jupyter_client (`kernel`, `live_frontend`), JupyterLab and chromium
(`browser`), Claude Code workspaces (`claude`), real notebooks in nbformat 4.5 and 4.4 (`notebooks`),
bubblewrap (`sandbox`), the patch and command corpora, and an MCP server (`mcp_toy_server`, run as a script
by path)."""

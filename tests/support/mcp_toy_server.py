"""A small MCP server for the MCP tests, built on the official SDK's low-level `Server`.

    python tests/support/mcp_toy_server.py stdio
    python tests/support/mcp_toy_server.py http PORT TOKEN   # streamable HTTP on 127.0.0.1, Bearer TOKEN

The low-level API lets each tool publish exactly the `inputSchema` the test wants, odd names and all.
Tools: `echo`, `add`, `fail` (reports isError), `slow` (sleeps), `crash` (kills the process mid-call),
`odd_names` (arguments called `schema`, `from`, `my-field`, `model_config`, echoed back as JSON) and
`hostile` (a schema full of things a translator could trip on).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server
from mcp.types import CallToolRequestParams, CallToolResult, ListToolsResult, TextContent, Tool

TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "echo": (
        "Return the text unchanged.",
        {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    ),
    "add": (
        "Add two integers.",
        {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    ),
    "fail": (
        "Always fails with the given message.",
        {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
    ),
    "slow": (
        "Sleep for some seconds, then answer.",
        {"type": "object", "properties": {"seconds": {"type": "number"}}, "required": ["seconds"]},
    ),
    "crash": ("Kill the server process in the middle of the call.", {"type": "object", "properties": {}}),
    "odd_names": (
        "Echo arguments whose names clash with Python and Pydantic.",
        {
            "type": "object",
            "title": "odd_namesArguments",
            "properties": {
                "schema": {"type": "string", "title": "Schema"},
                "from": {"type": "integer", "description": "Where to start."},
                "my-field": {"type": "boolean"},
                "model_config": {"type": "object"},
            },
            "required": ["schema", "from"],
            "additionalProperties": False,
        },
    ),
    "hostile": (
        "A schema with unknown types, enums, nesting and junk.",
        {
            "type": "object",
            "properties": {
                "mode": {"type": "string", "enum": ["fast", "slow"]},
                "weird": {"type": "frobnicate"},
                "nested": {
                    "type": "object",
                    "properties": {"deep": {"type": "array", "items": {"$ref": "#/x"}}},
                },
                "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                "junk": 42,
                "": {"type": "string"},
                "1st": {"type": ["integer", "null"]},
            },
            "required": ["mode", "ghost"],
        },
    ),
}


async def list_tools(ctx: Any, params: Any) -> ListToolsResult:
    return ListToolsResult(
        tools=[
            Tool(name=name, description=desc, input_schema=schema) for name, (desc, schema) in TOOLS.items()
        ]
    )


def text(value: str, *, error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=value)], is_error=error)


async def call_tool(ctx: Any, params: CallToolRequestParams) -> CallToolResult:
    args = params.arguments or {}
    name = params.name
    if name == "echo":
        return text(str(args["text"]))
    if name == "add":
        return text(str(int(args["a"]) + int(args["b"])))
    if name == "fail":
        return text(f"failed on purpose: {args.get('message')}", error=True)
    if name == "slow":
        await anyio.sleep(float(args["seconds"]))
        return text("woke up")
    if name == "crash":
        sys.stderr.write("toy server: crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    if name in ("odd_names", "hostile"):
        return text(json.dumps(args, sort_keys=True))
    return text(f"unknown tool {name}", error=True)


server: Server[Any] = Server("toy", on_list_tools=list_tools, on_call_tool=call_tool)


async def run_stdio() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        anyio.run(run_stdio)
        return
    import uvicorn

    port, token = int(sys.argv[2]), sys.argv[3]
    app = server.streamable_http_app(host="127.0.0.1")

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization") != f"Bearer {token}".encode():
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"bad or missing bearer token"})
                return
        await app(scope, receive, send)

    uvicorn.run(guarded, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()

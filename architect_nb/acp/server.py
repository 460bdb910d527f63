"""`architect-nb-acp`: architect-nb as an Agent Client Protocol agent on stdio, for Zed, Jupyter AI, marimo.

The protocol owns stdin and stdout, so before anything else runs they are moved aside: the connection
gets its own copies of the two descriptors, and descriptor 1 becomes stderr and 0 `/dev/null`, so a stray
`print`, a hook or a command that inherits them can never corrupt the protocol or read the editor's
messages. Logs go to stderr, which editors show as the agent's log.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from typing import cast, get_args

from architect_nb.acp.session import SessionOptions
from architect_nb.config.schema import ConfirmMode

__all__ = ["main", "parse_args"]


def parse_args(argv: Sequence[str] | None = None) -> SessionOptions:
    parser = argparse.ArgumentParser(
        prog="architect-nb-acp",
        description="Run architect-nb as an Agent Client Protocol agent over stdio (for Zed, Jupyter AI, "
        "marimo). Each session's folder is its workspace; its .architect.yaml applies.",
    )
    parser.add_argument("--model", help="the model (default: llm.model from .architect.yaml)")
    parser.add_argument("--agent", default="build", help="the agent to run (default: build)")
    parser.add_argument("--mode", choices=get_args(ConfirmMode), help="the confirmation mode")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a config setting for every session, e.g. --set sandbox.mode=off (repeatable)",
    )
    args = parser.parse_args(argv)
    overrides = {}
    for pair in args.set:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            parser.error(f"--set needs KEY=VALUE, not {pair!r}")
        overrides[key.strip()] = value
    return SessionOptions(model=args.model, agent=args.agent, mode=args.mode, overrides=overrides)


def main(argv: Sequence[str] | None = None) -> int:
    """The console script: parse the options, take stdio for the protocol, serve until the editor leaves."""
    options = parse_args(argv)
    protocol_in, protocol_out = _take_stdio()
    try:
        asyncio.run(_serve(options, protocol_in, protocol_out))
    except KeyboardInterrupt:
        return 130
    return 0


def _take_stdio() -> tuple[int, int]:
    """Copies of stdin and stdout for the protocol; fd 0 becomes /dev/null and fd 1 stderr."""
    sys.stdout.flush()
    protocol_in, protocol_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol_in, protocol_out


async def _serve(options: SessionOptions, protocol_in: int, protocol_out: int) -> None:
    from acp import Agent, run_agent
    from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES
    from acp.stdio import stdio_streams

    from architect_nb.acp.agent import ArchitectAgent

    # The SDK opens sys.stdin and sys.stdout as pipes: hand it the protocol's copies for that moment.
    real_in, real_out = sys.stdin, sys.stdout
    sys.stdin = os.fdopen(protocol_in, "rb", buffering=0)  # binary pipes: what the SDK opens
    sys.stdout = os.fdopen(protocol_out, "wb", buffering=0)
    try:
        reader, writer = await stdio_streams(limit=DEFAULT_STDIO_BUFFER_LIMIT_BYTES)
    finally:
        sys.stdin, sys.stdout = real_in, real_out
    # `use_unstable_protocol`: `session/resume` and `session/close` are still marked unstable in the SDK.
    agent = cast("Agent", ArchitectAgent(options))  # it has the methods it serves; the SDK answers the rest
    await run_agent(agent, writer, reader, use_unstable_protocol=True)


if __name__ == "__main__":
    raise SystemExit(main())

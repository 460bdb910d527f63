"""Anthropic's prompt cache as the stub Messages server plays it: which part of a request's input is read
from the cache, written to it, or billed in full.

The request's tools, system blocks and message blocks, in that order, are the prefix; a block with
`cache_control` is a breakpoint. As on Anthropic's side, at most four breakpoints are accepted, a prefix
shorter than `min_cache_tokens` is not cached, a breakpoint finds a cached prefix ending at it or up to 20
blocks before it, and every breakpoint's prefix is written to the cache (for five minutes). Tokens are about
four characters each.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass
from typing import Any

__all__ = ["CACHE_SECONDS", "LOOKBACK_BLOCKS", "MAX_BREAKPOINTS", "CacheUse", "PromptCache"]

MAX_BREAKPOINTS = 4
LOOKBACK_BLOCKS = 20
CACHE_SECONDS = 300.0


@dataclass(frozen=True)
class CacheUse:
    """How one request's input was billed."""

    input_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    breakpoints: int


class PromptCache:
    """The prefixes cached so far. Thread-safe."""

    def __init__(self, *, min_cache_tokens: int = 1024) -> None:
        self.min_cache_tokens = min_cache_tokens
        self._cache: dict[str, float] = {}  # prefix hash -> when it expires
        self._lock = threading.Lock()

    def bill(self, body: dict[str, Any]) -> CacheUse | str:
        """How the request's input is billed, with the cache updated; or why the request is refused."""
        blocks = _prefix_blocks(body)
        marks = [
            i for i, block in enumerate(blocks) if isinstance(block, dict) and block.get("cache_control")
        ]
        if len(marks) > MAX_BREAKPOINTS:
            found = len(marks)
            return f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {found}."
        tokens, hashes = [], []
        running, digest = 0, hashlib.sha256()
        for block in blocks:
            plain = (
                {k: v for k, v in block.items() if k != "cache_control"} if isinstance(block, dict) else block
            )
            text = json.dumps(plain, sort_keys=True, ensure_ascii=False)
            running += max(1, len(text) // 4)
            digest.update(text.encode())
            tokens.append(running)
            hashes.append(digest.hexdigest())
        now = time.monotonic()
        read = 0  # blocks read from the cache
        with self._lock:
            self._cache = {h: t for h, t in self._cache.items() if t > now}
            for mark in marks:
                for end in range(mark, max(-1, mark - LOOKBACK_BLOCKS - 1), -1):
                    if hashes[end] in self._cache:
                        read = max(read, end + 1)
                        break
            written = 0
            for mark in marks:
                if tokens[mark] >= self.min_cache_tokens:
                    self._cache[hashes[mark]] = now + CACHE_SECONDS
                    written = max(written, mark + 1)
        total = tokens[-1] if tokens else 0
        read_tokens = tokens[read - 1] if read else 0
        created = tokens[written - 1] - read_tokens if written > read else 0
        return CacheUse(total - read_tokens - created, read_tokens, created, len(marks))


def _prefix_blocks(body: dict[str, Any]) -> list[Any]:
    """The request's cacheable prefix in Anthropic's order: tools, system, then each message's blocks."""
    blocks: list[Any] = list(body.get("tools") or [])
    system = body.get("system")
    blocks += [{"type": "text", "text": system}] if isinstance(system, str) else list(system or [])
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            blocks.append({"role": message.get("role"), "type": "text", "text": content})
        else:
            blocks += [{"role": message.get("role"), **block} for block in content or []]
    return blocks

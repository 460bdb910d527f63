"""Tokens estimated at about four characters a token: cheap, and close enough to decide when to compress, and
to count a request for a model without a counter of its own.

An image counts as an image (`IMAGE_TOKENS`), whatever its base64 length.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["IMAGE_TOKENS", "estimate_request_tokens", "estimate_tokens", "message_chars"]

IMAGE_TOKENS = 800  # about what providers bill for a small image, whatever its base64 length


def estimate_tokens(messages: Sequence[dict[str, Any]]) -> int:
    """About four characters per token: cheap, and close enough to decide when to compress."""
    return message_chars(messages) // 4


def message_chars(messages: Sequence[dict[str, Any]]) -> int:
    """The characters `estimate_tokens` counts: the messages as JSON, an image as `IMAGE_TOKENS * 4`."""
    chars = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):  # text and image parts
            chars += sum(
                IMAGE_TOKENS * 4 if part.get("type") == "image_url" else len(str(part.get("text", "")))
                for part in content
                if isinstance(part, dict)
            )
            rest = {k: v for k, v in message.items() if k != "content"}
            chars += len(json.dumps(rest, default=str, ensure_ascii=False))
        else:
            chars += len(json.dumps(message, default=str, ensure_ascii=False))
    return chars


def estimate_request_tokens(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> int:
    """A request's tokens at four characters a token, for a model without a counter of its own."""
    return estimate_tokens([*(dict(m) for m in messages), *({"tool": t} for t in tools)])

"""LiteLLM's bundled price list, read without importing LiteLLM: one model's prices and limits.

The list is a 3 MB JSON file inside the `litellm` package. Parsing all of it would cost tens of megabytes,
more than the gateway client saves; so the file is searched for the model's own entry, and only that entry
is parsed (and kept). Where LiteLLM is not installed, no model has an entry and the turn is left unpriced.
`ListedModel` gives a client that never imports LiteLLM (a gateway's, the scripted model's) its model's
limits and vision from that entry.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import threading
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from architect_nb.agent.models.model_reply import Usage
from architect_nb.agent.models.token_estimate import estimate_request_tokens

__all__ = ["ListedModel", "model_entry", "price"]

_FILE = "model_prices_and_context_window_backup.json"
_lock = threading.Lock()


@cache
def _list_file() -> Path | None:
    spec = importlib.util.find_spec("litellm")  # finds the package without importing it
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(folder) / _FILE
        if path.is_file():
            return path
    return None


@cache
def _entry(name: str) -> dict[str, Any] | None:
    path = _list_file()
    if path is None:
        return None
    with _lock:
        text = path.read_text(encoding="utf-8")
    at = text.find(f"\n    {json.dumps(name)}: {{")  # the file's top-level keys, indented by four spaces
    if at < 0:
        return None
    start = text.index("{", at + len(name) + 5)
    try:
        value, _ = json.JSONDecoder().raw_decode(text, start)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def model_entry(*names: str | None) -> dict[str, Any] | None:
    """The price list's entry for the first of `names` it has (each also tried without its `provider/`)."""
    for name in names:
        if not name:
            continue
        for candidate in dict.fromkeys((name, name.split("/", 1)[-1])):
            if (found := _entry(candidate)) is not None:
                return found
    return None


def price(usage: Usage, entry: dict[str, Any] | None) -> Usage:
    """`usage` priced at the entry's rates: cached input at its cache rates, thinking at the output rate."""
    if entry is None:
        return usage
    try:
        rate_in = float(entry["input_cost_per_token"])
        rate_out = float(entry["output_cost_per_token"])
    except (KeyError, TypeError, ValueError):
        return usage
    read = float(entry.get("cache_read_input_token_cost") or rate_in)
    written = float(entry.get("cache_creation_input_token_cost") or rate_in)
    plain = max(0, usage.prompt_tokens - usage.cached_tokens - usage.cache_write_tokens)
    cost = (
        plain * rate_in
        + usage.cached_tokens * read
        + usage.cache_write_tokens * written
        + usage.completion_tokens * rate_out
    )
    return dataclasses.replace(usage, cost_usd=cost, priced=True)


class ListedModel:
    """A model client's limits and vision from the price list's entry for its model (`_entry`), and its
    context meter at four characters a token: for the clients that never import LiteLLM (a gateway's, the
    scripted model's), whose counter would import it."""

    def _entry(self) -> dict[str, Any] | None:
        raise NotImplementedError

    def _model_info(self, key: str) -> int | None:
        value = (self._entry() or {}).get(key)
        return int(value) if isinstance(value, int) and value > 0 else None

    def supports_images(self) -> bool:
        return bool((self._entry() or {}).get("supports_vision"))

    def count_tokens(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] = ()
    ) -> int:
        return estimate_request_tokens(messages, tools)

"""What the tool schemas cost the model on every turn, in tokens (gpt-4o's tokenizer, bundled with LiteLLM).

    python benchmarks/schemas.py

The reference implementation's ten schemas cost 2,644 tokens.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from architect_nb.config import CommandsConfig, WorkspaceConfig
from architect_nb.tools.registry import ToolRegistry
from architect_nb.tools.setup import register_all_tools

REFERENCE_TOKENS = 2644


def schema_tokens() -> dict[str, int]:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from architect_nb.agent.llm import import_litellm

    litellm = import_litellm()
    registry = ToolRegistry()
    register_all_tools(registry, WorkspaceConfig(root=Path(".")), CommandsConfig())
    return {
        s["function"]["name"]: int(litellm.token_counter(model="gpt-4o", text=json.dumps(s)))
        for s in registry.get_schemas()
    }


def main() -> None:
    tokens = schema_tokens()
    for name, count in tokens.items():
        print(f"{name:14} {count:5}")
    total = sum(tokens.values())
    print(
        f"{'total':14} {total:5}  ({len(tokens)} tools; reference: {REFERENCE_TOKENS}; "
        f"ratio {total / REFERENCE_TOKENS:.2f})"
    )


if __name__ == "__main__":
    main()

"""What the tool schemas cost the model on every turn, in tokens (gpt-4o's tokenizer, bundled with LiteLLM).

    python benchmarks/schemas.py

The reference implementation's ten schemas cost 2,644 tokens. A run in a kernel adds the five kernel tools;
that whole set must stay under 2,800.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from architect_nb.config import AppConfig, CommandsConfig, WorkspaceConfig
from architect_nb.tools.kernel import PlainKernel
from architect_nb.tools.registry import ToolRegistry
from architect_nb.tools.setup import register_all_tools, register_kernel_tools

REFERENCE_TOKENS = 2644
KERNEL_RUN_GOAL = 2800


def schema_tokens(*, kernel: bool = False) -> dict[str, int]:
    """Tokens per tool schema: the tools every run has, and with `kernel` those of a run in a kernel."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from architect_nb.agent.models.litellm_import import import_litellm

    litellm = import_litellm()
    registry = ToolRegistry()
    register_all_tools(registry, WorkspaceConfig(root=Path(".")), CommandsConfig())
    if kernel:
        register_kernel_tools(registry, AppConfig(), PlainKernel({}))
    return {
        s["function"]["name"]: int(litellm.token_counter(model="gpt-4o", text=json.dumps(s)))
        for s in registry.get_schemas()
    }


def main() -> None:
    tokens = schema_tokens(kernel=True)
    for name, count in tokens.items():
        print(f"{name:20} {count:5}")
    kernel_tools = ("list_variables", "inspect_variable", "run_python", "propose_cell", "run_cell")
    base = sum(n for name, n in tokens.items() if name not in kernel_tools)
    total = sum(tokens.values())
    print(
        f"{'total':20} {base:5}  ({len(tokens) - len(kernel_tools)} tools; reference: {REFERENCE_TOKENS}; "
        f"ratio {base / REFERENCE_TOKENS:.2f})"
    )
    print(
        f"{'in a kernel':20} {total:5}  ({len(tokens)} tools; goal under {KERNEL_RUN_GOAL}; "
        f"ratio to the reference {total / REFERENCE_TOKENS:.2f})"
    )


if __name__ == "__main__":
    main()

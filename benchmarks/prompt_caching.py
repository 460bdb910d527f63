"""What prompt caching saves: the notional cost of the quick-start run and of a 20-step run, with cache
markers and without, on a Claude model's prices.

Each run is the real loop over real tools on a copy of notebooks/sample_project, with LiteLLM talking HTTP to
`architect_nb.testing.anthropic_server`, which speaks Anthropic's Messages API and caches as Anthropic does
(breakpoints, 1,024-token minimum, 20-block lookback, reads at 0.1x and writes at 1.25x the input price, as
LiteLLM's price list has them). The model's turns are the quick-start script's (notebooks/scripts/
quickstart.yaml) and, for the long run, 20 steps that read, search and list the project. Tokens are about four
characters each, so the figures are notional; the ratio is what caching changes.

Run: `.venv/bin/python benchmarks/prompt_caching.py` (about a minute).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from architect_nb.agent import AgentLoop, LiteLLMClient, resolve_agent  # noqa: E402
from architect_nb.agent.models.scripted import load_script  # noqa: E402
from architect_nb.config import LLMConfig, load_config  # noqa: E402
from architect_nb.execution.build import build_engine  # noqa: E402
from architect_nb.testing.anthropic_server import AnthropicStubServer, Reply  # noqa: E402

MODEL = "anthropic/claude-sonnet-4-5"
SAMPLE = ROOT / "notebooks" / "sample_project"


def quickstart() -> list[Reply]:
    script = load_script(ROOT / "notebooks" / "scripts" / "quickstart.yaml")
    return [
        Reply(content=turn.content, tool_calls=tuple((c.name, c.arguments) for c in turn.tool_calls))
        for turn in script.turns
    ]


def twenty_steps() -> list[Reply]:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("read_file", {"path": "shop/cart.py"}),
        ("grep", {"pattern": "def ", "path": "shop"}),
        ("list_files", {"path": "."}),
        ("read_file", {"path": "tests/test_cart.py"}),
    ]
    replies = [
        Reply.calls(calls[i % len(calls)], content=f"Step {i + 1}: looking further.") for i in range(20)
    ]
    return [*replies, Reply.text("I have read what I need.")]


def run(replies: list[Reply], markers: bool, tmp: Path) -> tuple[float, int, int, int]:
    ws = Path(tempfile.mkdtemp(dir=tmp))
    shutil.copytree(SAMPLE, ws, dirs_exist_ok=True)
    config = load_config(overrides={"workspace.root": str(ws), "checkpoints.persist": False}, environ={})
    with AnthropicStubServer() as server:
        server.queue(*replies)
        llm_config = LLMConfig(model=MODEL, api_base=server.url, api_key_env="BENCH_ANTHROPIC_KEY")
        llm = LiteLLMClient(llm_config, cache_markers=markers)
        loop = AgentLoop(build_engine(config, mode="yolo"), llm, resolve_agent("build", config))
        result = loop.run("Make Cart.total() always return a float, and keep the tests passing.")
    assert result.status == "success", result.message
    return result.cost_usd, result.total_tokens, loop.costs.cached_tokens, result.steps


def main() -> None:
    os.environ["BENCH_ANTHROPIC_KEY"] = "sk-ant-bench-0123456789"
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        print(f"notional cost on {MODEL}'s prices (LiteLLM's price list), with and without cache markers")
        for name, replies in (("quick-start run", quickstart()), ("20-step run", twenty_steps())):
            with_cache = run(replies, True, tmp)
            without = run(replies, False, tmp)
            print(
                f"{name} ({with_cache[3]} steps): with caching ${with_cache[0]:.4f} "
                f"({with_cache[1]:,} tokens, {with_cache[2]:,} cached), without ${without[0]:.4f} "
                f"({without[1]:,} tokens); with / without = {with_cache[0] / without[0]:.2f}"
            )


if __name__ == "__main__":
    main()

"""What a thread costs: the loop's overhead before the first model call, and the state folder's growth.

1. First-token overhead: the time from `AgentLoop.run()` to the model being called (the loop's own work:
   the system prompt, the thread's messages, the run header), for a fresh thread and for a follow-up on a
   thread of 50 turns (25 steps reading 2 KB files, then answers). The model here answers at once, so only
   the loop is timed, not the model or LiteLLM.
2. State folder: the bytes a 10-cell thread adds to `<state>/threads`, saved after each cell (append-only),
   next to what saving the whole thread after each cell would write.

Run: `.venv/bin/python benchmarks/threads.py`.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from architect_nb.agent.config import resolve_agent
from architect_nb.agent.conversation.thread import Thread
from architect_nb.agent.conversation.thread_store import ThreadStore
from architect_nb.agent.loop import AgentLoop
from architect_nb.agent.models.llm import LLMResponse, ToolCall, Usage
from architect_nb.config import load_config
from architect_nb.execution.build import build_engine

RUNS = 30
FILE = "".join(f"def helper_{n}(x):\n    return x * {n}  # a line of a 2 KB module\n" for n in range(30))


class FirstCall:
    """A model that notes when it is first called, then answers without tools (or reads a file)."""

    model = "bench"

    def __init__(self, read: bool = False) -> None:
        self.read = read
        self.first_at: float | None = None

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        *,
        on_text: Callable[[str], None] | None = None,
        on_thinking: Callable[[str], None] | None = None,
        on_notice: Callable[[str], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        thread_position: tuple[int, int] = (0, 0),
    ) -> LLMResponse:
        if self.first_at is None:
            self.first_at = time.perf_counter()
            if self.read:
                return LLMResponse(None, [ToolCall("c1", "read_file", {"path": "mod.py"})], Usage(10, 5))
        return LLMResponse("done", [], Usage(10, 5))

    def context_window(self) -> int:
        return 1_000_000

    def supports_images(self) -> bool:
        return False


def fifty_turn_thread(workspace: str) -> Thread:
    thread = Thread(name="long", workspace=workspace)
    for step in range(25):
        thread.begin_run(run_id=f"r{step}", task=f"task {step}: read the module", agent="build", model="m")
        call = {"id": f"c{step}", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
        thread.add(
            [
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": f"c{step}", "content": FILE},
            ],
            step_done=True,
        )
        thread.add([{"role": "assistant", "content": f"answer {step}"}], step_done=True)
        thread.end_run(status="success", tokens=100, cost_usd=0.0)
    assert thread.turns == 50
    return thread


def time_to_first_call(root: Path, thread_factory: Callable[[], Thread | None]) -> float:
    config = load_config(overrides={"workspace.root": str(root)}, environ={})
    samples = []
    for _ in range(RUNS):
        engine = build_engine(config, mode="yolo")
        model = FirstCall()
        loop = AgentLoop(engine, model, resolve_agent("build", config))
        thread = thread_factory()
        started = time.perf_counter()
        loop.run("Next, please.", thread=thread)
        assert model.first_at is not None
        samples.append(model.first_at - started)
    return statistics.median(samples) * 1000


def state_growth(root: Path, state: Path) -> tuple[int, int]:
    config = load_config(overrides={"workspace.root": str(root)}, environ={})
    store = ThreadStore(state / "threads")
    thread = Thread(name="ten", workspace=str(root))
    rewritten = 0
    for cell in range(10):
        loop = AgentLoop(
            build_engine(config, mode="yolo"), FirstCall(read=True), resolve_agent("build", config)
        )
        loop.run(f"Cell {cell}: read mod.py and tell me about it.", thread=thread)
        store.save(thread)
        rewritten += len(json.dumps(thread.messages)) + 200
    size = sum(p.stat().st_size for p in (state / "threads").iterdir())
    return size, rewritten


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp, "ws").resolve()
        root.mkdir()
        (root / "mod.py").write_text(FILE)
        fresh = time_to_first_call(root, lambda: None)
        long = time_to_first_call(root, lambda: fifty_turn_thread(str(root)))
        print(f"first model call after run(): fresh thread {fresh:.2f} ms, 50-turn thread {long:.2f} ms")
        print(f"  follow-up overhead: +{long - fresh:.2f} ms ({long / fresh:.2f}x the fresh run)")
        size, rewritten = state_growth(root, Path(tmp, "state"))
        print(
            f"10-cell thread in the state folder: {size / 1024:.1f} KB appended "
            f"(rewriting the whole thread after each cell would write {rewritten / 1024:.1f} KB, "
            f"{rewritten / size:.1f}x)"
        )


if __name__ == "__main__":
    main()

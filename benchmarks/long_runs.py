"""Long runs: the loop's own cost per step, the notebook layer's overhead, and the size of the saved record.

Each step of the scripted run reads a 2 KB module and says a line of text (yolo, no approvals).

1. The loop's own time per step (a model stand-in that answers at once, in process, no LiteLLM): the median
   over steps 1-100, 301-400 and 901-1000 of a 1,000-step run. Flat means the late steps cost what the
   early ones do (token counting, compression checks and transcript building do not rescan the history).
2. The same scripted run (the scripted model replayed in process, as in every demo) of `--steps` steps
   through the Python API and in a kernel (nbclient, the cell timed after a warm-up cell): the ratio
   kernel / API (goal <= 1.5), then a 1,000-step run in the kernel, which must finish.
3. The bytes the run's cell adds to the notebook, per step (long outputs stay whole in the run's
   transcript file, `<checkpoints.dir>/<run_id>/transcript.json`; see
   `architect_nb.notebook.output.saved_record`).
4. The bytes of that transcript per step, and how many of them are the inspector's records of what the model
   was sent and said (`model_request`, `model_reply`: each message stored once, so a late step's record is
   the size of an early one's).

Run: `.venv/bin/python benchmarks/long_runs.py [--steps 400] [--long 1000]` (a few minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: the tests' helpers are tests.support

import nbformat  # noqa: E402
from nbclient import NotebookClient  # noqa: E402

from architect_nb.agent import create_loop  # noqa: E402
from architect_nb.agent.config import resolve_agent  # noqa: E402
from architect_nb.agent.loop import AgentLoop  # noqa: E402
from architect_nb.agent.models.llm import LLMResponse, ToolCall, Usage  # noqa: E402
from architect_nb.config import load_config  # noqa: E402
from architect_nb.execution.build import build_engine  # noqa: E402
from tests.support.kernel import kernel_env, write_kernelspecs  # noqa: E402

FILE = "".join(f"def helper_{n}(x):\n    return x * {n}  # a line of a 2 KB module\n" for n in range(30))
GOAL = 1.5


class Instant:
    """Reads mod.py `steps` times, then answers; notes when each step's call came."""

    model = "instant"

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.calls: list[float] = []

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
        self.calls.append(time.perf_counter())
        n = len(self.calls)
        if on_text is not None:
            on_text(f"Step {n}: reading.")
        if n > self.steps:
            return LLMResponse("done", [], Usage(10, 5))
        return LLMResponse(
            f"Step {n}: reading.", [ToolCall(f"c{n}", "read_file", {"path": "mod.py"})], Usage(10, 5)
        )

    def context_window(self) -> int:
        return 100_000_000

    def supports_images(self) -> bool:
        return False


def workspace(tmp: Path, steps: int) -> tuple[Path, str]:
    ws = Path(tempfile.mkdtemp(prefix=f"ws{steps}-", dir=tmp))
    (ws / "mod.py").write_text(FILE)
    turns: list[dict[str, Any]] = [
        {
            "content": f"Step {i}: reading.",
            "tool_calls": [{"name": "read_file", "arguments": {"path": "mod.py"}}],
        }
        for i in range(steps)
    ]
    script = ws.parent / f"{ws.name}.yaml"
    script.write_text(yaml.safe_dump({"turns": [*turns, {"content": "done"}]}))
    return ws, f"scripted/{script}"


def loop_per_step(tmp: Path, steps: int) -> list[float]:
    ws, _ = workspace(tmp, steps)
    config = load_config(overrides={"workspace.root": str(ws)}, environ={})
    model = Instant(steps)
    loop = AgentLoop(build_engine(config, mode="yolo"), model, resolve_agent("build", config))
    loop.agent = type(loop.agent)(**{**loop.agent.__dict__, "max_steps": steps + 5})
    loop.run("Read mod.py again and again.")
    return [b - a for a, b in zip(model.calls, model.calls[1:], strict=False)]


def api_run(tmp: Path, steps: int) -> float:
    ws, model = workspace(tmp, steps)
    config = load_config(overrides={"workspace.root": str(ws), "checkpoints.persist": False}, environ={})
    loop = create_loop(config, model=model, mode="yolo", max_steps=steps + 5)
    started = time.perf_counter()
    result = loop.run("Read mod.py again and again.")
    assert result.status == "success" and result.steps == steps + 1, result.message
    return time.perf_counter() - started


def transcript_bytes(tmp: Path, steps: int) -> tuple[int, int, int, int]:
    """(whole transcript, its model_* events, the largest and smallest of requests 301-400), in bytes."""
    ws, model = workspace(tmp, steps)
    config = load_config(overrides={"workspace.root": str(ws), "checkpoints.persist": False}, environ={})
    loop = create_loop(config, model=model, mode="yolo", max_steps=steps + 5)
    loop.run("Read mod.py again and again.")
    payload = loop.transcript.to_payload()

    def size(data: object) -> int:
        return len(json.dumps(data, default=str, ensure_ascii=False).encode())

    model_events = [e for e in payload["events"] if str(e["kind"]).startswith("model_")]
    late = [size(e) for e in model_events if e["kind"] == "model_request" and 300 < e["step"] <= 400]
    return size(payload), size(model_events), max(late, default=0), min(late, default=0)


def kernel_run(tmp: Path, steps: int, warm: str) -> tuple[float, int]:
    ws, model = workspace(tmp, steps)
    nb = nbformat.v4.new_notebook()
    options = f"--mode yolo --workspace {ws} --max-steps {steps + 5}"
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext architect_nb"),
        nbformat.v4.new_code_cell(f"%%architect --model {warm} {options}\nwarm up"),
        nbformat.v4.new_code_cell(f"%%architect --model {model} {options}\nRead mod.py again and again."),
    ]
    client = NotebookClient(
        nb, timeout=7200, kernel_name="architect-ipk7", resources={"metadata": {"path": str(ws)}}
    )
    with client.setup_kernel():
        client.execute_cell(nb.cells[0], 0)
        client.execute_cell(nb.cells[1], 1)
        before = len(nbformat.writes(nb).encode())
        started = time.perf_counter()
        client.execute_cell(nb.cells[2], 2)
        elapsed = time.perf_counter() - started
    added = len(nbformat.writes(nb).encode()) - before
    errors = [o for o in nb.cells[2].outputs if o.get("output_type") == "error"]
    assert not errors, errors
    return elapsed, added


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--long", type=int, default=1000)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        write_kernelspecs(tmp / "jupyter")
        os.environ["JUPYTER_PATH"] = str(tmp / "jupyter")
        os.environ.update(kernel_env())
        gaps = loop_per_step(tmp, 1000)
        windows = [(1, 100), (301, 400), (901, 1000)]
        medians = [statistics.median(gaps[a - 1 : b - 1]) * 1000 for a, b in windows]
        shown = ", ".join(f"steps {a}-{b}: {m:.2f} ms" for (a, b), m in zip(windows, medians, strict=True))
        print(f"the loop's own time per step (instant model, 1,000 steps): {shown}")
        print(f"  late / early: {medians[-1] / medians[0]:.2f}x (flat is 1.0)")
        _, warm = workspace(tmp, 1)
        api_run(tmp, 1)  # LiteLLM's import and the first call's set-up, as the kernel's warm-up cell does
        api = api_run(tmp, options.steps)
        kernel, added = kernel_run(tmp, options.steps, warm)
        ratio = kernel / api
        print(
            f"{options.steps}-step scripted run: Python API {api:.1f} s, kernel (nbclient) {kernel:.1f} s, "
            f"ratio {ratio:.2f} (goal <= {GOAL}): {'met' if ratio <= GOAL else 'NOT MET'}"
        )
        print(
            f"  the cell added {added / 1024:.0f} KB to the notebook, "
            f"{added / options.steps / 1024:.1f} KB a step"
        )
        whole, model_bytes, largest, smallest = transcript_bytes(tmp, options.steps)
        per_step = whole / options.steps / 1024
        per_model = model_bytes / options.steps / 1024
        print(
            f"  its transcript: {per_step:.1f} KB a step, of which the model requests and replies "
            f"{per_model:.1f} KB (requests 301-400: {smallest}-{largest} B each)"
        )
        if options.long:
            long_time, long_added = kernel_run(tmp, options.long, warm)
            print(
                f"{options.long}-step run in the kernel: finished in {long_time:.1f} s "
                f"({long_time / options.long * 1000:.0f} ms a step), "
                f"{long_added / options.long / 1024:.1f} KB a step"
            )


if __name__ == "__main__":
    main()

"""A student's kernel: its memory, and its first model call's wait, with LiteLLM in the kernel or a gateway.

Three real kernels (ipykernel, from this venv) side by side, each in a fresh process:

- plain: the kernel with nothing loaded;
- litellm: `%load_ext architect_nb`, the model called through in-process LiteLLM (the default);
- gateway: `%load_ext architect_nb` with the gateway configured as a hub would (`ARCHITECT_MODEL=
  litellm_proxy/...`, `LITELLM_PROXY_API_BASE`), the model called through the light HTTP client.

After `%load_ext` and a 5 s pause (a person typing the task), two `%%architect` cells run against the local
OpenAI-compatible server; the wait is from sending a cell to its request reaching the server. The resident
memory (RSS, from /proc, the kernel process alone) is read after both cells, once everything is loaded.
The goal: the gateway kernel adds under 60 MB to the plain kernel, and its first call waits on no import
of the model client (the warm-up did it). What the first cell of either kernel still imports is the
notebook layer's (ipywidgets, the approval and live views), a tenth of a second.

Run: `.venv/bin/python benchmarks/kernel_memory.py` (about a minute).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: the tests' helpers are tests.support

from architect_nb.testing.openai_server import OpenAIStubServer, Reply  # noqa: E402
from tests.support.kernel import FrontEnd, front_end  # noqa: E402

PAUSE = 5.0
GOAL_MB = 60.0
READ_RSS = (
    "import os, sys\n"
    "print([l.split()[1] for l in open(f'/proc/{os.getpid()}/status') if l.startswith('VmRSS')][0])\n"
    "print(' '.join(f'{m}: {\"yes\" if m in sys.modules else \"no\"}' for m in ('litellm', 'httpx')))"
)


def rss_mb(fe: FrontEnd) -> tuple[float, str]:
    lines = fe.run(READ_RSS).text().strip().splitlines()
    return int(lines[-2]) / 1024, lines[-1]


def one_kernel(tmp: Path, server: OpenAIStubServer, kind: str) -> tuple[float, str, list[float]]:
    ws = Path(tempfile.mkdtemp(dir=tmp))
    env = {"STUB_API_KEY": "sk-stub-0123456789"}
    if kind == "litellm":
        (ws / ".architect.yaml").write_text(
            f"llm:\n  model: openai/gpt-4o-mini\n  api_base: {server.url}\n  api_key_env: STUB_API_KEY\n"
        )
    if kind == "gateway":
        env |= {
            "ARCHITECT_MODEL": "litellm_proxy/gpt-4o-mini",
            "LITELLM_PROXY_API_BASE": server.url,
            "LITELLM_PROXY_API_KEY": "sk-student",
        }
    waits: list[float] = []
    with front_end("ipk7", tmp, ws, env) as fe:
        fe.run("1 + 1")
        if kind != "plain":
            assert fe.run("%load_ext architect_nb").status == "ok"
            time.sleep(PAUSE)
            for n in range(2):
                server.queue(Reply.text(f"answer {n}"))
                seen = len(server.request_times)
                sent = time.monotonic()
                cell = fe.run(
                    f"%%architect --mode yolo --workspace {ws} --new\nSay hello ({n}).", timeout=120
                )
                assert cell.status == "ok" and len(server.request_times) == seen + 1, cell.outputs
                waits.append(server.request_times[seen] - sent)
        memory, modules = rss_mb(fe)
    return memory, modules, waits


def main() -> None:
    with tempfile.TemporaryDirectory() as folder, OpenAIStubServer() as server:
        tmp = Path(folder)
        results = {kind: one_kernel(tmp, server, kind) for kind in ("plain", "litellm", "gateway")}
    plain = results["plain"][0]
    print(f"kernel memory (RSS after two %%architect cells); each cell's wait, after %load_ext + {PAUSE:g} s")
    for kind, (memory, modules, waits) in results.items():
        added = f"+{memory - plain:6.1f} MB" if kind != "plain" else " " * 10
        calls = f"first call {waits[0]:5.2f} s, second {waits[1]:5.2f} s" if waits else ""
        print(f"{kind:8} {memory:7.1f} MB {added}  {calls:36}  loaded: {modules}")
    gateway, litellm = results["gateway"], results["litellm"]
    print(
        f"gateway / litellm memory added: {(gateway[0] - plain) / (litellm[0] - plain):.2f}x; "
        f"gateway adds {gateway[0] - plain:.0f} MB (goal < {GOAL_MB:g} MB): "
        f"{'met' if gateway[0] - plain < GOAL_MB else 'NOT met'}; "
        f"gateway first / second call {gateway[2][0] / gateway[2][1]:.1f}x"
    )


if __name__ == "__main__":
    main()

"""The first model call of a kernel: time from a `%%architect` cell's start to its request reaching the model.

In a fresh kernel: `%load_ext architect_nb`, a 5 s pause (a person typing the task), then two `%%architect`
cells against a local OpenAI-compatible server (`architect_nb.testing.openai_server`), one after the other.
For each cell, the time from sending it to the server receiving its request. With the background warm-up
(the default) the first cell should take about as long as the second; with `ARCHITECT_WARMUP=0`, it waits
for LiteLLM's import as before. Also shown: `%load_ext`'s own time, and a trivial cell's round trip while
the warm-up runs (the kernel stays responsive). With `--join`, the first cell waits for the warm-up to end
(on a loaded machine it can take longer than the pause), to show what is left once it is done.

Run: `.venv/bin/python benchmarks/first_call.py [--join]` (about a minute).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: the tests' helpers are tests.support

from architect_nb.testing.openai_server import OpenAIStubServer, Reply  # noqa: E402
from tests.support.kernel import front_end  # noqa: E402

PAUSE = 5.0
JOIN = "--join" in sys.argv


def one_kernel(tmp: Path, server: OpenAIStubServer, warm_up: bool) -> tuple[float, float, float, float]:
    ws = Path(tempfile.mkdtemp(dir=tmp))
    (ws / ".architect.yaml").write_text(
        f"llm:\n  model: openai/stub-model\n  api_base: {server.url}\n  api_key_env: STUB_API_KEY\n"
    )
    env = {"STUB_API_KEY": "sk-stub-0123456789", "ARCHITECT_WARMUP": "1" if warm_up else "0"}
    with front_end("ipk7", tmp, ws, env) as fe:
        fe.run("import time")
        started = time.monotonic()
        loaded = fe.run("%load_ext architect_nb")
        load_ext = time.monotonic() - started
        assert loaded.status == "ok"
        started = time.monotonic()
        fe.run("1 + 1")
        round_trip = time.monotonic() - started
        time.sleep(PAUSE)
        if warm_up and JOIN:  # diagnosis: let the warm-up finish, however long it takes
            join = "from architect_nb.notebook.warm_up import warm_up_thread; warm_up_thread().join()"
            fe.run(join, timeout=300)
        firsts = []
        for n in range(2):
            server.queue(Reply.text(f"answer {n}"))
            seen = len(server.request_times)
            sent = time.monotonic()
            cell = fe.run(f"%%architect --mode yolo --workspace {ws} --new\nSay hello ({n}).", timeout=120)
            assert cell.status == "ok" and len(server.request_times) == seen + 1, cell.outputs
            firsts.append(server.request_times[seen] - sent)
    return load_ext, round_trip, firsts[0], firsts[1]


def main() -> None:
    with tempfile.TemporaryDirectory() as folder, OpenAIStubServer() as server:
        tmp = Path(folder)
        print(f"cell sent → its request at the model server, after %load_ext and a {PAUSE:g} s pause")
        for warm_up in (True, False):
            load_ext, round_trip, first, second = one_kernel(tmp, server, warm_up)
            label = "with the warm-up (default)" if warm_up else "ARCHITECT_WARMUP=0 (as before)"
            print(
                f"{label:32} first cell {first:5.2f} s, second cell {second:5.2f} s "
                f"(first / second {first / second:.1f}x); %load_ext {load_ext * 1000:.0f} ms, "
                f"a `1 + 1` cell right after it {round_trip * 1000:.0f} ms"
            )


if __name__ == "__main__":
    main()

"""The notebook layer's quoted figures, measured in real kernels (current ipykernel and 6.31 if present).

- `%load_ext architect_nb` time: in a fresh kernel, the magic alone (goal < 0.3 s);
- click-to-execution latency: Approve click sent → the decision shown, and → the approved edit's result shown
  (the edit ran), seen from the front end (a jupyter_client player, as in the tests);
- interrupt latency: interrupt sent → the cell's error reply, while waiting for a click and while a command
  runs (goal < 1 s);
- notebook size added by a 20-step run (nbclient, yolo), by mime type.

Run: `make setup-ipk6 && .venv/bin/python benchmarks/notebook.py` (about a minute).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: the tests' helpers are tests.support

import nbformat  # noqa: E402
import yaml  # noqa: E402
from nbclient import NotebookClient  # noqa: E402

from tests.support.kernel import (  # noqa: E402
    RUN_MIME,
    FrontEnd,
    available_kernels,
    front_end,
    kernel_env,
    write_kernelspecs,
)

SAMPLE = ROOT / "notebooks" / "sample_project"
CLICKS = 10
INTERRUPTS = 5


def _script(folder: Path, turns: list[dict[str, object]], name: str) -> str:
    path = folder / name
    path.write_text(yaml.safe_dump({"turns": turns}, sort_keys=False))
    return f"scripted/{path}"


def _workspace(tmp: Path, name: str) -> Path:
    ws = tmp / "ws" / name
    ws.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(SAMPLE, ws)
    return ws


def _ms(values: list[float]) -> str:
    return (
        f"median {statistics.median(values) * 1000:.1f} ms, max {max(values) * 1000:.1f} ms (n={len(values)})"
    )


def load_ext_time(fe: FrontEnd) -> float:
    cell = fe.run(
        "import time as _t; _s = _t.perf_counter(); "
        "get_ipython().run_line_magic('load_ext', 'architect_nb'); print(_t.perf_counter() - _s)"
    )
    return float(cell.text().split()[-1])


def _seen(fe: FrontEnd, needle: str, start: int, count: int = 1) -> float | None:
    """When the live view first showed `needle` `count` times, after the `start`-th display update."""
    return next((t for t, _d, html in fe.updates[start:] if html.count(needle) >= count), None)


def click_latency(fe: FrontEnd, tmp: Path) -> tuple[list[float], list[float]]:
    ws = _workspace(tmp, "clicks")
    turns: list[dict[str, object]] = [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": f"f{i}.txt", "content": f"{i}\n"}}]}
        for i in range(CLICKS)
    ]
    model = _script(tmp, [*turns, {"content": "done"}], "clicks.yaml")
    cell = fe.execute(f"%%architect --model {model} --workspace {ws}\nwrite files")
    decided, executed = [], []
    for i in range(CLICKS):
        button = fe.wait_for_button("Approve", timeout=60)
        start = len(fe.updates)
        sent = fe.click(button.comm_id)

        fe.wait(
            lambda start=start, n=i + 1: _seen(fe, ">ok</span>", start, n) is not None,
            30,
            "the approved call",
        )
        decided.append((_seen(fe, "<b>approved</b>", start, i + 1) or sent) - sent)
        executed.append((_seen(fe, ">ok</span>", start, i + 1) or sent) - sent)
    fe.wait(lambda: cell.done, 60, "the run")
    return decided, executed


def interrupt_latency(fe: FrontEnd, tmp: Path, *, command: bool) -> list[float]:
    out = []
    for i in range(INTERRUPTS):
        ws = _workspace(tmp, f"int-{command}-{i}")
        call = (
            {"name": "run_command", "arguments": {"command": f"sleep 40.{i}{int(command)}"}}
            if command
            else {"name": "write_file", "arguments": {"path": "x.txt", "content": "x"}}
        )
        model = _script(tmp, [{"tool_calls": [call]}, {"content": "x"}], f"int-{command}-{i}.yaml")
        mode = "--mode yolo" if command else ""
        cell = fe.execute(f"%%architect --model {model} --workspace {ws} {mode}\nwait")
        if command:
            fe.wait(lambda: any("sleep 40" in v for _t, _d, v in fe.updates[-3:]), 30, "the command")
            time.sleep(0.3)
        else:
            fe.wait_for_button("Approve", timeout=60)
        sent = fe.interrupt()
        fe.wait(lambda cell=cell: bool(cell.done), 10, "the interrupted cell")
        assert cell.status == "error" and cell.reply_at is not None
        out.append(cell.reply_at - sent)
    return out


def notebook_size(tmp: Path, kernel: str) -> dict[str, int]:
    ws = _workspace(tmp, "size")
    turns: list[dict[str, object]] = []
    for i in range(19):
        call = (
            {"name": "read_file", "arguments": {"path": "shop/cart.py"}}
            if i % 3 == 0
            else {"name": "run_command", "arguments": {"command": f"echo step {i}"}}
            if i % 3 == 1
            else {
                "name": "write_file",
                "arguments": {"path": f"notes/n{i}.txt", "content": f"note {i}\n" * 5},
            }
        )
        turns.append({"content": f"Step {i + 1}: working on it.", "tool_calls": [call]})
    turns.append({"content": "All twenty steps done."})
    model = _script(tmp, turns, "size.yaml")
    write_kernelspecs(tmp / "jupyter")
    os.environ["JUPYTER_PATH"] = str(tmp / "jupyter")
    os.environ.update(kernel_env())
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext architect_nb"),
        nbformat.v4.new_code_cell(f"%%architect --model {model} --mode yolo --max-steps 30\nTwenty steps"),
    ]
    before = len(nbformat.writes(nb).encode())
    NotebookClient(
        nb, timeout=120, kernel_name=f"architect-{kernel}", resources={"metadata": {"path": str(ws)}}
    ).execute()
    after = len(nbformat.writes(nb).encode())
    data = nb.cells[1].outputs[0]["data"]
    steps = data[RUN_MIME]["events"][-1]["steps"]
    sizes = {mime: len(json.dumps(value).encode()) for mime, value in data.items()}
    return {
        "steps": steps,
        "added_total": after - before,
        **sizes,
        "metadata": len(json.dumps(nb.metadata).encode()),
        "widget_state": len(json.dumps(nb.metadata.get("widgets", {})).encode()),
    }


def main() -> None:
    kernels = available_kernels()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        for kernel in kernels:
            ktmp = tmp / kernel
            (ktmp / "ws").mkdir(parents=True)
            with front_end(kernel, ktmp, ktmp) as fe:
                version = fe.run("import ipykernel; print(ipykernel.__version__)").text().strip()
                print(f"== ipykernel {version} ({kernel})")
                print(f"%load_ext architect_nb: {load_ext_time(fe) * 1000:.1f} ms")
                warm = fe.run(
                    f"%%architect --model {_script(ktmp, [{'content': 'hi'}], 'warm.yaml')}\nwarm up"
                )
                assert warm.status == "ok"
                decided, executed = click_latency(fe, ktmp)
                print(f"click → decision shown: {_ms(decided)}")
                print(f"click → approved call executed and shown: {_ms(executed)}")
                waiting = interrupt_latency(fe, ktmp, command=False)
                print(f"interrupt while waiting for a click → cell ends: {_ms(waiting)}")
                running = interrupt_latency(fe, ktmp, command=True)
                print(f"interrupt while a command runs → cell ends: {_ms(running)}")
        sizes = notebook_size(tmp, kernels[0])
        print(f"== notebook size added by one {sizes.pop('steps')}-step run (nbclient, {kernels[0]})")
        print(json.dumps(sizes, indent=2))


if __name__ == "__main__":
    main()

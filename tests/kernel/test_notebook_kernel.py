"""`%%architect` cells in real kernels (current ipykernel and 6.x), with a jupyter_client front end.

Each test plays JupyterLab: it sends the agent cell and queues cells behind it as Run All does, finds the
buttons' `comm_open` on iopub and clicks by sending the same `comm_msg` JupyterLab sends.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.agent import copy_sample_project, write_script
from tests.support.kernel import RUN_MIME, WIDGET_MIME, Cell, FrontEnd, front_end, kernel_params

# One kernel per version for the module (conftest's shared_kernel), handed to each test as new.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.parametrize("shared_kernel", kernel_params(), indirect=True, scope="module"),
]

EDIT = {
    "name": "edit_file",
    "arguments": {"path": "shop/cart.py", "old_str": "total = 0\n", "new_str": "total = 0.0\n"},
}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return copy_sample_project(tmp_path / "ws")


@pytest.fixture
def kernel(kernel_as_new: FrontEnd) -> FrontEnd:
    return kernel_as_new


@pytest.fixture
def fe(kernel: FrontEnd, ws: Path) -> FrontEnd:
    assert kernel.run(f"%architect config workspace.root={ws}").status == "ok", kernel.describe()
    return kernel


def _run_output(cell: Cell) -> dict[str, Any]:
    """The cell's first output: the live view, replaced by the static bundle at the end."""
    first = cell.outputs[0]
    assert WIDGET_MIME not in first["data"], "the live widgets were not replaced"
    assert {RUN_MIME, "text/html", "text/plain"} <= set(first["data"])
    return dict(first["data"][RUN_MIME])


def _live_html(cell: Cell) -> str:
    """What the cell's live view shows now (its first output, redrawn through `update_display_data`)."""
    return str(cell.outputs[0]["data"].get("text/html", "")) if cell.outputs else ""


def _finished(payload: dict[str, Any]) -> dict[str, Any]:
    assert payload["events"][-1]["kind"] == "run_finished"
    return dict(payload["events"][-1])


def _no_stray_output(fe: FrontEnd) -> None:
    assert not fe.stray, f"output outside any cell: {fe.stray}"


def test_approve_while_busy_keeps_run_all_order(fe: FrontEnd, ws: Path) -> None:
    model = write_script(
        ws, [{"content": "Fixing.", "tool_calls": [EDIT]}, {"content": "Totals are floats."}]
    )
    c1 = fe.execute(f"%%architect --model {model}\nMake totals floats")
    c2 = fe.execute("print('cell two')")
    c3 = fe.execute("print('cell three')")
    cart_before = (ws / "shop" / "cart.py").read_text()
    button = fe.wait_for_button("Approve")
    fe.pump()
    assert not c1.done and not c2.done and not c3.done, "queued cells ran before the agent cell ended"
    fe.click(button.comm_id)
    fe.wait(lambda: c3.finished, 60, "the queued cells")
    assert (c1.status, c2.status, c3.status) == ("ok", "ok", "ok"), fe.describe()
    assert c1.reply_seq is not None and c2.reply_seq is not None and c3.reply_seq is not None
    assert c1.reply_seq < c2.reply_seq < c3.reply_seq
    assert "total = 0.0" in (ws / "shop" / "cart.py").read_text()
    payload = _run_output(c1)
    assert _finished(payload)["stop_reason"] == "completed"
    answered = [e for e in payload["events"] if e["kind"] == "confirmation_answered"]
    assert [a["decision"] for a in answered] == ["approve"]
    # The run's output is all in its own cell; the queued cells hold only their own prints.
    assert [o.get("text") for o in c2.outputs] == ["cell two\n"]
    assert [o.get("text") for o in c3.outputs] == ["cell three\n"]
    # No widget is left in the finished cell: the prompt's output is emptied, so a saved notebook reopened
    # without the kernel shows no "Error displaying widget" (the labextension draws the Undo button).
    assert not any(WIDGET_MIME in o.get("data", {}) for o in c1.outputs), c1.outputs
    assert not fe.buttons("Approve"), "the buttons were not replaced by the decision"
    assert not [c for c in fe.comms.values() if c.open], "widgets left open after the run"
    _no_stray_output(fe)
    undo = fe.run("%architect undo")
    assert undo.status == "ok" and "restored 1 file(s)" in undo.text(), fe.describe()
    [result] = [o for o in undo.outputs if o["output_type"] == "execute_result"]
    assert result["metadata"] == {"architect_nb": {"level": "info"}}
    assert (ws / "shop" / "cart.py").read_text() == cart_before
    again = fe.run("%architect undo")
    [result] = [o for o in again.outputs if o["output_type"] == "execute_result"]
    assert result["metadata"] == {"architect_nb": {"level": "error"}} and "already undone" in again.text()


def test_deny_with_a_reason_reaches_the_model(fe: FrontEnd, ws: Path) -> None:
    model = write_script(
        ws,
        [
            {"tool_calls": [EDIT]},
            {"expect": {"tool_result_contains": "use a test file"}, "content": "Understood, no edit."},
        ],
    )
    c1 = fe.execute(f"%%architect --model {model}\nMake totals floats")
    button = fe.wait_for_button("Deny")
    fe.type_into(fe.reason_box().comm_id, "use a test file")
    fe.click(button.comm_id)
    fe.wait(lambda: c1.finished, 60, "the agent cell")
    assert c1.status == "ok"
    payload = _run_output(c1)
    assert _finished(payload)["stop_reason"] == "completed"  # the script checked the model saw the reason
    answered = [e for e in payload["events"] if e["kind"] == "confirmation_answered"]
    assert answered[0]["decision"] == "deny" and answered[0]["reason"] == "use a test file"
    assert "total = 0\n" in (ws / "shop" / "cart.py").read_text()


def test_abort_run_stops_the_run(fe: FrontEnd, ws: Path) -> None:
    model = write_script(ws, [{"tool_calls": [EDIT]}, {"content": "Stopped."}])
    c1 = fe.execute(f"%%architect --model {model}\nMake totals floats")
    c2 = fe.execute("print('after')")
    fe.click(fe.wait_for_button("Abort run").comm_id)
    fe.wait(lambda: c2.finished, 60, "the cells")
    assert c1.status == "ok" and c2.status == "ok"
    assert _finished(_run_output(c1))["stop_reason"] == "aborted"
    assert "total = 0\n" in (ws / "shop" / "cart.py").read_text()


def test_interrupt_while_waiting_for_a_click(fe: FrontEnd, ws: Path) -> None:
    model = write_script(ws, [{"tool_calls": [EDIT]}, {"content": "never"}])
    c1 = fe.execute(f"%%architect --model {model}\nMake totals floats")
    c2 = fe.execute("print('queued')")
    fe.wait_for_button("Approve")
    sent = fe.interrupt()
    fe.wait(lambda: c1.done and c2.done, 10, "the interrupted cells")  # an aborted cell never idles
    assert c1.reply_at is not None and c1.reply_at - sent < 1.0
    assert c1.status == "error" and c2.status == "aborted", fe.describe()
    assert _finished(_run_output(c1))["stop_reason"] == "interrupted"
    assert "total = 0\n" in (ws / "shop" / "cart.py").read_text()
    assert fe.run_past_abort("print('still alive')").status == "ok"


def _sleepers(marker: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def test_interrupt_while_a_command_runs_kills_it(fe: FrontEnd, ws: Path) -> None:
    marker = f"{time.time_ns() % 10_000_000}"
    command = f"sleep 3{marker[:3]}.{marker[3:]}"
    model = write_script(
        ws,
        [{"tool_calls": [{"name": "run_command", "arguments": {"command": command}}]}, {"content": "x"}],
    )
    c1 = fe.execute(f"%%architect --model {model} --mode yolo\nWait a while")
    c2 = fe.execute("print('queued')")
    fe.wait(lambda: bool(_sleepers(command)), 30, "the command to start")
    sent = fe.interrupt()
    fe.wait(lambda: c1.done and c2.done, 10, "the interrupted cells")  # an aborted cell never idles
    assert c1.reply_at is not None and c1.reply_at - sent < 1.0
    assert c1.status == "error" and c2.status == "aborted", fe.describe()
    assert not _sleepers(command), "the command outlived the interrupt"
    finished = _finished(_run_output(c1))
    assert finished["stop_reason"] == "interrupted"


def test_output_lands_in_the_starting_cell(fe: FrontEnd, ws: Path) -> None:
    """Clicks, kernel_info and other cells' requests arrive while the worker writes; nothing leaks."""
    steps = [
        {
            "content": f"Step {i}.",
            "tool_calls": [{"name": "run_command", "arguments": {"command": "sleep 0.2"}}],
        }
        for i in range(3)
    ]
    model = write_script(ws, [{"tool_calls": [EDIT]}, *steps, {"content": "All done."}])
    c1 = fe.execute(f"%%architect --model {model}\nWork slowly")
    c2 = fe.execute("print('two')")
    fe.click(fe.wait_for_button("Approve all like this").comm_id)
    for _ in range(5):
        fe.kc.kernel_info()
        fe.pump()
    fe.wait(lambda: c2.finished, 60, "both cells")
    assert c1.status == "ok" and c2.status == "ok", fe.describe()
    assert [o.get("text") for o in c2.outputs] == ["two\n"]
    payload = _run_output(c1)
    assert _finished(payload)["stop_reason"] == "completed"
    assert not [o for o in c1.outputs if o["output_type"] in ("stream", "error")]
    _no_stray_output(fe)


def test_each_kernel_waits_the_way_the_design_note_found_working(kernel: FrontEnd) -> None:
    cell = kernel.run(
        "import ipykernel; from architect_nb.notebook.pump import native_concurrent_comms; "
        "print(ipykernel.__version__, native_concurrent_comms())"
    )
    version, native = cell.text().split()
    assert version.startswith(("7.", "6."))
    assert native == str(not version.startswith(("6.", "7.0.", "7.1.", "7.2.", "7.3.")))


class _SlowModel:
    """An OpenAI-compatible endpoint that streams one word every 0.2 s for a minute (a slow model)."""

    def __init__(self) -> None:
        import http.server
        import threading

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                try:
                    for i in range(300):
                        chunk = {
                            "id": "c",
                            "object": "chat.completion.chunk",
                            "created": 0,
                            "model": "stub",
                            "choices": [
                                {"index": 0, "delta": {"content": f"word{i} "}, "finish_reason": None}
                            ],
                        }
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                        time.sleep(0.2)
                except OSError:
                    return

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_interrupt_while_the_model_streams(fe: FrontEnd) -> None:
    model = _SlowModel()
    try:
        fe.run("import os; os.environ['STUB_API_KEY'] = 'sk-stub-0000'")
        fe.run(f"%architect config llm.api_base={model.url} llm.api_key_env=STUB_API_KEY llm.retries=0")
        c1 = fe.execute("%%architect --model openai/stub\nTalk slowly")
        c2 = fe.execute("print('queued')")
        fe.wait(lambda: "word2" in _live_html(c1), 60, "the model to stream")
        sent = fe.interrupt()
        fe.wait(lambda: c1.done and c2.done, 10, "the interrupted cells")  # an aborted cell never idles
        assert c1.reply_at is not None and c1.reply_at - sent < 1.0
        assert c1.status == "error" and c2.status == "aborted", fe.describe()
        assert _finished(_run_output(c1))["stop_reason"] == "interrupted"
    finally:
        fe.run("%architect config llm.api_base=null llm.api_key_env=null")
        model.close()


def test_undo_after_a_kernel_restart_uses_the_saved_checkpoints(
    kernel: FrontEnd, ws: Path, tmp_path: Path
) -> None:
    """Checkpoints are on disk too: a new kernel (a restart, a reopened notebook) can undo the run once."""
    cart = ws / "shop" / "cart.py"
    before = cart.read_text()
    model = write_script(ws, [{"tool_calls": [EDIT]}, {"content": "Totals are floats."}])
    kernel.run(f"%architect config workspace.root={ws}")
    c1 = kernel.run(f"%%architect --model {model} --mode yolo\nMake totals floats")
    run_id = _run_output(c1)["run_id"]
    assert "total = 0.0" in cart.read_text()
    # A new kernel started elsewhere: the run's saved manifest knows its workspace.
    with front_end("ipk7", tmp_path / "new-kernel", tmp_path) as fresh:
        undo = fresh.run(f"%load_ext architect_nb\n%architect undo {run_id}")
        assert undo.status == "ok" and "restored 1 file(s)" in undo.text(), fresh.describe()
        assert cart.read_text() == before
        again = fresh.run(f"%architect undo {run_id}")
        assert "already undone" in again.text()
        unknown = fresh.run("%architect undo 0123456789ab")
        assert "no run '0123456789ab'" in unknown.text()
        hostile = fresh.run("%architect undo ../../etc")
        assert "no run '../../etc'" in hostile.text()
        prefix = fresh.run(f"%architect undo {run_id[:6]}")
        assert "give the whole id" in prefix.text()
    # The kernel that made the run knows too.
    assert "already undone" in kernel.run(f"%architect undo {run_id}").text()

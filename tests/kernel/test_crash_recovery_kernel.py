"""A kernel killed in the middle of a writing run: a new kernel finds the run (history, threads, a bare undo)
and undoes it whole, the call that was cut off included, binary files byte for byte."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest

from tests.support.agent import copy_sample_project, write_script
from tests.support.kernel import kernel_params, loaded_front_end

pytestmark = pytest.mark.slow

# The second call writes a binary file and then waits to be killed (its process group is killed with it).
_WRITE_AND_WAIT = (
    "python -c \"import pathlib, time; pathlib.Path('data/sales.db').write_bytes(bytes(range(256)) * 64); "
    "pathlib.Path('data/written').touch(); time.sleep(120)\""
)


@pytest.mark.parametrize("kernel_name", kernel_params())
def test_a_run_cut_off_by_a_killed_kernel_is_found_and_undone_in_a_new_one(
    kernel_name: str, tmp_path: Path
) -> None:
    ws = copy_sample_project(tmp_path / "ws")
    (ws / "data").mkdir()
    original = bytes(range(255, -1, -1)) * 40
    (ws / "data" / "sales.db").write_bytes(original)
    cart = ws / "shop" / "cart.py"
    before = cart.read_text()
    model = write_script(
        ws,
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "shop/cart.py", "content": "total = 1\n"}}
                ]
            },
            {"tool_calls": [{"name": "run_command", "arguments": {"command": _WRITE_AND_WAIT}}]},
            {"content": "never reached"},
        ],
    )
    with loaded_front_end(kernel_name, tmp_path / "first", ws) as first:
        first.execute(f"%%architect --model {model} --mode yolo\nRewrite the cart and rebuild the sales db")
        first.wait((ws / "data" / "written").exists, 90, "the command to write the database")
        pid = first.km.provisioner.pid  # type: ignore[union-attr]
        os.kill(pid, signal.SIGKILL)  # no cleanup, no end of run: as a crash or the OOM killer
        first.wait(lambda: not first.km.is_alive(), 30, "the kernel to die")
        _kill_the_orphaned_command(ws)
    assert cart.read_text() == "total = 1\n" and (ws / "data" / "sales.db").read_bytes() != original

    with loaded_front_end(kernel_name, tmp_path / "second", ws) as second:
        history = second.run("%architect history").text()
        assert "No runs in this kernel yet." in history and "Rewrite the cart" in history, history
        assert "cut off (its kernel stopped during step 2, run_command)" in history, history
        run_id = next(line.split()[0] for line in history.splitlines() if "Rewrite the cart" in line)
        assert run_id in second.run("%architect threads").text()
        offer = second.run("%architect undo").text()
        assert f"%architect undo {run_id}" in offer and "shop/cart.py" in offer, offer
        assert cart.read_text() == "total = 1\n"  # a bare undo offers; it does not undo
        report = second.run(f"%architect undo {run_id}").text()
        assert "restored" in report and "stopped during step 2 (run_command)" in report, report
    assert cart.read_text() == before
    assert (ws / "data" / "sales.db").read_bytes() == original
    assert not (ws / "data" / "written").exists()


def _kill_the_orphaned_command(ws: Path) -> None:
    """The sleeping command outlives its kernel (its own process group, as every command's): end it, as the
    machine's reboot or the person would."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if "data/written" in cmdline and "time.sleep(120)" in cmdline:
            with contextlib.suppress(OSError):
                os.kill(int(proc.name), signal.SIGKILL)
    time.sleep(0.2)

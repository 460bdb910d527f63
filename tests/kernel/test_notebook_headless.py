"""Headless runs with nbclient (as papermill and `jupyter execute` run notebooks), and secret redaction.

Nobody clicks in a headless run: an unanswered approval is denied after the configured timeout, never
approved, and the message says how to run unattended. A yolo run completes. The saved notebook holds the
static run output (no live widget), and no secret from the environment reaches it, the outputs or the log.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from architect_nb.testing.notebook_run import PATIENT_OUTPUTS
from tests.support.agent import copy_sample_project, write_script
from tests.support.kernel import RUN_MIME, WIDGET_MIME, available_kernels, kernel_env, write_kernelspecs

pytestmark = pytest.mark.slow

EDIT = {
    "name": "edit_file",
    "arguments": {"path": "shop/cart.py", "old_str": "total = 0\n", "new_str": "total = 0.0\n"},
}
FAKE_SECRET = "zq7-notreal-4242-secret-value"


def _run(tmp: Path, ws: Path, kernel: str, cells: list[str], monkeypatch: pytest.MonkeyPatch) -> Any:
    if kernel not in available_kernels():
        pytest.skip("no .venv-ipk6: run `make setup-ipk6`")
    write_kernelspecs(tmp / "jupyter")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp / "jupyter"))
    for key, value in kernel_env({"FAKE_SERVICE_API_KEY": FAKE_SECRET}).items():
        monkeypatch.setenv(key, value)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in ["%load_ext architect_nb", *cells]]
    client = NotebookClient(
        nb,
        timeout=60,
        kernel_name=f"architect-{kernel}",
        resources={"metadata": {"path": str(ws)}},
        **PATIENT_OUTPUTS,
    )
    # asyncio.run closes its event loop; client.execute() would leave one open for a later test's GC to flag.
    asyncio.run(client.async_execute())
    return nb


def _payload(cell: Any) -> dict[str, Any]:
    [first, *_rest] = cell.outputs
    assert WIDGET_MIME not in first.get("data", {}), "the live view was not replaced"
    return dict(first["data"][RUN_MIME])


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return copy_sample_project(tmp_path / "ws")


@pytest.mark.parametrize("kernel", ["ipk7", "ipk6"])
def test_an_unanswered_approval_is_denied_after_the_timeout(
    kernel: str, tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = write_script(
        ws,
        [
            {"tool_calls": [EDIT]},
            {"expect": {"tool_result_contains": "never approved"}, "content": "I could not edit."},
        ],
    )
    nb = _run(
        tmp_path,
        ws,
        kernel,
        [
            "%architect config notebook.approval_timeout=1.5",
            f"%%architect --model {model}\nMake totals floats",
            "print('after the agent')",
        ],
        monkeypatch,
    )
    assert len(nb.cells[2].outputs) == 1, "the run's cell holds its one static output, nothing else"
    payload = _payload(nb.cells[2])
    [answer] = [e for e in payload["events"] if e["kind"] == "confirmation_answered"]
    assert answer["decision"] == "deny"
    for hint in ("1.5 s", "--mode yolo", "--dry-run", "allow rules in .architect.yaml"):
        assert hint in answer["reason"]
    assert payload["events"][-1]["stop_reason"] == "completed"
    assert "total = 0\n" in (ws / "shop" / "cart.py").read_text()
    assert nb.cells[3].outputs[0]["text"] == "after the agent\n"
    saved = nbformat.writes(nb)
    assert WIDGET_MIME not in json.dumps([c.outputs for c in nb.cells])
    assert "never approved" in saved
    # nbclient saves the state of every widget it ever saw, closed or not: here only those shown while the
    # one prompt waited (the log above it and the prompt), with their text emptied, so no diff is kept twice.
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    print(f"widget state kept for one unanswered prompt: {len(json.dumps(state))} B, {len(state)} models")
    assert len(state) <= 18 and len(json.dumps(state)) < 15_000
    assert "total = 0.0" not in json.dumps(state) and "shop/cart.py" not in json.dumps(state)


@pytest.mark.parametrize("kernel", ["ipk7"])
def test_a_yolo_run_completes_headless_and_keeps_no_secret(
    kernel: str, tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "architect.log"
    (ws / ".architect.yaml").write_text(f"logging:\n  level: debug\n  file: {log}\n")
    model = write_script(
        ws,
        [
            {"content": "Editing.", "tool_calls": [EDIT]},
            {
                "content": "Checking the environment.",
                "tool_calls": [{"name": "run_command", "arguments": {"command": "env"}}],
            },
            {"content": f"The key was {FAKE_SECRET}; all done."},
        ],
    )
    nb = _run(
        tmp_path,
        ws,
        kernel,
        [f"%%architect --model {model} --mode yolo\nFloat totals, then run env"],
        monkeypatch,
    )
    payload = _payload(nb.cells[1])
    assert payload["events"][-1]["stop_reason"] == "completed"
    assert "total = 0.0" in (ws / "shop" / "cart.py").read_text()
    [env_result] = [e for e in payload["events"] if e["kind"] == "tool_result" and e["tool"] == "run_command"]
    assert "FAKE_SERVICE_API_KEY=[REDACTED" in env_result["output"]  # the value did flow, and was redacted
    saved = nbformat.writes(nb)
    assert "widgets" not in nb.metadata, "a run that asked nothing opened a widget"
    assert FAKE_SECRET not in saved
    assert log.exists() and log.stat().st_size > 0
    assert FAKE_SECRET not in log.read_text()
    assert "[REDACTED:FAKE_SERVICE_API_KEY]" in saved

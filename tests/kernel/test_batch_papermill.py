"""Batch runs as teams run them: `docs/batch/run_many.py` (papermill, two workspaces in parallel) and
`jupyter execute`, each notebook in its own real kernel, on the scripted model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.kernel import ROOT, kernel_env

pytestmark = pytest.mark.slow

SCRIPT = """price_as: gpt-4o-mini
turns:
  - tool_calls:
      - name: edit_file
        arguments: {path: greeting.txt, old_str: "hello\\n", new_str: "hello, world\\n"}
  - expect: {tool_result_contains: "hello, world"}
    content: "Greeted the world."
"""
BATCH = ROOT / "docs" / "batch"


def workspace(parent: Path, name: str, greeting: str) -> Path:
    ws = parent / name
    ws.mkdir(parents=True)
    (ws / "greeting.txt").write_text(greeting)
    (ws / "run.yaml").write_text(SCRIPT)
    return ws


def test_run_many_runs_each_workspace_writes_summaries_and_fails_when_one_run_failed(tmp_path: Path) -> None:
    good = workspace(tmp_path / "projects", "good", "hello\n")
    bad = workspace(tmp_path / "projects", "bad", "goodbye\n")  # the scripted edit finds no "hello"
    out = tmp_path / "runs"
    command = [sys.executable, str(BATCH / "run_many.py"), "--task", "Greet the world.", "--model"]
    command += ["scripted/run.yaml", "--allow", "edit_file(*.txt)", "--jobs", "2", "--out", str(out)]
    done = subprocess.run(
        [*command, "--timeout", "240", str(good), str(bad)],
        capture_output=True,
        text=True,
        timeout=300,
        env=kernel_env(),
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    passed = json.loads((out / "good.summary.json").read_text())
    failed = json.loads((out / "bad.summary.json").read_text())
    assert (passed["status"], passed["steps"], passed["files_changed"]) == ("success", 2, ["greeting.txt"])
    assert passed["cost_usd"] > 0 and passed["approvals"][0]["rule"] == "edit_file(*.txt)"
    assert (failed["status"], failed["stop_reason"], failed["files_changed"]) == (
        "failed",
        "script_error",
        [],
    )
    assert (good / "greeting.txt").read_text() == "hello, world\n" and (
        bad / "greeting.txt"
    ).read_text() == "goodbye\n"
    executed = json.loads((out / "good.ipynb").read_text())
    injected = [c for c in executed["cells"] if "injected-parameters" in c["metadata"].get("tags", [])]
    assert injected and "Greet the world." in "".join(injected[0]["source"])
    assert [r["status"] for r in json.loads((out / "runs.json").read_text())] == ["success", "failed"]
    table = {line.split()[0]: line.split()[1] for line in done.stdout.splitlines() if line[:1].strip()}
    assert table == {"good": "success", "bad": "failed"}


def test_jupyter_execute_takes_its_parameters_from_the_environment_and_fails_with_the_run(
    tmp_path: Path,
) -> None:
    bad = workspace(tmp_path, "bad", "goodbye\n")
    notebook = tmp_path / "task.ipynb"
    notebook.write_bytes((BATCH / "task.ipynb").read_bytes())
    summary = tmp_path / "bad.summary.json"
    env = kernel_env(
        {
            "ARCHITECT_BATCH_TASK": "Greet the world.",
            "ARCHITECT_BATCH_WORKSPACE": str(bad),
            "ARCHITECT_BATCH_MODEL": "scripted/run.yaml",
            "ARCHITECT_BATCH_ALLOW": "edit_file(*.txt)",
            "ARCHITECT_BATCH_SUMMARY": str(summary),
        }
    )
    done = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "jupyter"), "execute", str(notebook), "--timeout", "240"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode != 0
    assert "UnattendedRunFailed" in done.stderr and "script_error" in done.stderr
    written = json.loads(summary.read_text())
    assert (written["status"], written["task"], written["allow"]) == (
        "failed",
        "Greet the world.",
        ["edit_file(*.txt)"],
    )

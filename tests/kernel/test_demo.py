"""`make demo` runs notebook 01 headless in a real kernel, prints a readable transcript, touches nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def test_demo_runs_the_quickstart_notebook_and_touches_nothing() -> None:
    sample = ROOT / "notebooks" / "sample_project" / "shop" / "cart.py"
    before = sample.read_bytes()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    out = subprocess.run(
        [sys.executable, "-m", "architect_nb.demo"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    for expected in (
        "In [1]: %load_ext architect_nb",
        "→ read_file(",
        "→ edit_file(",
        "? approval asked for edit_file",
        "-        total = 0\n",
        "+        total = 0.0\n",
        "  ? approve\n",
        "hook py-compile: passed",
        "2 passed",
        "SUCCESS (completed) after 5 steps",
        "Files changed: shop/cart.py.",
        "cost: $0.00",
        "approvals: [('edit_file', 'approve')]",
        "Undo of run",
        "approvals clicked: 1.",
    ):
        assert expected in text, expected
    assert "\\x1b[" not in text, "colour codes leak into the transcript"
    assert "HBox(" not in text, "widgets are not printed"
    assert sample.read_bytes() == before

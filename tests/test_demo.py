"""`make demo` runs the build agent on the scripted model and leaves the repository untouched."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_demo_runs_end_to_end_and_touches_nothing() -> None:
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
        "→ edit_file(",
        "? approval asked for edit_file",
        "-        total = 0\n",
        "+        total = 0.0\n",
        "2 passed",
        "SUCCESS (completed) after 5 steps",
        "Files changed: shop/cart.py.",
        "Undo of run",
    ):
        assert expected in text, expected
    assert sample.read_bytes() == before

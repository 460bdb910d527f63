"""`make demo`: runs `notebooks/01-quickstart.ipynb` headless and prints it as a terminal transcript.

The notebook runs in a real kernel on the scripted model (no API key), on a copy of `notebooks/`, so the
repository is left untouched. Nobody sits at a headless run, so this front end clicks Approve on the one
approval the run asks for, as a person would in JupyterLab; the transcript shows the question, the diff and
the answer. Each cell is printed as soon as it finishes: the code, its output, and each agent run replayed
step by step (tool calls, diffs, approvals, hook results, tokens and cost).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

from architect_nb.testing.notebook_run import print_cell, run_notebook

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOK = "01-quickstart.ipynb"


def main() -> int:
    started = time.perf_counter()
    color = sys.stdout.isatty()
    with tempfile.TemporaryDirectory(prefix="architect-demo-") as tmp:
        copy = Path(tmp) / "notebooks"
        shutil.copytree(NOTEBOOKS, copy, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        print(
            f"Running notebooks/{NOTEBOOK} in a fresh kernel, headless, on the scripted model (no API key)."
        )
        print("This front end clicks Approve when the run asks, as you would in JupyterLab.")
        nb, clicks = run_notebook(
            copy / NOTEBOOK,
            env={"TMPDIR": tmp},  # the notebook's scratch workspace goes where this demo cleans up
            on_cell=lambda cell, index: print_cell(cell, index, sys.stdout, color=color),
        )
    errors = [o for c in nb.cells for o in c.get("outputs", ()) if o.get("output_type") == "error"]
    print(f"\nNotebook finished in {time.perf_counter() - started:.1f} s; approvals clicked: {len(clicks)}.")
    return 1 if errors or not clicks else 0


if __name__ == "__main__":
    sys.exit(main())

"""The notebook check's time against one `jupyter execute` of the same notebook: the repo notebook of
`notebooks/sample_ds_repo` (pandas, four reports on 360 orders), checked against an unchanged copy.

    python benchmarks/notebook_check.py

The check runs the notebook twice (before and after) in parallel kernels, plus its comparison; `jupyter
execute` runs it once. Medians of three runs each, alternated so both see the same machine load. Goal: the
check takes at most 1.5 times one `jupyter execute`.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from architect_nb.checks import compare_notebook_runs

ROOT = Path(__file__).resolve().parents[1]
REPO = ROOT / "notebooks" / "sample_ds_repo"
NOTEBOOK = "explore.ipynb"
GOAL = 1.5
REPEAT = 3


def jupyter_execute(folder: Path) -> float:
    started = time.perf_counter()
    jupyter = Path(sys.executable).parent / "jupyter"
    out = folder / "executed.ipynb"
    subprocess.run(
        [str(jupyter), "execute", NOTEBOOK, f"--output={out.name}"],
        cwd=folder,
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - started


def check(before: Path, after: Path) -> float:
    started = time.perf_counter()
    result = compare_notebook_runs(NOTEBOOK, before=before, after=after)
    seconds = time.perf_counter() - started
    if not result.same:
        raise SystemExit(f"the unchanged notebook did not check as the same:\n{result.text()}")
    return seconds


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="architect-bench-check-") as folder:
        before, after = Path(folder) / "before", Path(folder) / "after"
        for side in (before, after):
            shutil.copytree(REPO, side, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
        execute_times, check_times = [], []
        for _ in range(REPEAT):
            execute_times.append(jupyter_execute(after))
            check_times.append(check(before, after))
    one, both = statistics.median(execute_times), statistics.median(check_times)
    ratio = both / one
    print(f"{'':22} {'median s':>9}  runs")
    print(f"{'jupyter execute':22} {one:>9.2f}  {', '.join(f'{t:.2f}' for t in execute_times)}")
    print(f"{'notebook check':22} {both:>9.2f}  {', '.join(f'{t:.2f}' for t in check_times)}")
    print(f"ratio: {ratio:.2f} (goal: at most {GOAL:g})")
    if ratio > GOAL:
        raise SystemExit(f"the check took {ratio:.2f} times one jupyter execute, over {GOAL:g}")


if __name__ == "__main__":
    main()

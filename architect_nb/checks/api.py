"""`compare_notebook_runs`: the check as a function, for CI, the `check` command, the magic and the gate."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from architect_nb.checks.compare import compare_sides
from architect_nb.checks.result import CheckResult
from architect_nb.checks.rules import Tolerance
from architect_nb.checks.sides import SideRequest, run_sides

__all__ = ["compare_notebook_runs"]


def compare_notebook_runs(
    notebook: str | Path,
    *,
    before: str | Path,
    after: str | Path,
    compare: Sequence[str] = (),
    rel_tol: float = 1e-9,
    abs_tol: float = 1e-12,
    image_threshold: float = 0.001,
    stability: bool = False,
    kernel_name: str | None = None,
    cell_timeout: float = 120.0,
    timeout: float = 600.0,
) -> CheckResult:
    """Run `notebook` in a fresh kernel in each folder, at once, and compare their outputs cell by cell.

    Args:
        notebook: The notebook's path inside both folders (or an absolute path inside `after`).
        before: The folder as it was before the change (the reference side).
        after: The folder as it is now.
        compare: Variable names shown at the end of both runs and compared too (for notebooks whose cells
            the change moved or merged).
        rel_tol, abs_tol: How far two numbers may differ and still be the same.
        image_threshold: The share of an image's pixels that may differ.
        stability: Run the before side twice (at once with the after side) and report the cells where
            those two runs disagree as unstable rather than changed.
        kernel_name: The kernel spec to run; by default the notebook's own, else `python3`.
        cell_timeout: Seconds one cell may take.
        timeout: Seconds the whole notebook may take on each side.

    Returns:
        A `CheckResult`: `same`, `differences`, `unstable`, the cells added and removed, the warnings, and a
        `failure` when a side could not run to the end. `text()` and `html()` are its report.
    """
    started = time.perf_counter()
    before_dir, after_dir = Path(before).resolve(), Path(after).resolve()
    relative = _relative(Path(notebook), after_dir)
    if relative is None:
        return CheckResult(
            notebook=str(notebook), failure=f"{notebook} is not inside the after folder {after_dir}"
        )
    names = tuple(compare)
    shown = str(relative)
    bad = [n for n in names if not all(part.isidentifier() for part in n.split("."))]
    if bad:
        return CheckResult(notebook=shown, failure=f"{bad[0]!r} is not a variable name")
    for name, folder in (("before", before_dir), ("after", after_dir)):
        if not (folder / relative).is_file():
            return CheckResult(
                notebook=shown, failure=f"{relative} does not exist on the {name} side ({folder})"
            )

    def side(folder: Path) -> SideRequest:
        path = folder / relative
        return SideRequest(
            notebook=path,
            cwd=path.parent,
            kernel_name=kernel_name,
            cell_timeout=cell_timeout,
            notebook_timeout=timeout,
            compare=names,
        )

    requests = [side(before_dir), side(after_dir)] + ([side(before_dir)] if stability else [])
    runs = run_sides(requests)
    result = compare_sides(
        runs[0],
        runs[1],
        notebook=shown,
        tolerance=Tolerance(rel=rel_tol, abs=abs_tol, image_threshold=image_threshold),
        names=names,
        second_before=runs[2] if stability else None,
    )
    result.seconds = time.perf_counter() - started
    return result


def _relative(notebook: Path, after: Path) -> Path | None:
    """The notebook's path inside both folders; None for one outside them."""
    if notebook.is_absolute():
        try:
            return notebook.resolve().relative_to(after)
        except ValueError:
            return None
    return None if ".." in notebook.parts else notebook

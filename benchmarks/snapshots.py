"""What undo's snapshots cost a command: the time they add, and how the state folder grows.

For a workspace of 2,000 small files and for a copy of the standard library (the search benchmark's tree),
it times the same `run_command` (`true`) through the engine with snapshots (the default) and with a bare
engine that takes none, alternating runs, and prints the medians and the difference. Then it changes one
small file per command and prints how much the snapshot store grows per snapshot.

Goals (issue 20): under 50 ms added per command on 2,000 files, under 150 ms on the standard library.
Run: `.venv/bin/python benchmarks/snapshots.py [--runs 15]`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from search import copy_stdlib, tree_size

from architect_nb.config import load_config
from architect_nb.execution.build import build_engine
from architect_nb.execution.snapshots import CallSnapshots
from architect_nb.execution.steps import CallState


class NoSnapshots(CallSnapshots):
    """The engine's snapshot bookkeeping with every call out of scope: what a call costs without undo."""

    @staticmethod
    def scope(call: CallState) -> tuple[bool, list[Path] | None]:
        return False, None


def small_tree(root: Path, files: int = 2000) -> Path:
    for n in range(files):
        folder = root / f"pkg{n % 40}" / f"sub{n % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{n}.py").write_text(f"VALUE_{n} = {n}\n" * 20)
    return root


def folder_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def measure(tree: Path, state: Path, runs: int) -> tuple[float, float, float]:
    """Median ms of `true` with snapshots and without, and bytes the store grows per snapshot."""
    with_config = load_config(
        overrides={"workspace.root": str(tree), "checkpoints.dir": str(state)}, environ={}
    )
    without_config = load_config(
        overrides={"workspace.root": str(tree), "checkpoints.persist": False}, environ={}
    )
    snapshotting = build_engine(with_config, mode="yolo")
    bare = build_engine(without_config, mode="yolo")
    bare._snapshots = NoSnapshots(bare.checkpoints)  # no snapshots at all
    snapshotting.execute_tool_call("run_command", {"command": "true"})  # the first snapshot hashes the tree
    with_ms, without_ms = [], []
    for _ in range(runs):
        for engine, samples in ((snapshotting, with_ms), (bare, without_ms)):
            started = time.perf_counter()
            result = engine.execute_tool_call("run_command", {"command": "true"})
            samples.append((time.perf_counter() - started) * 1000)
            assert result.success, result.error
    store = snapshotting.checkpoints.shadow.git_dir
    grown_before = folder_size(store)
    target = next(p for p in tree.rglob("*.py"))
    for n in range(runs):
        snapshotting.execute_tool_call("run_command", {"command": f"echo '# edit {n}' >> '{target}'"})
    growth = (folder_size(store) - grown_before) / (2 * runs)  # a snapshot before and after each command
    return statistics.median(with_ms), statistics.median(without_ms), growth


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        trees = {
            "2,000 files": small_tree(Path(tmp, "small")),
            "standard library": copy_stdlib(Path(tmp)),
        }
        goals = {"2,000 files": 50.0, "standard library": 150.0}
        for label, tree in trees.items():
            files, size = tree_size(tree)
            state = Path(tmp, f"state-{len(label)}")
            with_ms, without_ms, growth = measure(Path(os.path.realpath(tree)), state, options.runs)
            added = with_ms - without_ms
            print(
                f"{label} ({files:,} files, {size / 1e6:.0f} MB): a command {without_ms:.1f} ms without "
                f"snapshots, {with_ms:.1f} ms with: +{added:.1f} ms (goal under {goals[label]:.0f} ms); "
                f"the store grows {growth / 1024:.1f} KB per snapshot when one file changed"
            )


if __name__ == "__main__":
    main()

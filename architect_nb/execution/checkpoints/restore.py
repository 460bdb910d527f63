"""Putting files back as a snapshot had them: undo, rewind and revert, all through `restore`.

For each path, three states matter: what it held before the run changed it (`original`), what the run left
(`expected`), and what it holds now. Now equal to `expected`: restore `original`. Now equal to `original`:
nothing to do. Anything else: somebody changed it since, so it is a conflict, reported and left alone.

Writes never leave the workspace: removals come first (the run's own links and files), then every write is
made only where each folder on the way resolves to itself, so a folder swapped for a symbolic link cannot
carry a write elsewhere. Files are written atomically; the executable bit and links are restored as git
records them.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from architect_nb.execution.checkpoints.shadow_git import Entry, ShadowRepo
from architect_nb.tools.filesystem.fileio import atomic_write_bytes

__all__ = ["PathPlan", "RestoreReport", "plan_paths", "restore"]


@dataclass(frozen=True, slots=True)
class PathPlan:
    path: str  # relative to the workspace
    original: Entry | None  # None: it did not exist
    expected: Entry | None  # None: the run left it absent


@dataclass(slots=True, kw_only=True)
class RestoreReport:
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def plan_paths(shadow: ShadowRepo, firsts: dict[str, str], lasts: dict[str, str]) -> list[PathPlan]:
    """A plan per path: `firsts[path]` is the tree before its first change, `lasts[path]` after its last."""
    originals: dict[str, Entry | None] = {}
    expecteds: dict[str, Entry | None] = {}
    for trees, out in ((firsts, originals), (lasts, expecteds)):
        by_tree: dict[str, list[str]] = {}
        for path, tree in trees.items():
            by_tree.setdefault(tree, []).append(path)
        for tree, paths in by_tree.items():
            found = shadow.entries(tree, paths)
            out.update({path: found.get(path) for path in paths})
    return [PathPlan(path, originals.get(path), expecteds.get(path)) for path in sorted(firsts)]


def restore(shadow: ShadowRepo, plans: Iterable[PathPlan], *, kept_dirs: set[str]) -> RestoreReport:
    """Apply `plans`. `kept_dirs` are the folders the original tree had (never removed when empty)."""
    plans = list(plans)
    report = RestoreReport()
    now = shadow.hash_paths([p.path for p in plans])
    to_remove: list[PathPlan] = []
    to_write: list[PathPlan] = []
    for plan in plans:
        current = now.get(plan.path)
        if _same(current, plan.original):
            continue
        if not _same(current, plan.expected):
            report.conflicts.append(plan.path)
            continue
        (to_remove if plan.original is None else to_write).append(plan)
    root = shadow.workspace
    for plan in sorted(to_remove, key=lambda p: p.path.count("/"), reverse=True):
        target = root / plan.path
        if not _inside(root, target.parent):
            report.errors.append(f"{plan.path}: not removed, it is now reached through a symbolic link")
            continue
        try:
            target.unlink()
            report.removed.append(plan.path)
        except FileNotFoundError:
            report.removed.append(plan.path)
        except OSError as exc:
            report.errors.append(f"{plan.path}: {exc.strerror or exc}")
            continue
        _remove_empty_parents(root, target.parent, kept_dirs)
    # Links and files the run put where the original had folders go first, so those folders can come back.
    for plan in sorted(to_write, key=lambda p: p.path.count("/")):
        try:
            _write(shadow, root, plan)
            report.restored.append(plan.path)
        except _RefusedError as exc:
            report.errors.append(f"{plan.path}: {exc}")
        except OSError as exc:
            report.errors.append(f"{plan.path}: {exc.strerror or exc}")
    return report


class _RefusedError(Exception):
    pass


def _same(current: Entry | None, wanted: Entry | None) -> bool:
    if current is None or wanted is None:
        return current is wanted
    return current.mode == wanted.mode and current.blob == wanted.blob


def _inside(root: Path, folder: Path) -> bool:
    """`folder` resolves to itself inside `root` (no component is a link), or does not exist yet."""
    probe = folder
    while not os.path.lexists(probe) and probe != root:
        probe = probe.parent
    real = os.path.realpath(probe)
    return real == os.fspath(probe) and (real == os.fspath(root) or real.startswith(os.fspath(root) + os.sep))


def _write(shadow: ShadowRepo, root: Path, plan: PathPlan) -> None:
    assert plan.original is not None
    target = root / plan.path
    parent = target.parent
    # A link or file the run left where a folder of the path must be: remove it if it is the run's own.
    probe = parent
    while probe != root and not os.path.lexists(probe):
        probe = probe.parent
    if probe != root and (os.path.islink(probe) or not os.path.isdir(probe)):
        raise _RefusedError(
            "not restored: a file or link now stands where its folder was (changed since the run)"
        )
    if not _inside(root, parent):
        raise _RefusedError("not restored: it is now reached through a symbolic link")
    parent.mkdir(parents=True, exist_ok=True)
    if os.path.islink(target) or (os.path.lexists(target) and not os.path.isfile(target)):
        if os.path.isdir(target) and not os.path.islink(target):
            raise _RefusedError("not restored: a folder now stands in its place")
        target.unlink()
    data = shadow.read(plan.original.blob)
    if plan.original.mode == "120000":
        os.symlink(os.fsdecode(data), target)
        return
    atomic_write_bytes(target, data)
    current = stat.S_IMODE(os.stat(target).st_mode)
    executable = plan.original.mode == "100755"
    readable = current & 0o444
    wanted = (current | (readable >> 2)) if executable else (current & ~0o111)
    if wanted != current:
        os.chmod(target, wanted)


def _remove_empty_parents(root: Path, folder: Path, kept: set[str]) -> None:
    while folder != root and _inside(root, folder):
        rel = folder.relative_to(root).as_posix()
        if rel in kept:
            return
        with contextlib.suppress(OSError):
            folder.rmdir()
            folder = folder.parent
            continue
        return

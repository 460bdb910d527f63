"""Walking the workspace the way a developer expects: one set of skip rules for every tool.

Skipped: version-control folders, `__pycache__`, `.ipynb_checkpoints`, `node_modules`, tool caches,
virtualenvs (any folder holding `pyvenv.cfg` or `conda-meta`), and whatever `.gitignore` files (at any
depth) and `.git/info/exclude` ignore. Symlinked folders are never entered, so a walk cannot leave the
workspace or loop.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

__all__ = ["SKIPPED_DIR_NAMES", "Entry", "IgnoreRules", "is_skipped_dir", "walk"]

SKIPPED_DIR_NAMES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "__pycache__",
        ".ipynb_checkpoints",
        "node_modules",
        ".venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    }
)
_VENV_MARKERS = ("pyvenv.cfg", "conda-meta")


@dataclass(frozen=True, slots=True)
class Entry:
    """One file or folder met by a walk. `rel` is relative to the workspace root, with '/' separators."""

    path: Path
    rel: str
    is_dir: bool
    is_symlink: bool


def is_skipped_dir(path: Path, name: str) -> bool:
    """True for folders no tool should descend into (see the module docstring)."""
    if name in SKIPPED_DIR_NAMES:
        return True
    return any(os.path.exists(os.path.join(path, marker)) for marker in _VENV_MARKERS)


class IgnoreRules:
    """The `.gitignore` rules of a workspace, loaded folder by folder as a walk reaches them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._specs: dict[str, pathspec.GitIgnoreSpec | None] = {}
        exclude = root / ".git" / "info" / "exclude"
        self._exclude = self._load(exclude) if exclude.is_file() else None

    def _load(self, file: Path) -> pathspec.GitIgnoreSpec | None:
        try:
            lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return None
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
        return spec if len(spec) else None

    def _spec_for(self, dir_rel: str) -> pathspec.GitIgnoreSpec | None:
        if dir_rel not in self._specs:
            folder = self.root / dir_rel if dir_rel else self.root
            gitignore = folder / ".gitignore"
            self._specs[dir_rel] = self._load(gitignore) if gitignore.is_file() else None
        return self._specs[dir_rel]

    def is_ignored(self, rel: str, is_dir: bool) -> bool:
        """Git's answer for `rel`: the deepest `.gitignore` with a matching rule decides."""
        parts = rel.split("/")
        candidate = rel + "/" if is_dir else rel
        for depth in range(len(parts) - 1, -1, -1):
            dir_rel = "/".join(parts[:depth])
            spec = self._spec_for(dir_rel)
            if spec is None:
                continue
            sub = candidate[len(dir_rel) + 1 :] if dir_rel else candidate
            verdict = spec.check_file(sub).include
            if verdict is not None:
                return bool(verdict)
        if self._exclude is not None:
            return bool(self._exclude.check_file(candidate).include)
        return False


def walk(
    root: Path,
    start: Path,
    *,
    recursive: bool = True,
    ignore: IgnoreRules | None = None,
    include_dirs: bool = False,
) -> Iterator[Entry]:
    """Yield entries under `start` (inside `root`, both resolved), sorted by name, depth first.

    Folders are yielded only when `include_dirs` is true. Symlinks are yielded as entries but never followed
    into; callers decide whether a symlinked file may be used.
    """
    rules = ignore if ignore is not None else IgnoreRules(root)
    start_rel = "" if start == root else start.relative_to(root).as_posix()
    yield from _walk_folder(start, start_rel, rules, recursive, include_dirs)


def _walk_folder(
    folder: Path, folder_rel: str, rules: IgnoreRules, recursive: bool, include_dirs: bool
) -> Iterator[Entry]:
    try:
        with os.scandir(folder) as it:
            children = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    for child in children:
        rel = f"{folder_rel}/{child.name}" if folder_rel else child.name
        try:
            is_link = child.is_symlink()
            is_dir = child.is_dir(follow_symlinks=False)
        except OSError:
            continue
        child_path = Path(child.path)
        if is_dir:
            if is_skipped_dir(child_path, child.name) or rules.is_ignored(rel, is_dir=True):
                continue
            if include_dirs:
                yield Entry(child_path, rel, True, False)
            if recursive:
                yield from _walk_folder(child_path, rel, rules, recursive, include_dirs)
        elif not rules.is_ignored(rel, is_dir=False):
            yield Entry(child_path, rel, False, is_link)

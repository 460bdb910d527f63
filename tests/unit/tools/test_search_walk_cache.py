"""A kept walk is reused only while nothing it saw has changed: new, removed or renamed entries, an ignore
file edited in place, a folder swapped for a symlink, and changes in the walk's own clock tick all show."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from architect_nb.tools.search import walk_cache
from architect_nb.tools.search.collect import collect_files
from architect_nb.tools.search.search_tools import FindFilesTool, GrepTool
from architect_nb.tools.tree import walk


def _age(root: Path, seconds: float = 30.0) -> None:
    """Make every entry look `seconds` old, as a tree nobody touched since is."""
    past = time.time() - seconds
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            os.utime(os.path.join(folder, name), (past, past), follow_symlinks=False)
    os.utime(root, (past, past))


def _files(root: Path) -> list[str]:
    return [
        rel
        for _path, rel in collect_files(root, root, "*", recursive=True, deadline=time.monotonic() + 30)[0]
    ]


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[str]]:
    walk_cache.clear_walk_cache()
    root = Path(os.path.realpath(tmp_path / "ws"))
    for rel in ("a/one.py", "a/b/two.py", "c/three.log", "c/four.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("token\n")
    _age(root)
    listings: list[str] = []
    real = walk._list_folder

    def counting(folder: str) -> list[os.DirEntry[str]] | None:
        listings.append(folder)
        return real(folder)

    monkeypatch.setattr(walk, "_list_folder", counting)
    return root, listings


def test_an_unchanged_tree_is_not_walked_again(tree: tuple[Path, list[str]]) -> None:
    root, listings = tree
    first = _files(root)
    walked = len(listings)
    assert first == ["a/b/two.py", "a/one.py", "c/four.py", "c/three.log"] and walked == 4
    assert _files(root) == first and len(listings) == walked
    assert FindFilesTool(root).execute(pattern="*.py").metadata["files"] == 3 and len(listings) == walked
    assert GrepTool(root).execute(pattern="token").metadata["matches"] == 4


def test_changes_are_seen(tree: tuple[Path, list[str]]) -> None:
    root, _ = tree
    _files(root)
    (root / "a" / "b" / "new.py").write_text("token\n")  # a new entry, deep down
    assert "a/b/new.py" in _files(root)
    _age(root)
    _files(root)  # kept again
    (root / "a" / "one.py").rename(root / "a" / "renamed.py")
    assert "a/renamed.py" in _files(root) and "a/one.py" not in _files(root)
    _age(root)
    (root / ".gitignore").write_text("*.log\n")
    _age(root)
    assert "c/three.log" not in _files(root)
    _age(root)
    _files(root)
    with (root / ".gitignore").open("a") as f:  # edited in place: the folder's time does not change
        f.write("c/\n")
    folder_time = (root / ".gitignore").stat().st_mtime_ns
    assert not any(rel.startswith("c/") for rel in _files(root)), folder_time
    _age(root)
    _files(root)
    target = root.parent / "outside"
    target.mkdir()
    (target / "secret.py").write_text("token\n")
    for entry in (root / "a" / "b").iterdir():
        entry.unlink()
    (root / "a" / "b").rmdir()
    (root / "a" / "b").symlink_to(target, target_is_directory=True)  # a folder swapped for a link
    assert all("secret" not in rel for rel in _files(root))


def test_a_walk_in_the_same_clock_tick_as_a_change_is_not_kept(tree: tuple[Path, list[str]]) -> None:
    root, listings = tree
    (root / "a" / "fresh.py").write_text("token\n")  # just now: the walk cannot trust a's time
    _files(root)
    walked = len(listings)
    _files(root)
    assert len(listings) == 2 * walked


def test_a_walk_cut_short_is_not_kept(tree: tuple[Path, list[str]]) -> None:
    root, _listings = tree
    entries = walk_cache.cached_scan(root, root)
    next(entries)
    entries.close()
    assert not walk_cache._walks
    _files(root)
    assert walk_cache._walks

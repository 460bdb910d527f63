"""File tools' snapshots made in-process (`shadow_objects`) are the trees git itself would make.

Each example changes a real workspace (files, folders, executable bits, links, removals), snapshots just the
changed paths the fast way, and compares the tree id with `git add -A` + `git write-tree` of the same
workspace in an independent repository: equal ids mean equal bytes, modes and names. Then the slower paths
git takes (a whole-workspace snapshot, a folder the fast way cannot take) must agree with what was written.
"""

from __future__ import annotations

import errno
import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from architect_nb.execution.checkpoints.shadow_git import ShadowRepo

NAMES = ["a.py", "b", "sub", "deep", "x y.txt", "ü.md", "two\nlines", "-dash", "z"]


def git_tree(workspace: Path) -> str:
    """The tree git makes of the whole workspace, in a repository of its own."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            "PATH": os.environ["PATH"],
            "HOME": tmp,
            "GIT_DIR": str(Path(tmp, "g.git")),
            "GIT_WORK_TREE": str(workspace),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "LC_ALL": "C",
        }
        bare = {k: v for k, v in env.items() if k not in ("GIT_DIR", "GIT_WORK_TREE")}
        subprocess.run(["git", "init", "-q", "--bare", env["GIT_DIR"]], env=bare, check=True)
        Path(env["GIT_DIR"], "info").mkdir(exist_ok=True)
        Path(env["GIT_DIR"], "info", "attributes").write_text("* -text -eol -filter -ident\n")
        subprocess.run(["git", "add", "-A", "."], env=env, cwd=workspace, check=True, capture_output=True)
        out = subprocess.run(["git", "write-tree"], env=env, cwd=workspace, check=True, capture_output=True)
        return out.stdout.decode().strip()


class CountingRepo(ShadowRepo):
    """A shadow repository that counts the git processes it starts."""

    runs = 0

    def _run(self, args, *, stdin=None, check=True):  # type: ignore[no-untyped-def]
        CountingRepo.runs += 1
        return super()._run(args, stdin=stdin, check=check)


_path = st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map("/".join)
_op = st.one_of(
    st.tuples(st.just("write"), _path, st.binary(max_size=40)),
    st.tuples(st.just("exec"), _path, st.booleans()),
    st.tuples(st.just("link"), _path, st.sampled_from(["a.py", "../outside", "nowhere"])),
    st.tuples(st.just("remove"), _path, st.none()),
)


def apply(workspace: Path, op: tuple[str, str, object]) -> bool:
    """Make the change on disk, if it fits what is there (not through a file, not over a folder)."""
    kind, rel, arg = op
    target = workspace / rel
    try:
        if kind == "write" and not target.is_dir():
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_symlink():
                target.unlink()
            target.write_bytes(arg)  # type: ignore[arg-type]
        elif kind == "exec" and target.is_file() and not target.is_symlink():
            target.chmod(0o755 if arg else 0o644)
        elif kind == "link" and not target.is_dir():
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists() or target.is_symlink():
                target.unlink()
            target.symlink_to(str(arg))
        elif kind == "remove" and (target.is_symlink() or target.is_file()):
            target.unlink()
        else:
            return False
    except (NotADirectoryError, FileExistsError):
        return False
    except OSError as exc:  # a folder through a link to itself: no such change can be made
        if exc.errno != errno.ELOOP:
            raise
        return False
    return True


def tree_path(workspace: Path, rel: str) -> str | None:
    """`rel` as the file tools hand it to a snapshot: its folder resolved, as `validate_path` resolves it (a
    path through a link to a folder is the folder's path), its name kept, since a link made there is itself
    the change. None when that folder is outside. (Not `validate_path` itself: it also refuses names a tool
    may not be given, such as one with a newline, which these trees have on purpose.)"""
    root = Path(os.path.realpath(workspace))
    folder = Path(os.path.realpath((workspace / rel).parent))
    if folder != root and root not in folder.parents:
        return None
    return (folder / Path(rel).name).relative_to(root).as_posix()


@pytest.mark.slow  # left out of `make test-unit`: 60 random trees, each also made by git
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(_op, min_size=1, max_size=12))
def test_in_process_snapshots_are_the_trees_git_makes(ops: list[tuple[str, str, object]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp, "ws")
        (workspace / "sub").mkdir(parents=True)
        (workspace / "sub" / "keep.py").write_text("kept\n")
        (workspace / "z").write_text("z\n")
        repo = CountingRepo(workspace, Path(tmp, "store"))
        tree = repo.snapshot()  # a command's snapshot: the base the fast ones build on
        for op in ops:
            if not apply(workspace, op):
                continue
            rel = tree_path(workspace, op[1])
            if rel is None:  # written through a link to outside the workspace: no tool would
                continue
            before, CountingRepo.runs = tree, 0
            tree = repo.snapshot([rel])
            assert tree == git_tree(workspace), op
            truth = {p: e for p, e in repo.entries(tree).items()}
            assert repo.changed(before, tree) == (
                [rel] if repo.entries(before).get(rel) != truth.get(rel) else []
            )
        # A command's snapshot after them: git reads the workspace itself and finds nothing new.
        assert repo.snapshot() == git_tree(workspace)


def test_a_fast_snapshot_starts_no_git_and_a_later_git_one_keeps_its_change(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "pkg").mkdir(parents=True)
    (workspace / "a.py").write_text("one\n")
    (workspace / "pkg" / "m.py").write_text("m\n")
    repo = CountingRepo(workspace, tmp_path / "store", max_file_bytes=1024)
    base = repo.snapshot()
    (workspace / "a.py").write_text("two\n")
    CountingRepo.runs = 0
    first = repo.snapshot(["a.py"])
    assert CountingRepo.runs == 0  # no git process: the file's blob and the trees are written here
    assert repo.changed(base, first) == ["a.py"] and first == git_tree(workspace)
    # A file over the size limit is git's to take, with the index it uses, which must learn a.py first or
    # its tree would put the old a.py back.
    (workspace / "big.bin").write_bytes(b"x" * 2048)
    second = repo.snapshot(["big.bin"])
    assert CountingRepo.runs > 0 and "big.bin" in repo.too_large
    assert second == first and repo.changed(first, second) == []
    # And a command's snapshot, which reads the whole workspace through that index, agrees too.
    (workspace / "pkg" / "n.py").write_text("n\n")
    third = repo.snapshot()
    assert repo.changed(second, third) == ["pkg/n.py"]
    assert repo.read(repo.entries(third, ["a.py"])["a.py"].blob) == b"two\n"


def test_the_refs_a_saved_run_keeps_are_read_by_git(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.py").write_text("one\n")
    repo = ShadowRepo(workspace, tmp_path / "store")
    tree = repo.snapshot()
    repo.keep({"refs/runs/run-1/1b": tree, "refs/runs/run-1/1a": tree})
    listed = repo._git("for-each-ref", "--format=%(refname) %(objectname)", "refs/runs/")
    assert listed.split("\n")[:2] == [f"refs/runs/run-1/1a {tree}", f"refs/runs/run-1/1b {tree}"]
    assert not [p for p in repo.git_dir.iterdir() if p.name.startswith("tmp-ref-")]


@pytest.mark.parametrize("size", [0, 1, 64 * 1024])
def test_a_file_over_the_limit_is_left_to_git(tmp_path: Path, size: int) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    repo = ShadowRepo(workspace, tmp_path / "store", max_file_bytes=1024)
    repo.snapshot()
    (workspace / "big.bin").write_bytes(b"x" * size)
    tree = repo.snapshot(["big.bin"])
    assert ("big.bin" in repo.too_large) == (size > 1024)
    assert ("big.bin" in repo.entries(tree)) == (size <= 1024)


def test_trees_git_packed_away_are_read_from_the_pack(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "pkg" / "sub").mkdir(parents=True)
    (workspace / "a.py").write_text("one\n")
    (workspace / "pkg" / "m.py").write_text("m\n")
    (workspace / "pkg" / "sub" / "k.py").write_text("k\n")
    repo = CountingRepo(workspace, tmp_path / "store")
    base = repo.snapshot()
    repo.keep({"refs/runs/run-1/0b": base})
    repo._git("gc", "--prune=now", "--quiet")  # what a prune does: every object now lives in a pack only
    assert not (repo.git_dir / "objects" / base[:2] / base[2:]).exists()
    (workspace / "pkg" / "sub" / "k.py").write_text("changed\n")
    CountingRepo.runs = 0
    tree = repo.snapshot(["pkg/sub/k.py"])
    assert CountingRepo.runs == 0  # the old trees came from the pack through the one `cat-file --batch`
    assert tree == git_tree(workspace)
    assert repo.changed(base, tree) == ["pkg/sub/k.py"]
    assert repo.read(repo.entries(tree, ["pkg/m.py"])["pkg/m.py"].blob) == b"m\n"

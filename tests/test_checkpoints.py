"""Checkpoints through the engine: undo restores every file a run changed, removes what it created."""

from __future__ import annotations

from pathlib import Path

from engine_support import make_engine

from architect_nb.execution.checkpoints import CheckpointStore


def test_undo_restores_edits_and_removes_created_files(workspace: Path) -> None:
    (workspace / "a.py").write_text("original\n")
    (workspace / "a.py").chmod(0o640)
    (workspace / "gone.txt").write_bytes(b"\x00binary\xff")
    engine, _ = make_engine(workspace)
    run = engine.run_id
    assert engine.execute_tool_call("write_file", {"path": "a.py", "content": "first\n"}).success
    assert engine.execute_tool_call("write_file", {"path": "a.py", "content": "second\n"}).success
    assert engine.execute_tool_call("write_file", {"path": "new/deep/b.py", "content": "b\n"}).success
    assert engine.execute_tool_call("delete_file", {"path": "gone.txt"}).success
    assert engine.checkpoints.files(run) == [
        workspace / "a.py",
        workspace / "new/deep/b.py",
        workspace / "gone.txt",
    ]

    report = engine.checkpoints.undo(run)
    assert report.ok, report.errors
    assert (workspace / "a.py").read_text() == "original\n"
    assert (workspace / "a.py").stat().st_mode & 0o777 == 0o640
    assert (workspace / "gone.txt").read_bytes() == b"\x00binary\xff"
    assert not (workspace / "new").exists()  # the file and the folders created for it
    assert sorted(Path(p).name for p in report.restored) == ["a.py", "gone.txt"]
    assert [Path(p).name for p in report.removed] == ["b.py"]
    assert engine.checkpoints.files(run) == []


def test_undo_does_not_follow_a_folder_swapped_for_a_symlink_since_the_run(
    workspace: Path, tmp_path: Path
) -> None:
    """A command may replace a folder by a link after the run; undo must not write or delete through it."""
    outside = tmp_path / "not-the-workspace"
    outside.mkdir()
    (outside / "a.py").write_text("outside a\n")
    (outside / "b.txt").write_text("outside b\n")
    (workspace / "sub").mkdir()
    (workspace / "sub" / "a.py").write_text("inside a\n")
    (workspace / "keep.txt").write_text("keep\n")
    engine, _ = make_engine(workspace)
    run = engine.run_id
    assert engine.execute_tool_call("write_file", {"path": "sub/a.py", "content": "edited\n"}).success
    assert engine.execute_tool_call("write_file", {"path": "sub/b.txt", "content": "created\n"}).success
    assert engine.execute_tool_call("write_file", {"path": "keep.txt", "content": "changed\n"}).success
    (workspace / "sub" / "a.py").unlink()
    (workspace / "sub" / "b.txt").unlink()
    (workspace / "sub").rmdir()
    (workspace / "sub").symlink_to(outside, target_is_directory=True)

    report = engine.checkpoints.undo(run)
    assert (outside / "a.py").read_text() == "outside a\n"  # not overwritten through the link
    assert (outside / "b.txt").read_text() == "outside b\n"  # not deleted through the link
    assert (workspace / "keep.txt").read_text() == "keep\n"  # the rest of the run is still undone
    assert len(report.errors) == 2 and all("symbolic link" in e for e in report.errors)
    assert not report.ok and "Problems:" in str(report)


def test_failed_and_dry_run_calls_leave_nothing_to_undo(workspace: Path) -> None:
    engine, _ = make_engine(workspace, dry_run=True)
    engine.execute_tool_call("write_file", {"path": "a.txt", "content": "x"})
    assert engine.checkpoints.files(engine.run_id) == []


def test_runs_are_separate(workspace: Path) -> None:
    engine, _ = make_engine(workspace)
    first = engine.run_id
    engine.execute_tool_call("write_file", {"path": "one.txt", "content": "1"})
    second = engine.start_run("second")
    assert second == "second"
    engine.execute_tool_call("write_file", {"path": "two.txt", "content": "2"})
    engine.checkpoints.undo(second)
    assert (workspace / "one.txt").exists() and not (workspace / "two.txt").exists()
    engine.checkpoints.undo(first)
    assert not (workspace / "one.txt").exists()


def test_summary_says_commands_are_not_tracked(workspace: Path) -> None:
    engine, _ = make_engine(workspace)
    engine.execute_tool_call("write_file", {"path": "a.txt", "content": "x"})
    assert "not tracked" not in engine.run_summary()
    engine.execute_tool_call("fake_command", {"command": "ls"})
    summary = engine.run_summary()
    assert "1 file(s) checkpointed" in summary
    assert "files they changed are not tracked and undo cannot restore them" in summary
    report = engine.checkpoints.undo(engine.run_id)
    assert report.commands_untracked and "were not undone" in str(report)


def test_large_files_are_not_snapshotted(tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    big.write_bytes(b"x" * 100)
    store = CheckpointStore(max_bytes=10)
    warning = store.record("r", big)
    assert "was not checkpointed" in warning
    assert "Not checkpointed" in store.summary("r")
    assert store.undo("r").restored == []


def test_undo_of_unknown_run_is_empty() -> None:
    report = CheckpointStore().undo("nope")
    assert report.ok and report.restored == [] and report.removed == []

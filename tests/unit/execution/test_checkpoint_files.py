"""Runs saved on disk: a run can be undone by a later engine (a restarted kernel), once, safely."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from architect_nb.config import AppConfig
from architect_nb.execution.checkpoints.files import CheckpointFiles, checkpoint_files, default_checkpoint_dir
from architect_nb.execution.checkpoints.shadow_git import ShadowRepo
from architect_nb.execution.checkpoints.store import AlreadyUndoneError, CheckpointError, CheckpointStore
from tests.support.engine import make_engine


def _edit_run(workspace: Path) -> str:
    (workspace / "a.py").write_text("original\n")
    (workspace / "a.py").chmod(0o640)
    engine, _ = make_engine(workspace)
    assert engine.execute_tool_call("write_file", {"path": "a.py", "content": "edited\n"}).success
    assert engine.execute_tool_call("write_file", {"path": "new/b.py", "content": "b\n"}).success
    return engine.run_id


def _saved(workspace: Path) -> CheckpointFiles:
    files = checkpoint_files(AppConfig.model_validate({"workspace": {"root": str(workspace)}}))
    assert files is not None
    return files


def test_a_later_store_undoes_a_saved_run_once(workspace: Path) -> None:
    run = _edit_run(workspace)
    later = CheckpointStore(on_disk=_saved(workspace))  # nothing in memory: as after a kernel restart
    report = later.undo(run)
    assert report.ok, str(report)
    assert (workspace / "a.py").read_text() == "original\n"
    assert stat.S_IMODE((workspace / "a.py").stat().st_mode) == 0o640
    assert not (workspace / "new").exists()
    with pytest.raises(AlreadyUndoneError, match="already undone"):
        CheckpointStore(on_disk=_saved(workspace)).undo(run)


def test_saved_runs_and_snapshots_are_private_and_in_the_state_folder(workspace: Path) -> None:
    run = _edit_run(workspace)
    folder = default_checkpoint_dir() / run
    assert str(folder).startswith(os.environ["XDG_STATE_HOME"])
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    manifest_file = folder / "manifest.json"
    assert stat.S_IMODE(manifest_file.stat().st_mode) == 0o600
    manifest = json.loads(manifest_file.read_text())
    assert manifest["root"] == str(workspace) and manifest["version"] == 2
    assert [s["paths"] for s in manifest["steps"]] == [["a.py"], ["new/b.py"]]
    store = ShadowRepo(workspace, default_checkpoint_dir() / "snapshots").git_dir
    assert store.is_dir() and stat.S_IMODE(store.stat().st_mode) == 0o700
    assert not (workspace / ".git").exists()  # nothing was made in the workspace


def test_undo_in_the_same_engine_marks_the_saved_run_undone(workspace: Path) -> None:
    (workspace / "a.py").write_text("original\n")
    engine, _ = make_engine(workspace)
    assert engine.execute_tool_call("write_file", {"path": "a.py", "content": "edited\n"}).success
    assert engine.checkpoints.undo(engine.run_id).ok
    with pytest.raises(AlreadyUndoneError):
        CheckpointStore(on_disk=_saved(workspace)).undo(engine.run_id)


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "a/../../x", "", "./a.py"])
def test_a_manifest_naming_a_path_outside_the_workspace_restores_nothing(workspace: Path, path: str) -> None:
    run = _edit_run(workspace)
    manifest_path = _saved(workspace).directory / run / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["steps"][0]["paths"] = [path]
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(CheckpointError, match="outside"):
        CheckpointStore(on_disk=_saved(workspace)).undo(run)
    assert (workspace / "a.py").read_text() == "edited\n"  # all or nothing: no file was restored


def test_a_run_saved_by_another_version_is_a_clear_error(workspace: Path) -> None:
    run = _edit_run(workspace)
    manifest_path = _saved(workspace).directory / run / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["version"] = 1
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(CheckpointError, match="saved by another version of architect-nb"):
        CheckpointStore(on_disk=_saved(workspace)).undo(run)


def test_another_workspace_does_not_see_the_run(workspace: Path, tmp_path: Path) -> None:
    run = _edit_run(workspace)
    other = tmp_path / "other"
    other.mkdir()
    assert _saved(other).load(run) is None
    assert CheckpointStore(on_disk=_saved(other)).undo(run).restored == []
    assert (workspace / "a.py").read_text() == "edited\n"


@pytest.mark.parametrize("run_id", ["../x", "a/b", "", ".", "x" * 65, "run id", "..", "a\x00b"])
def test_run_ids_that_are_not_plain_names_never_reach_the_disk(
    workspace: Path, tmp_path: Path, run_id: str
) -> None:
    files = CheckpointFiles(tmp_path / "state" / "checkpoints", workspace)
    with pytest.raises(ValueError, match="plain name"):
        files.load(run_id)
    with pytest.raises(ValueError, match="plain name"):
        files.save(run_id, {"steps": []})
    assert not (tmp_path / "state").exists()


def test_old_runs_are_pruned_with_their_snapshots_and_persist_off_saves_nothing(
    workspace: Path, tmp_path: Path
) -> None:
    run = _edit_run(workspace)
    files = _saved(workspace)
    assert files.prune() == [] and (files.directory / run / "manifest.json").exists()
    pruned = files.prune(now=1e12)
    assert run in [m["run_id"] for m in pruned] and not (files.directory / run).exists()
    config = AppConfig.model_validate(
        {
            "workspace": {"root": str(workspace)},
            "checkpoints": {"persist": False, "dir": str(tmp_path / "cp")},
        }
    )
    assert checkpoint_files(config) is None


def test_without_a_state_folder_undo_works_in_memory(workspace: Path, tmp_path: Path) -> None:
    config = AppConfig.model_validate(
        {
            "workspace": {"root": str(workspace)},
            "checkpoints": {"persist": False, "dir": str(tmp_path / "cp")},
        }
    )
    from architect_nb.execution.build import build_engine

    (workspace / "a.py").write_text("original\n")
    engine = build_engine(config, mode="yolo")
    assert engine.execute_tool_call("run_command", {"command": "echo changed > a.py"}).success
    assert engine.checkpoints.undo(engine.run_id).ok and (workspace / "a.py").read_text() == "original\n"
    assert not (tmp_path / "cp").exists()


def test_two_kernels_sharing_a_store_each_see_the_others_snapshots(workspace: Path, tmp_path: Path) -> None:
    """A snapshot that changed nothing reuses the last tree without asking git, but only while the shared
    index is the one this process last read: another kernel's snapshot makes it ask again."""
    (workspace / "a.py").write_text("one\n")
    first = ShadowRepo(workspace, tmp_path / "store")
    second = ShadowRepo(workspace, tmp_path / "store")
    tree_a = first.snapshot(["a.py"])
    assert second.snapshot(["a.py"]) == tree_a
    assert first.snapshot(["a.py"]) == tree_a  # nothing changed: the same tree
    (workspace / "a.py").write_text("two, longer\n")
    tree_b = second.snapshot(["a.py"])
    assert tree_b != tree_a
    # `first` changed nothing of its own since its last snapshot, yet the index moved on under it.
    assert first.snapshot(["a.py"]) == tree_b
    assert first.read(first.entries(tree_b, ["a.py"])["a.py"].blob) == b"two, longer\n"


def _cut_off_run(workspace: Path) -> str:
    """A run whose kernel died during its second call: the first call's step is saved, the second call's
    snapshot before it is taken, and neither the snapshot after it nor the run's end ever happens."""
    (workspace / "a.py").write_text("original\n")
    engine, _ = make_engine(workspace)
    run = engine.start_run(task="Rewrite a.py and build the database\nsecond line of the task")
    assert engine.execute_tool_call("write_file", {"path": "a.py", "content": "step one\n"}).success
    engine.checkpoints.before(run, step=2, call_id="c2", tool="run_command", paths=None)
    (workspace / "a.py").write_text("half writ")
    (workspace / "data.db").write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 40)
    return run


def test_a_run_cut_off_during_a_call_is_found_again_and_undone_whole(workspace: Path) -> None:
    from architect_nb.notebook.saved_runs import cut_off_offer, cut_off_runs, saved_runs

    run = _cut_off_run(workspace)
    config = AppConfig.model_validate({"workspace": {"root": str(workspace)}})
    [found] = saved_runs(config)
    assert (found.run_id, found.task, found.files) == (run, "Rewrite a.py and build the database", ("a.py",))
    assert found.cut_off and found.state() == "cut off (its kernel stopped during step 2, run_command)"
    offer = cut_off_offer(config)
    assert offer is not None and run in offer and "a.py" in offer and f"%architect undo {run}" in offer
    report = CheckpointStore(on_disk=_saved(workspace)).undo(run)  # a new kernel's store
    assert report.ok, str(report)
    assert (workspace / "a.py").read_text() == "original\n"
    assert not (workspace / "data.db").exists()  # what the cut-off call created
    assert any("stopped during step 2 (run_command)" in note for note in report.notes), report.notes
    assert cut_off_runs(config) == [] and cut_off_offer(config) is None  # undone: no longer offered


def test_a_finished_run_is_not_taken_for_a_cut_off_one(workspace: Path) -> None:
    from architect_nb.notebook.saved_runs import cut_off_runs, saved_runs

    (workspace / "a.py").write_text("original\n")
    engine, _ = make_engine(workspace)
    run = engine.start_run(task="Edit a.py")
    assert engine.execute_tool_call("write_file", {"path": "a.py", "content": "edited\n"}).success
    assert engine.execute_tool_call("read_file", {"path": "a.py"}).success
    config = AppConfig.model_validate({"workspace": {"root": str(workspace)}})
    assert [r.state() for r in saved_runs(config) if r.run_id == run] == ["cut off (its kernel stopped)"]
    engine.end_run()
    [found] = [r for r in saved_runs(config) if r.run_id == run]
    assert found.finished and found.state() == "finished" and cut_off_runs(config) == []
    manifest = json.loads((default_checkpoint_dir() / run / "manifest.json").read_text())
    assert manifest["finished"] is True and not (default_checkpoint_dir() / run / "pending.json").exists()


def test_a_run_whose_process_lives_is_running_elsewhere_not_cut_off(workspace: Path) -> None:
    import subprocess
    import sys

    from architect_nb.notebook.saved_runs import cut_off_runs, saved_runs

    run = _cut_off_run(workspace)
    manifest_file = default_checkpoint_dir() / run / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    host = manifest["process"].rpartition(":")[0]
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        manifest["process"] = f"{host}:{other.pid}"  # as if another kernel, still alive, were running it
        manifest_file.write_text(json.dumps(manifest))
        config = AppConfig.model_validate({"workspace": {"root": str(workspace)}})
        assert [r.state() for r in saved_runs(config)] == ["running in another kernel"]
        assert cut_off_runs(config) == []
    finally:
        other.kill()
        other.wait()
    assert [r.run_id for r in cut_off_runs(config)] == [run]  # its process gone: cut off

"""Checkpoints saved on disk: a run can be undone by a later engine (a restarted kernel), once, safely."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from engine_support import make_engine

from architect_nb.config import AppConfig
from architect_nb.execution.checkpoint_files import CheckpointFiles, checkpoint_files, default_checkpoint_dir
from architect_nb.execution.checkpoints import AlreadyUndoneError, CheckpointError, CheckpointStore


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
    assert report.ok, report.errors
    assert (workspace / "a.py").read_text() == "original\n"
    assert stat.S_IMODE((workspace / "a.py").stat().st_mode) == 0o640
    assert not (workspace / "new").exists()
    with pytest.raises(AlreadyUndoneError, match="already undone"):
        CheckpointStore(on_disk=_saved(workspace)).undo(run)
    assert not (_saved(workspace).directory / run / "blobs").exists()  # nothing left to restore


def test_saved_checkpoints_are_private_and_in_the_state_folder(workspace: Path) -> None:
    run = _edit_run(workspace)
    folder = default_checkpoint_dir() / run
    assert str(folder).startswith(os.environ["XDG_STATE_HOME"])
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    [blob] = (folder / "blobs").iterdir()
    assert stat.S_IMODE(blob.stat().st_mode) == 0o600 and blob.read_bytes() == b"original\n"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["root"] == str(workspace)
    assert [Path(f["path"]).name for f in manifest["files"]] == ["a.py", "b.py"]


def test_undo_in_the_same_engine_marks_the_saved_run_undone(workspace: Path) -> None:
    (workspace / "a.py").write_text("original\n")
    engine, _ = make_engine(workspace)
    assert engine.execute_tool_call("write_file", {"path": "a.py", "content": "edited\n"}).success
    assert engine.checkpoints.undo(engine.run_id).ok
    with pytest.raises(AlreadyUndoneError):
        CheckpointStore(on_disk=_saved(workspace)).undo(engine.run_id)


def test_a_manifest_naming_a_path_outside_the_workspace_restores_nothing(
    workspace: Path, outside: Path
) -> None:
    run = _edit_run(workspace)
    manifest_path = _saved(workspace).directory / run / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["files"][0]["path"] = str(outside / "secret.txt")
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(CheckpointError, match="outside"):
        CheckpointStore(on_disk=_saved(workspace)).undo(run)
    assert (outside / "secret.txt").read_text() == "TOP-SECRET\n"
    assert (workspace / "a.py").read_text() == "edited\n"  # all or nothing: no file was restored


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
    store = CheckpointStore(on_disk=files)
    (workspace / "a.py").write_text("x")
    assert "memory only" in store.record(run_id, workspace / "a.py")  # still undoable in memory
    assert not (tmp_path / "state").exists()


def test_old_runs_are_pruned_and_persist_off_saves_nothing(workspace: Path, tmp_path: Path) -> None:
    run = _edit_run(workspace)
    files = _saved(workspace)
    assert files.prune() == 0 and (files.directory / run / "manifest.json").exists()
    assert files.prune(now=1e12) >= 1 and not (files.directory / run).exists()
    config = AppConfig.model_validate(
        {
            "workspace": {"root": str(workspace)},
            "checkpoints": {"persist": False, "dir": str(tmp_path / "cp")},
        }
    )
    assert checkpoint_files(config) is None


def test_an_unwritable_state_folder_only_warns(workspace: Path, tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the state folder should be")
    store = CheckpointStore(on_disk=CheckpointFiles(blocked / "checkpoints", workspace))
    (workspace / "a.py").write_text("original\n")
    warning = store.record("r1", workspace / "a.py")
    assert "memory only" in warning
    (workspace / "a.py").write_text("changed\n")
    assert store.undo("r1").ok and (workspace / "a.py").read_text() == "original\n"


def test_the_kernel_that_made_the_run_does_not_undo_it_again(workspace: Path) -> None:
    """Undone elsewhere, then edited by hand: the first kernel's memory must not overwrite the new edits."""
    (workspace / "a.py").write_text("original\n")
    engine, _ = make_engine(workspace)
    assert engine.execute_tool_call("write_file", {"path": "a.py", "content": "edited\n"}).success
    assert CheckpointStore(on_disk=_saved(workspace)).undo(engine.run_id).ok  # a second kernel
    (workspace / "a.py").write_text("the person's own edit\n")
    with pytest.raises(AlreadyUndoneError):
        engine.checkpoints.undo(engine.run_id)
    assert (workspace / "a.py").read_text() == "the person's own edit\n"

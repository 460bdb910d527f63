"""Undo through the engine: every change a run made, by a file tool or a command, restored byte for byte.

The workspace is snapshotted into a private git store before and after each call that can change files,
so commands (`sed -i`, `ruff format`, `git mv`, `mkdir`/`touch`/`rm`, `chmod`) are undone like edits, a run
can be rewound to a step, and one file can be reverted. The person's own repository is never written to by
snapshots; undo gives back its index and reports, never rewrites, a commit.
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from architect_nb.config import load_config
from architect_nb.execution.build import build_engine
from architect_nb.execution.checkpoints.store import AlreadyUndoneError, CheckpointError, CheckpointStore
from architect_nb.tools.outcome import CallOutcome
from tests.support.engine import engine_for
from tests.support.engine import run_tool as run


def git(repo: Path, *args: str) -> str:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(repo.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    ).stdout


def tree_state(root: Path) -> dict[str, tuple[str, bytes | str]]:
    """Every file and link under `root` (not .git), with its mode and bytes (or link target)."""
    state: dict[str, tuple[str, bytes | str]] = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in [*names, *[d for d in dirs if os.path.islink(os.path.join(folder, d))]]:
            full = os.path.join(folder, name)
            rel = os.path.relpath(full, root)
            if os.path.islink(full):
                state[rel] = ("link", os.readlink(full))
            else:
                state[rel] = (oct(stat.S_IMODE(os.stat(full).st_mode)), Path(full).read_bytes())
    return state


@pytest.fixture
def project(workspace: Path) -> Path:
    (workspace / "a.py").write_text("original\n")
    (workspace / "gone.txt").write_bytes(b"\x00binary\xff")
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "mod.py").write_text("x  =  1\n")
    (workspace / "run.sh").write_text("echo hi\n")
    return workspace


# ---------------------------------------------------------------------- file tools and commands


def test_undo_restores_edits_and_what_commands_did(project: Path) -> None:
    before = tree_state(project)
    engine = engine_for(project)
    rid = engine.run_id
    run(engine, "write_file", 1, path="a.py", content="first\n")
    run(engine, "write_file", 1, path="new/deep/b.py", content="b\n")
    run(engine, "run_command", 2, command="sed -i 's/original/by sed/' a.py && rm gone.txt && mkdir made")
    run(
        engine,
        "run_command",
        3,
        command="touch made/t.txt && chmod +x run.sh && mv pkg/mod.py pkg/renamed.py",
    )
    changed = {p.relative_to(project).as_posix() for p in engine.checkpoints.files(rid)}
    assert changed == {
        "a.py",
        "new/deep/b.py",
        "gone.txt",
        "made/t.txt",
        "run.sh",
        "pkg/mod.py",
        "pkg/renamed.py",
    }
    report = engine.checkpoints.undo(rid)
    assert report.ok, str(report)
    assert tree_state(project) == before  # bytes, modes, deleted files back, created files gone
    assert not (project / "new").exists() and not (project / "made").exists()
    assert "restored 4 file(s), removed 3 created file(s)" in str(report)
    with pytest.raises(AlreadyUndoneError, match="already undone"):
        engine.checkpoints.undo(rid)


_CACHES = (
    "mkdir -p pkg/__pycache__ .pytest_cache/v .ipynb_checkpoints .jupyter"
    " && printf 'o' > pkg/__pycache__/mod.cpython-311.pyc && printf 'c' > .pytest_cache/v/lastfailed"
    " && printf 'k' > .ipynb_checkpoints/nb-checkpoint.ipynb && printf 'y' > .jupyter_ystore.db"
    " && printf 'j' > .jupyter_ystore.db-journal && printf 's' > .jupyter/collaboration_sessions.json"
)


def test_what_other_programs_write_is_not_the_agents_change_and_undo_leaves_it(project: Path) -> None:
    """Running the tests writes `__pycache__` and `.pytest_cache`; a Jupyter server writes checkpoints and its
    collaboration store. None is the agent's change: not listed, not snapshotted, left as it is by undo."""
    engine = engine_for(project)
    result = run(engine, "run_command", 1, command=f"{_CACHES} && printf 'mine' > a.py")
    assert list(result.changed_files) == ["a.py"]
    assert {p.relative_to(project).as_posix() for p in engine.checkpoints.files(engine.run_id)} == {"a.py"}
    report = engine.checkpoints.undo(engine.run_id)
    assert report.ok and "restored 1 file(s)" in str(report) and "removed" not in str(report), str(report)
    assert (project / "a.py").read_text() == "original\n"
    assert (project / "pkg/__pycache__/mod.cpython-311.pyc").read_bytes() == b"o"
    assert (project / ".jupyter_ystore.db").read_bytes() == b"y"
    assert (project / ".jupyter/collaboration_sessions.json").read_bytes() == b"s"


def test_a_file_tool_that_names_another_programs_file_is_undone_and_the_list_can_be_emptied(
    project: Path,
) -> None:
    engine = engine_for(project)
    run(engine, "write_file", 1, path="pkg/__pycache__/note.txt", content="written by the agent\n")
    assert engine.checkpoints.undo(engine.run_id).ok
    assert not (project / "pkg/__pycache__").exists()

    everything = engine_for(project, **{"checkpoints.others": []})
    result = run(everything, "run_command", 1, command=_CACHES)
    assert set(result.changed_files) == {
        "pkg/__pycache__/mod.cpython-311.pyc",
        ".pytest_cache/v/lastfailed",
        ".ipynb_checkpoints/nb-checkpoint.ipynb",
        ".jupyter_ystore.db",
        ".jupyter_ystore.db-journal",
        ".jupyter/collaboration_sessions.json",
    }


def test_permission_bits_of_a_changed_file_are_kept_and_the_executable_bit_restored(project: Path) -> None:
    (project / "a.py").chmod(0o640)
    (project / "tool.sh").write_text("#!/bin/sh\n")
    (project / "tool.sh").chmod(0o750)
    engine = engine_for(project)
    run(
        engine,
        "run_command",
        command="sed -i 's/original/changed/' a.py && chmod -x tool.sh && chmod +x run.sh",
    )
    assert engine.checkpoints.undo(engine.run_id).ok
    assert stat.S_IMODE((project / "a.py").stat().st_mode) == 0o640
    assert stat.S_IMODE((project / "tool.sh").stat().st_mode) == 0o750
    assert not os.access(project / "run.sh", os.X_OK)


def test_a_formatter_run_by_a_command_is_undone(project: Path) -> None:
    ruff = shutil.which("ruff")
    assert ruff is not None, "ruff is a dev dependency"
    engine = engine_for(project)
    run(engine, "run_command", command=f"{ruff} format pkg/mod.py")
    assert (project / "pkg" / "mod.py").read_text() == "x = 1\n"
    assert engine.checkpoints.undo(engine.run_id).ok
    assert (project / "pkg" / "mod.py").read_text() == "x  =  1\n"


def test_the_tool_result_says_what_the_call_changed(project: Path) -> None:
    engine = engine_for(project)
    result = run(engine, "run_command", command="echo new > n.txt && rm gone.txt")
    assert result.changed_files == ["gone.txt", "n.txt"]
    assert run(engine, "read_file", path="a.py").changed_files == []  # read-only: no snapshot


def test_files_the_person_changed_since_are_conflicts_and_left_alone(project: Path) -> None:
    engine = engine_for(project)
    run(engine, "write_file", path="a.py", content="agent\n")
    run(engine, "run_command", command="echo agent > pkg/mod.py")
    (project / "a.py").write_text("the person's own edit\n")
    report = engine.checkpoints.undo(engine.run_id)
    assert report.conflicts == ["a.py"] and not report.ok
    assert "Left alone, because they changed since the run: a.py" in str(report)
    assert (project / "a.py").read_text() == "the person's own edit\n"
    assert (project / "pkg" / "mod.py").read_text() == "x  =  1\n"  # the rest is undone
    assert "Run the undo again" in str(report)
    # The person puts back what the run left; the same undo, run again, finishes the job and only then is
    # the run marked undone.
    (project / "a.py").write_text("agent\n")
    again = engine.checkpoints.undo(engine.run_id)
    assert again.ok and again.restored == ["a.py"], str(again)
    assert (project / "a.py").read_text() == "original\n" and (
        project / "pkg" / "mod.py"
    ).read_text() == "x  =  1\n"
    with pytest.raises(AlreadyUndoneError):
        engine.checkpoints.undo(engine.run_id)


def test_rewind_to_a_step_and_revert_one_file(project: Path) -> None:
    engine = engine_for(project)
    rid = engine.run_id
    run(engine, "write_file", 1, path="a.py", content="step 1\n")
    run(engine, "write_file", 2, path="a.py", content="step 2\n")
    run(engine, "run_command", 2, command="echo two > two.txt")
    run(engine, "run_command", 3, command="echo three > three.txt && echo 3 >> pkg/mod.py")
    assert [s.step for s in engine.checkpoints.steps(rid)] == [1, 2, 2, 3]
    with pytest.raises(CheckpointError, match=r"no step of run \w+ from step 9 on changed files"):
        engine.checkpoints.undo(rid, from_step=9)
    rewound = engine.checkpoints.undo(rid, from_step=2)
    assert rewound.ok, str(rewound)
    assert (project / "a.py").read_text() == "step 1\n"  # as it was just before step 2
    assert not (project / "two.txt").exists() and not (project / "three.txt").exists()
    assert (project / "pkg" / "mod.py").read_text() == "x  =  1\n"
    with pytest.raises(AlreadyUndoneError, match="already rewound to before step 2"):
        engine.checkpoints.undo(rid, from_step=3)
    reverted = engine.checkpoints.undo(rid, path="a.py")  # review: Revert on one file
    assert reverted.ok and (project / "a.py").read_text() == "original\n"
    with pytest.raises(AlreadyUndoneError, match=r"a\.py was already reverted"):
        engine.checkpoints.undo(rid, path="a.py")
    with pytest.raises(CheckpointError, match=r"did not change nope\.txt"):
        engine.checkpoints.undo(rid, path="nope.txt")


def test_review_lists_each_changed_file_with_its_diff(project: Path) -> None:
    engine = engine_for(project)
    run(engine, "run_command", command="echo new > n.txt && rm gone.txt && echo more >> a.py")
    changes = {c.path: c for c in engine.checkpoints.review(engine.run_id)}
    assert {p: c.status for p, c in changes.items()} == {
        "a.py": "modified",
        "gone.txt": "deleted",
        "n.txt": "added",
    }
    assert "+more" in changes["a.py"].diff and "+new" in changes["n.txt"].diff


@pytest.mark.parametrize("name", ["two\nlines.txt", "ends in cr\r", '"quoted".txt', "plain.txt"])
def test_a_name_git_reads_as_a_line_reverts_and_conflicts_like_any(project: Path, name: str) -> None:
    """`git hash-object --stdin-paths` splits on newlines, drops a trailing CR and unquotes a leading '"':
    such names are hashed without it, so a revert finds the file as the run left it, or changed since."""
    engine = engine_for(project)
    rid = engine.run_id
    run(engine, "run_command", command=f"printf 'made\\n' > {shlex.quote(name)} && printf 'more\\n' >> a.py")
    assert (project / name).read_bytes() == b"made\n"
    reverted = engine.checkpoints.undo(rid, path=name)
    assert reverted.ok and reverted.removed == [name], str(reverted)
    assert not (project / name).exists() and (project / "a.py").read_text() == "original\nmore\n"

    other = engine_for(project)
    run(other, "run_command", command=f"printf 'made\\n' > {shlex.quote(name)}")
    (project / name).write_bytes(b"the person's own\n")
    refused = other.checkpoints.undo(other.run_id, path=name)
    assert refused.conflicts == [name] and (project / name).read_bytes() == b"the person's own\n"


# ---------------------------------------------------------------------- hostile changes


def test_a_folder_replaced_by_a_link_comes_back_and_nothing_outside_is_touched(
    project: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "not-the-workspace"
    outside.mkdir()
    (outside / "mod.py").write_text("outside\n")
    engine = engine_for(project)
    run(engine, "run_command", command=f"rm -r pkg && ln -s {outside} pkg")
    assert engine.checkpoints.undo(engine.run_id).ok
    assert not (project / "pkg").is_symlink() and (project / "pkg" / "mod.py").read_text() == "x  =  1\n"
    assert (outside / "mod.py").read_text() == "outside\n"


def test_a_link_swapped_in_after_the_run_carries_no_write_outside(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "not-the-workspace"
    outside.mkdir()
    (outside / "mod.py").write_text("outside\n")
    engine = engine_for(project)
    run(engine, "write_file", path="pkg/mod.py", content="edited\n")
    run(engine, "write_file", path="keep.txt", content="new\n")
    shutil.rmtree(project / "pkg")
    (project / "pkg").symlink_to(outside, target_is_directory=True)  # the person, or a later command
    report = engine.checkpoints.undo(engine.run_id)
    assert (outside / "mod.py").read_text() == "outside\n"  # not overwritten through the link
    assert report.conflicts == ["pkg/mod.py"] and not (project / "keep.txt").exists()


def test_deleting_everything_and_thousands_of_files(project: Path) -> None:
    before = tree_state(project)
    engine = engine_for(project)
    run(engine, "run_command", command="find . -mindepth 1 -delete")
    assert list(project.iterdir()) == []
    run(engine, "run_command", step=2, command="mkdir many && cd many && seq 1 3000 | xargs touch")
    report = engine.checkpoints.undo(engine.run_id)
    assert report.ok, str(report)[:500]
    assert tree_state(project) == before and not (project / "many").exists()


def test_large_files_are_not_covered_and_the_run_says_so(project: Path) -> None:
    (project / "old.bin").write_bytes(b"\0" * 300)
    engine = engine_for(project, **{"checkpoints.max_file_bytes": 100})
    run(engine, "run_command", command="head -c 500 /dev/zero > big.bin && echo small > small.txt")
    run(engine, "run_command", step=2, command="head -c 400 /dev/zero > old.bin")
    summary = engine.checkpoints.summary(engine.run_id)
    assert "Not covered: big.bin (500 bytes, over the 100 bytes limit per file)" in summary
    assert "old.bin (300 bytes, over the 100 bytes limit per file)" in summary
    assert "big.bin" in engine.checkpoints.coverage_note(engine.run_id)
    report = engine.checkpoints.undo(engine.run_id)
    # The file the run created is gone again; the one it overwrote cannot come back, and the report says so.
    assert not (project / "big.bin").exists() and not (project / "small.txt").exists()
    assert (project / "old.bin").stat().st_size == 400
    assert "big.bin" in report.removed
    assert "Not restored: old.bin (300 bytes, over the 100 bytes limit per file)" in str(report)


def test_ignored_paths_are_outside_snapshots_unless_included(project: Path) -> None:
    (project / ".gitignore").write_text("data/\n")
    (project / "data").mkdir()
    (project / "data" / "raw.csv").write_text("1,2\n")
    engine = engine_for(project)
    run(engine, "run_command", command="echo 3,4 >> data/raw.csv")
    assert engine.checkpoints.files(engine.run_id) == []  # .gitignore'd: not covered
    included = engine_for(project, **{"checkpoints.include": ["data/*.csv"]})
    run(included, "run_command", command="echo 5,6 >> data/raw.csv")
    assert included.checkpoints.undo(included.run_id).ok
    assert (project / "data" / "raw.csv").read_text() == "1,2\n3,4\n"


def test_an_unwritable_state_folder_makes_commands_ask_and_yolo_runs_uncovered(
    project: Path, tmp_path: Path
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("where the state folder should be")
    overrides = {"checkpoints.dir": str(blocked / "checkpoints")}
    config = load_config(overrides={"workspace.root": str(project), **overrides}, environ={})
    from architect_nb.execution.confirmation.confirmers import ScriptedConfirmer

    asking = build_engine(config, mode="confirm-sensitive", confirmer=ScriptedConfirmer([], default="deny"))
    refused = asking.execute_tool_call("run_command", {"command": "ls"})  # safe, yet it asks now
    assert refused.outcome is CallOutcome.DENIED
    [request] = asking.confirmer.requests
    assert any("undo cannot cover this call" in r for r in request.reasons)
    yolo = build_engine(config, mode="yolo")
    result = yolo.execute_tool_call("run_command", {"command": "echo x > made.txt"})
    assert result.success and "[Undo warning: no snapshot could be taken" in result.output
    assert "Not covered (no snapshot could be taken): run_command" in yolo.checkpoints.summary(yolo.run_id)


def test_snapshots_never_touch_the_workspaces_own_git(project: Path) -> None:
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "first")
    (project / "a.py").write_text("the person's uncommitted change\n")
    git(project, "add", "a.py")  # staged by the person before the run
    (project / "run.sh").write_text("echo unstaged\n")
    status_before = git(project, "status", "--porcelain")
    index_before = (project / ".git" / "index").read_bytes()
    git_files = {p: p.stat().st_mtime_ns for p in (project / ".git").rglob("*") if p.is_file()}
    engine = engine_for(project)
    run(engine, "write_file", path="a.py", content="agent\n")
    assert {p: p.stat().st_mtime_ns for p in (project / ".git").rglob("*") if p.is_file()} == git_files
    run(
        engine,
        "run_command",
        step=2,
        command="git mv gone.txt moved.txt && echo n > new.py && git add new.py",
    )
    report = engine.checkpoints.undo(engine.run_id)
    assert report.ok, str(report)
    assert "The git index (what was staged) is as it was before the run." in str(report)
    assert (project / ".git" / "index").read_bytes() == index_before
    assert git(project, "status", "--porcelain") == status_before
    assert (project / "a.py").read_text() == "the person's uncommitted change\n"


def test_reverting_one_file_the_run_staged_says_the_index_still_holds_it(project: Path) -> None:
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "first")
    engine = engine_for(project)
    run(engine, "run_command", command="echo agent > a.py && git add a.py")
    run(engine, "write_file", step=2, path="b.txt", content="b\n")
    staged = (project / ".git" / "index").read_bytes()
    report = engine.checkpoints.undo(engine.run_id, path="a.py")
    assert report.ok and (project / "a.py").read_text() == "original\n"
    assert "the staged version may still be the run's: check `git status`" in str(report)
    assert (project / ".git" / "index").read_bytes() == staged  # never edited entry by entry
    quiet = engine.checkpoints.undo(engine.run_id, path="b.txt")  # a step that staged nothing
    assert quiet.ok and "staged" not in str(quiet)


def test_a_commit_made_by_the_run_is_reported_not_rewritten(project: Path) -> None:
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "first")
    head = git(project, "rev-parse", "HEAD").strip()
    engine = engine_for(project)
    env = "GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@x GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@x"
    run(engine, "run_command", command=f"echo c >> a.py && git add a.py && {env} git commit -qm agent")
    report = engine.checkpoints.undo(engine.run_id)
    assert "committed or moved a branch" in str(report) and "undo does not rewrite git history" in str(report)
    assert git(project, "rev-parse", "HEAD").strip() != head  # reported, not rewritten
    assert (project / "a.py").read_text() == "original\n"  # the files are back


# ---------------------------------------------------------------------- saved, and read after a restart


def test_a_later_store_undoes_a_saved_run_once(project: Path) -> None:
    engine = engine_for(project)
    run(engine, "run_command", command="echo changed > a.py && rm gone.txt")
    files = engine.checkpoints.on_disk
    assert files is not None
    later = CheckpointStore(on_disk=files)  # nothing in memory: as after a kernel restart
    assert later.undo(engine.run_id).ok
    assert (project / "a.py").read_text() == "original\n" and (project / "gone.txt").exists()
    with pytest.raises(AlreadyUndoneError):
        CheckpointStore(on_disk=files).undo(engine.run_id)
    with pytest.raises(AlreadyUndoneError):
        engine.checkpoints.undo(engine.run_id)  # the kernel that made it knows it from the disk too


def test_failed_and_dry_run_calls_leave_nothing_to_undo(project: Path) -> None:
    before = tree_state(project)
    engine = engine_for(project)
    failed = {
        "edit_file": {"path": "a.py", "old_str": "not in the file", "new_str": "x"},
        "apply_patch": {"path": "a.py", "patch": "@@ -1 +1 @@\n-not in the file\n+x\n"},
        "write_file": {"path": "../escape.txt", "content": "x"},
        "run_command": {"command": "exit 3"},
    }
    for step, (tool, arguments) in enumerate(failed.items(), 1):
        result = engine.execute_tool_call(tool, arguments, step=step)
        assert not result.success and result.error, (tool, result.output)
    assert engine.checkpoints.steps(engine.run_id) == []
    assert engine.checkpoints.files(engine.run_id) == []
    assert engine.checkpoints.undo(engine.run_id).restored == []
    assert tree_state(project) == before and not (project.parent / "escape.txt").exists()

    config = load_config(overrides={"workspace.root": str(project)}, environ={})
    dry = build_engine(config, mode="yolo", dry_run=True)
    assert dry.execute_tool_call("write_file", {"path": "a.txt", "content": "x"}).success
    assert dry.execute_tool_call("run_command", {"command": "touch x"}).success
    assert dry.checkpoints.steps(dry.run_id) == [] and dry.checkpoints.files(dry.run_id) == []
    assert dry.checkpoints.undo(dry.run_id).restored == []
    assert tree_state(project) == before

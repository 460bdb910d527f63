from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from architect_nb.paths.validators import PathTraversalError, validate_path, visible


def test_relative_paths_resolve_inside(workspace: Path) -> None:
    (workspace / "src").mkdir()
    assert validate_path("src/app.py", workspace) == workspace / "src" / "app.py"
    assert validate_path("./src/../src/app.py", workspace) == workspace / "src" / "app.py"
    assert validate_path(".", workspace) == workspace


def test_absolute_path_inside_is_allowed(workspace: Path) -> None:
    assert validate_path(str(workspace / "a.txt"), workspace) == workspace / "a.txt"


@pytest.mark.parametrize(
    "path",
    ["..", "../outside/secret.txt", "src/../../outside/secret.txt", "/etc/passwd", "/", "//etc/passwd"],
)
def test_escapes_are_refused(workspace: Path, path: str) -> None:
    with pytest.raises(PathTraversalError, match="escapes the workspace"):
        validate_path(path, workspace)


def test_sibling_with_common_prefix_is_outside(workspace: Path) -> None:
    sibling = workspace.parent / (workspace.name + "-evil")
    sibling.mkdir()
    with pytest.raises(PathTraversalError):
        validate_path(str(sibling / "x"), workspace)
    with pytest.raises(PathTraversalError):
        validate_path(f"../{sibling.name}/x", workspace)


def test_tilde_is_refused_not_expanded(workspace: Path) -> None:
    with pytest.raises(PathTraversalError, match="'~' is not expanded"):
        validate_path("~/.ssh/id_rsa", workspace)


def test_symlink_to_outside_file_and_folder(workspace: Path, outside: Path) -> None:
    (workspace / "file_link").symlink_to(outside / "secret.txt")
    (workspace / "dir_link").symlink_to(outside)
    for path in ("file_link", "dir_link/secret.txt", "dir_link/new.txt", "dir_link"):
        with pytest.raises(PathTraversalError, match="escapes"):
            validate_path(path, workspace)


def test_dangling_symlink_pointing_outside(workspace: Path, outside: Path) -> None:
    (workspace / "dangling").symlink_to(outside / "not-yet.txt")
    with pytest.raises(PathTraversalError, match="escapes"):
        validate_path("dangling", workspace)


def test_symlink_chain_and_loop(workspace: Path, outside: Path) -> None:
    (workspace / "hop2").symlink_to(outside / "secret.txt")
    (workspace / "hop1").symlink_to(workspace / "hop2")
    with pytest.raises(PathTraversalError):
        validate_path("hop1", workspace)
    (workspace / "loop_a").symlink_to(workspace / "loop_b")
    (workspace / "loop_b").symlink_to(workspace / "loop_a")
    # A loop never resolves outside; whatever realpath makes of it, it must not raise anything but our error.
    with contextlib.suppress(PathTraversalError):
        validate_path("loop_a", workspace)


def test_symlink_inside_workspace_is_fine(workspace: Path) -> None:
    (workspace / "real.txt").write_text("x")
    (workspace / "alias.txt").symlink_to("real.txt")
    assert validate_path("alias.txt", workspace) == workspace / "real.txt"


def test_workspace_root_given_through_a_symlink(tmp_path: Path, workspace: Path) -> None:
    link_root = tmp_path / "ws-link"
    link_root.symlink_to(workspace)
    assert validate_path("a.txt", link_root) == workspace / "a.txt"


def test_hard_link_is_refused(workspace: Path, outside: Path) -> None:
    os.link(outside / "secret.txt", workspace / "hard.txt")
    with pytest.raises(PathTraversalError, match="hard link"):
        validate_path("hard.txt", workspace)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("a\x00b", "NUL"),
        ("a\nb.py", "U\\+000A"),
        ("evil\u202etxt.py", "U\\+202E"),
        ("zero\u200bwidth.py", "U\\+200B"),
        ("bom\ufeff.py", "U\\+FEFF"),
        ("x" * 5000, "limit"),
    ],
)
def test_malformed_paths(workspace: Path, path: str, message: str) -> None:
    with pytest.raises(PathTraversalError, match=message):
        validate_path(path, workspace)


def test_non_string_path(workspace: Path) -> None:
    with pytest.raises(PathTraversalError, match="string"):
        validate_path(b"a.txt", workspace)  # type: ignore[arg-type]


def test_unicode_names_that_are_just_text_are_fine(workspace: Path) -> None:
    assert validate_path("données/café.py", workspace).name == "café.py"


def test_visible_escapes_hidden_characters() -> None:
    assert visible("a\u202eb\x1b[31mc\u200b") == "a\\u202eb\\x1b[31mc\\u200b"

"""What the sandbox hides and how its bubblewrap command is built: real folders, no bubblewrap needed except
where the argv is built (it is probed first)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from architect_nb.config import SandboxConfig
from architect_nb.paths.globs import PathGlobs
from architect_nb.tools.commands import sandbox as sandbox_module
from architect_nb.tools.commands import workspace_scan
from architect_nb.tools.commands.process import run_process
from architect_nb.tools.commands.sandbox import (
    Sandbox,
    SandboxUnavailable,
    prepare_sandbox,
    sandbox_note,
    sandbox_summary,
    start_failure,
)
from architect_nb.tools.commands.sandbox_paths import hidden_paths
from architect_nb.tools.commands.workspace_scan import ScanLimitError, WorkspaceMasks, WorkspaceScanner
from tests.support.sandbox import require_bwrap


@pytest.fixture
def visible_home() -> Iterator[Path]:
    """A folder the sandbox can see (under /var/tmp; its /tmp is private), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="architect-sandbox-test-", dir="/var/tmp"))
    yield Path(os.path.realpath(folder))
    shutil.rmtree(folder, ignore_errors=True)


def scan_workspace(root: Path, sensitive: PathGlobs, protected: PathGlobs) -> WorkspaceMasks:
    return WorkspaceScanner(root, sensitive, protected).scan()


def test_scan_finds_sensitive_and_protected_paths(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("x")
    (tmp_path / "src" / "deep").mkdir(parents=True)
    (tmp_path / "src" / "deep" / "KEY.PEM").write_text("x")  # patterns ignore case
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "a").write_text("x")
    (tmp_path / "vault").mkdir()
    (tmp_path / "vault" / "b").write_text("x")
    (tmp_path / "data" / "raw").mkdir(parents=True)
    (tmp_path / "data" / "raw" / "a.csv").write_text("x")
    (tmp_path / "data" / "raw" / ".env").write_text("x")  # sensitive inside a protected folder
    (tmp_path / "ok.txt").write_text("x")
    masks = scan_workspace(
        tmp_path, PathGlobs([".env", "*.pem", "secrets", "vault/*"]), PathGlobs(["data/raw/*"])
    )
    root = str(tmp_path)
    assert sorted(masks.masked_files) == sorted(
        [f"{root}/.env", f"{root}/src/deep/KEY.PEM", f"{root}/data/raw/.env"]
    )
    # A folder that matches, or whose every new entry would match, is masked whole (new files included).
    assert sorted(masks.masked_folders) == [f"{root}/secrets", f"{root}/vault"]
    assert masks.read_only == [f"{root}/data/raw"]


def test_scan_masks_links_at_their_target_and_other_names_of_a_file(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "real-key").write_text("x")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "deploy.pem").symlink_to(outside / "real-key")
    (ws / "gone.pem").symlink_to(tmp_path / "nothing-here")  # dangling: nothing to read through it
    (ws / ".env").write_text("x")
    os.link(ws / ".env", ws / "copy.txt")
    masks = scan_workspace(ws, PathGlobs([".env", "*.pem"]), PathGlobs([]))
    assert sorted(masks.masked_files) == sorted(
        [str(outside / "real-key"), str(ws / ".env"), str(ws / "copy.txt")]
    )


def test_scan_does_nothing_without_patterns(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("x")
    assert scan_workspace(tmp_path, PathGlobs([]), PathGlobs([])).count() == 0


def test_scan_limits_are_clear_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(30):
        (tmp_path / f"k{i}.pem").write_text("x")
    monkeypatch.setattr(workspace_scan, "MAX_MASKS", 10)
    with pytest.raises(ScanLimitError, match="folder patterns"):
        scan_workspace(tmp_path, PathGlobs(["*.pem"]), PathGlobs([]))
    monkeypatch.setattr(workspace_scan, "MAX_SCANNED", 20)
    with pytest.raises(ScanLimitError, match="smaller workspace"):
        scan_workspace(tmp_path, PathGlobs(["nothing"]), PathGlobs([]))


def test_hidden_paths_exist_resolved_and_include_moved_locations(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".netrc").write_text("x")
    elsewhere = tmp_path / "kube-config"
    elsewhere.write_text("x")
    (home / ".kube").symlink_to(tmp_path / "kube-dir")
    (tmp_path / "kube-dir").mkdir()
    (home / "extra").write_text("x")
    found = hidden_paths(home, ["~/extra", "/nonexistent/x"], {"KUBECONFIG": f"{elsewhere}:relative"})
    for path in [home / ".ssh", home / ".netrc", tmp_path / "kube-dir", elsewhere, home / "extra"]:
        assert str(path) in found
    assert str(home / ".kube") not in found and "/nonexistent/x" not in found
    assert str(home / ".aws") not in found  # only what exists


def test_sandbox_config_hide_takes_paths_outside_the_workspace_only() -> None:
    assert SandboxConfig(hide=["~/notes", "/srv/keys"]).hide == ["~/notes", "/srv/keys"]
    with pytest.raises(ValueError, match=r"guardrails\.sensitive_files"):
        SandboxConfig(hide=["secrets/"])


def test_path_globs_cover_folders_whose_new_entries_would_match() -> None:
    globs = PathGlobs(["vault/*", "*.pem"])
    assert globs.covers("vault") and not globs.covers("src")
    assert PathGlobs(["*"]).covers("")
    assert globs.matches_entry("a/b/KEY.PEM", "KEY.PEM") and not globs.matches_entry("a/b.txt", "b.txt")


def test_the_argv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_bwrap()
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / ".env").write_text("x")
    sandbox = prepare_sandbox(
        ws, SandboxConfig(), sensitive_files=[".env"], cwd=ws / "sub", home=home, env={}
    )
    assert isinstance(sandbox, Sandbox)
    argv = sandbox.argv
    for flag in ("--die-with-parent", "--unshare-pid", "--unshare-net", "--proc", "--dev"):
        assert flag in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert argv[-3:] == ("--chdir", str(ws / "sub"), "--")
    bind = argv.index("--bind")
    assert argv[bind + 1 : bind + 3] == (str(ws), str(ws))
    assert argv.index("--ro-bind", bind) < argv.index(str(ws / ".env"))  # masks come after the workspace
    assert sandbox.masked == (str(ws / ".env"),)
    # HOME lies in /tmp here, which is private in the sandbox: nothing there needs hiding.
    assert str(home / ".ssh") not in argv
    assert sandbox.wrap(["true"])[-1] == "true"
    with_network = prepare_sandbox(ws, SandboxConfig(network=True), home=home, env={})
    assert isinstance(with_network, Sandbox) and "--unshare-net" not in with_network.argv


def test_hidden_folders_that_hold_the_workspace_are_left_out(tmp_path: Path) -> None:
    require_bwrap()
    home = Path("/var/tmp")  # visible in the sandbox; its `~/...` paths are made up below
    ws = tmp_path / "ws"
    ws.mkdir()
    sandbox = prepare_sandbox(ws, SandboxConfig(hide=[str(tmp_path), "/etc/hostname"]), home=home, env={})
    assert isinstance(sandbox, Sandbox)
    assert "/etc/hostname" in sandbox.hidden and str(tmp_path) not in sandbox.hidden


def test_unavailable_programs_say_how_to_install(tmp_path: Path) -> None:
    missing = prepare_sandbox(tmp_path, SandboxConfig(program="/nonexistent/bwrap"))
    assert isinstance(missing, SandboxUnavailable) and "apt install bubblewrap" in missing.reason


def test_start_failure_is_bubblewraps_own_error_only() -> None:
    assert start_failure(1, "bwrap: Can't find source path /x: No such file or directory\n") == (
        "Can't find source path /x: No such file or directory"
    )
    assert start_failure(1, "tests failed\n") is None
    assert start_failure(0, "bwrap: text printed by a command that worked") is None


def test_the_note_names_what_the_sandbox_stopped() -> None:
    sandbox = Sandbox(argv=("bwrap", "--"), network=False, hidden=("/home/me/.ssh",))
    assert "writing outside the workspace" in sandbox_note(
        "touch: cannot touch '/x': Read-only file system", sandbox
    )
    assert "reaching the network" in sandbox_note("curl: (6) Could not resolve host: example.com", sandbox)
    assert "credential folder" in sandbox_note("cat: /home/me/.ssh/id: No such file or directory", sandbox)
    assert "privileged operation" in sandbox_note("chroot: Operation not permitted", sandbox)
    assert sandbox_note("AssertionError: 1 != 2", sandbox).startswith("It ran in the OS sandbox")
    networked = Sandbox(argv=("bwrap", "--"), network=True)
    assert sandbox_note("Connection refused", networked).startswith("It ran in the OS sandbox (only the")


def test_the_scanner_reuses_settled_folders_and_sees_every_change(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x")
    for folder in (tmp_path, tmp_path / "src"):
        os.utime(folder, (1_000_000_000, 1_000_000_000))  # changed long ago: settled
    scanner = WorkspaceScanner(tmp_path, PathGlobs([".env", "*.pem"]), PathGlobs([]))
    assert scanner.scan().count() == 0
    listing = scanner._listings[f"{tmp_path}/src"]
    assert scanner.scan().count() == 0 and scanner._listings[f"{tmp_path}/src"] is listing  # not listed again
    (tmp_path / "src" / "new.pem").write_text("x")  # the folder's time moves on
    assert scanner.scan().masked_files == [str(tmp_path / "src" / "new.pem")]
    (tmp_path / "src" / ".env").write_text("x")  # again within the same second: not trusted, listed again
    assert sorted(scanner.scan().masked_files) == sorted(
        [str(tmp_path / "src" / "new.pem"), str(tmp_path / "src" / ".env")]
    )
    os.rename(tmp_path / "src", tmp_path / "lib")
    assert sorted(scanner.scan().masked_files) == sorted(
        [str(tmp_path / "lib" / "new.pem"), str(tmp_path / "lib" / ".env")]
    )
    assert f"{tmp_path}/src" not in scanner._listings  # folders that are gone are forgotten


def test_nothing_is_mounted_inside_a_masked_folder(visible_home: Path) -> None:
    require_bwrap()
    ws = visible_home  # the workspace is HOME itself, and its `.config` is sensitive
    (ws / ".config" / "gcloud").mkdir(parents=True)
    (ws / ".config" / "gcloud" / "token").write_text("x")
    (ws / "secrets" / "sub").mkdir(parents=True)
    (ws / "link.pem").symlink_to(ws / "secrets" / "sub")  # masked at its target, inside a masked folder
    config = SandboxConfig()
    sandbox = prepare_sandbox(ws, config, sensitive_files=[".config", "secrets", "*.pem"], home=ws, env={})
    assert isinstance(sandbox, Sandbox)
    assert set(sandbox.masked) == {str(ws / ".config"), str(ws / "secrets")}
    assert str(ws / ".config" / "gcloud") not in sandbox.hidden
    outcome = run_process(
        sandbox.wrap(["ls", "-A", ".config", "secrets"]), cwd=ws, env=os.environ, timeout=10, max_lines=20
    )
    assert outcome.exit_code == 0, outcome.output  # bubblewrap started: no mount inside an empty folder
    assert outcome.output.split() == [".config:", "secrets:"]


@pytest.mark.parametrize(("platform", "says"), [("darwin", "not available on macOS"), ("win32", "on win32")])
def test_other_platforms_have_no_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, platform: str, says: str
) -> None:
    sandbox_module._probe.cache_clear()
    monkeypatch.setattr(sys, "platform", platform)
    try:
        result = prepare_sandbox(tmp_path, SandboxConfig())
        assert isinstance(result, SandboxUnavailable) and says in result.reason
        assert sandbox_summary(SandboxConfig()).startswith("not available, so commands run without")
    finally:
        monkeypatch.undo()
        sandbox_module._probe.cache_clear()

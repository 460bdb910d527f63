"""The OS sandbox run_command runs in: bubblewrap (`bwrap`) on Linux. Nothing home-made confines anything.

`prepare_sandbox(workspace, config, ...)` returns a `Sandbox` (the argv prefix to put before the command) or a
`SandboxUnavailable` (why not, and what to do). Inside the sandbox:

* the workspace is read-write and the rest of the file system read-only; `/tmp` and `/run` are private and
  empty (`/run` holds sockets such as Docker's); the read roots (`workspace.read_roots`) are visible as they
  are, read-only, wherever they lie (in `/tmp` too);
* the person's credential folders (`~/.ssh`, `~/.aws`, ... see `sandbox_paths.DEFAULT_HIDDEN`) and the paths
  in `sandbox.hide` read as empty; every workspace path matching `guardrails.sensitive_files` reads as empty
  and cannot be written, and protected files are read-only (found when the command starts);
* there is no network unless `sandbox.network` (only the sandbox's own loopback), no other process is
  visible (`/proc` is the sandbox's own), no privilege can be gained (all capabilities dropped, setuid
  programs gain nothing, no nested user namespaces), and everything dies with the command.

Whether bubblewrap works here is probed once per process and program (`sandbox_unavailable_reason`).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from architect_nb.config.schema import SandboxConfig
from architect_nb.paths.globs import PathGlobs
from architect_nb.tools.commands.sandbox_paths import hidden_paths
from architect_nb.tools.commands.workspace_scan import ScanLimitError, WorkspaceScanner

__all__ = [
    "INSTALL_HINT",
    "Sandbox",
    "SandboxUnavailable",
    "prepare_sandbox",
    "sandbox_note",
    "sandbox_summary",
    "sandbox_unavailable_reason",
    "start_failure",
]

INSTALL_HINT = (
    "Install bubblewrap (Debian/Ubuntu: `sudo apt install bubblewrap`; Fedora: `sudo dnf install "
    "bubblewrap`; Arch: `sudo pacman -S bubblewrap`)"
)
#: Folders that are private and empty inside the sandbox.
_PRIVATE = ("/tmp", "/run", "/var/run")  # noqa: S108 - mounted over, not used
_NETWORK_ERRORS = re.compile(
    r"Network is unreachable|Temporary failure in name resolution|Name or service not known|"
    r"Could not resolve host|Connection refused|No address associated with hostname|getaddrinfo failed|"
    r"Failed to establish a new connection|ENETUNREACH|EAI_AGAIN|ECONNREFUSED|Cannot assign requested address"
)

_PRIVILEGE_ERRORS = re.compile(
    r"Operation not permitted|must be superuser|only root can|unshare failed|mount: .*permission denied", re.I
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Sandbox:
    """A command's sandbox, ready to start.

    Attributes:
        argv: bubblewrap and its options, ending with `--`; append the program and its arguments.
        network: Whether the command may use the network.
        masked: Sensitive workspace paths that read as empty (absolute, resolved).
        read_only: Protected workspace paths that cannot be changed.
        read_roots: The read-only data folders, visible and unwritable.
        hidden: Credential files and folders outside the workspace that read as empty.
    """

    argv: tuple[str, ...]
    network: bool
    masked: tuple[str, ...] = ()
    read_only: tuple[str, ...] = ()
    read_roots: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()

    def wrap(self, command: Sequence[str]) -> list[str]:
        """The full argv that runs `command` inside this sandbox."""
        return [*self.argv, *command]


@dataclass(frozen=True, slots=True)
class SandboxUnavailable:
    """The sandbox cannot run this command; `reason` says why and what to do."""

    reason: str


def sandbox_unavailable_reason(config: SandboxConfig) -> str | None:
    """None when bubblewrap starts on this machine with `config`; otherwise why not (probed once)."""
    return _probe(config.program, config.network)[1]


def sandbox_summary(config: SandboxConfig) -> str:
    """Where commands run, in one line: for `%architect status` and the warning at the start of a run."""
    if config.mode == "off":
        return "off (sandbox.mode: off): commands run without the OS sandbox"
    reason = sandbox_unavailable_reason(config)
    if reason is None:
        network = "network on" if config.network else "no network"
        return f"on (bubblewrap, {network}, sandbox.mode: {config.mode})"
    if config.mode == "required":
        return f"required but not available, so commands are refused: {reason}"
    return (
        f"not available, so commands run without the OS sandbox: {reason} (sandbox.mode: off silences "
        "this; required refuses commands instead)"
    )


def prepare_sandbox(
    workspace: Path,
    config: SandboxConfig,
    *,
    sensitive_files: Sequence[str] = (),
    protected_files: Sequence[str] = (),
    read_roots: Sequence[Path] = (),
    cwd: Path | None = None,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Sandbox | SandboxUnavailable:
    """The sandbox for one command run in `cwd` (default: the workspace), whatever `config.mode` says.

    Args:
        workspace: The folder the command may change.
        config: The `sandbox:` section (program, network, extra paths to hide).
        sensitive_files: `guardrails.sensitive_files`: matching workspace paths read as empty.
        protected_files: `guardrails.protected_files`: matching workspace paths are read-only.
        read_roots: `workspace.read_roots`: folders outside the workspace bound read-only (those under
            `/tmp` would otherwise be hidden by its private copy).
        cwd: Where the command starts; inside the workspace.
        home: The person's home folder (default: $HOME), whose credential folders are hidden.
        env: Where credential locations moved by variables (`KUBECONFIG`, ...) are read; default os.environ.
    """
    flags, reason = _probe(config.program, config.network)
    if flags is None:
        return SandboxUnavailable(reason or "the sandbox cannot start here")
    root = os.path.realpath(workspace)
    try:
        masks = _scanner(root, tuple(sensitive_files), tuple(protected_files)).scan()
    except ScanLimitError as exc:
        return SandboxUnavailable(f"The sandbox cannot prepare this command: {exc}.")
    empty_file, empty_folder = _empty_sources()
    home = home or Path(os.environ.get("HOME") or Path.home())
    # Nothing can be mounted inside an empty folder that is already mounted: drop what such a folder covers.
    masked_files = _uncovered(masks.masked_files, masks.masked_folders)
    masked_folders = _uncovered(masks.masked_folders, masks.masked_folders)
    hidden = _uncovered(_visible_hidden(hidden_paths(home, config.hide, env), root), masks.masked_folders)
    argv = [*flags, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for folder in _PRIVATE:
        if os.path.isdir(folder) and not os.path.islink(folder):
            argv += ["--tmpfs", folder]
    for path in _environments_in_private(os.environ if env is None else env):
        argv += ["--ro-bind", path, path]
    if config.network:
        resolver = os.path.realpath("/etc/resolv.conf")  # often a link into /run, which is now empty
        if resolver.startswith(("/run/", "/var/run/")) and os.path.isfile(resolver):
            argv += ["--ro-bind", resolver, resolver]
    data = tuple(os.path.realpath(r) for r in read_roots if os.path.isdir(r))
    for path in data:  # before the credential folders and masks, which stay hidden inside them
        argv += ["--ro-bind", path, path]
    argv += ["--bind", root, root]
    for path in masks.read_only:
        argv += ["--ro-bind", path, path]
    for path in masked_files:
        argv += ["--ro-bind", empty_file, path]
    for path in masked_folders:
        argv += ["--ro-bind", empty_folder, path]
    for path in hidden:
        argv += ["--ro-bind", empty_folder if os.path.isdir(path) else empty_file, path]
    argv += ["--chdir", os.path.realpath(cwd) if cwd is not None else root, "--"]
    return Sandbox(
        argv=tuple(argv),
        network=config.network,
        masked=tuple(masked_files + masked_folders),
        read_only=tuple(masks.read_only),
        read_roots=data,
        hidden=tuple(hidden),
    )


def start_failure(exit_code: int | None, output: str) -> str | None:
    """bubblewrap's own error when it could not set the sandbox up (the command never started), else None."""
    first = output.lstrip().split("\n", 1)[0]
    if exit_code == 1 and first.startswith("bwrap: "):
        return first.removeprefix("bwrap: ").strip()
    return None


def sandbox_note(output: str, sandbox: Sandbox) -> str:
    """One sentence for a failed sandboxed command: what the sandbox stopped, when the output shows it."""
    causes = []
    if "Read-only file system" in output:
        causes.append(
            "writing outside the workspace, to a protected file or in a read-only data folder "
            "(only the workspace is writable)"
        )
    if not sandbox.network and _NETWORK_ERRORS.search(output):
        causes.append("reaching the network (sandbox.network is off)")
    if any(path in output for path in (*sandbox.hidden, *sandbox.masked)):
        causes.append("reading a credential folder or a sensitive file (they read as empty)")
    if _PRIVILEGE_ERRORS.search(output):
        causes.append("a privileged operation (the sandbox grants no privilege, setuid programs included)")
    if causes:
        return (
            f"The OS sandbox stopped {'; and '.join(causes)}. Work inside the workspace without those, "
            "or ask the user."
        )
    network = "network on" if sandbox.network else "no network"
    return f"It ran in the OS sandbox (only the workspace writable, {network}, secrets hidden)."


# ---------------------------------------------------------------- probing bubblewrap


def _namespace_flags(program: str, network: bool, *, nested_userns: bool) -> list[str]:
    # No --new-session: run_process already starts bubblewrap in a session of its own with no controlling
    # terminal (nothing to inject keystrokes into, which is what --new-session prevents), and keeping the
    # sandbox in bubblewrap's process group lets the group kill reach its init at once. --die-with-parent
    # alone can miss: a bubblewrap killed before its child set the signal leaves that child running.
    flags = [program, "--die-with-parent", "--unshare-pid", "--unshare-ipc"]
    if not nested_userns:  # bubblewrap 0.8+: no user namespaces inside, so no mount tricks at all
        flags += ["--unshare-user", "--disable-userns"]
    flags += ["--cap-drop", "ALL"]
    if not network:
        flags.append("--unshare-net")
    return flags


@functools.cache
def _probe(program: str, network: bool) -> tuple[tuple[str, ...] | None, str | None]:
    """The namespace options that work here, or None and why bubblewrap cannot start."""
    if sys.platform == "darwin":
        return None, "The OS sandbox is not available on macOS yet (it uses bubblewrap, which is Linux-only)."
    if sys.platform != "linux":
        return None, f"There is no OS sandbox on {sys.platform}; it needs Linux and bubblewrap."
    path = shutil.which(program)
    if path is None:
        return None, f"bubblewrap ({program!r}) is not installed or not on PATH. {INSTALL_HINT}."
    true = shutil.which("true") or "/bin/true"
    problem = ""
    for nested_userns in (False, True):
        flags = _namespace_flags(path, network, nested_userns=nested_userns)
        argv = [*flags, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", true]
        try:
            proc = subprocess.run(
                argv, capture_output=True, timeout=20, stdin=subprocess.DEVNULL, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, f"bubblewrap ({path}) could not be started: {exc}. {INSTALL_HINT}."
        if proc.returncode == 0:
            return tuple(flags), None
        lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        problem = (lines[-1] if lines else f"exit {proc.returncode}")[:300]
    return None, (
        f"bubblewrap ({path}) cannot create a sandbox here ({problem}). User namespaces may be disabled "
        "(`sysctl kernel.unprivileged_userns_clone=1`, or a container that allows them)."
    )


# ---------------------------------------------------------------- what hidden paths are bound to


@functools.lru_cache(maxsize=16)
def _scanner(root: str, sensitive: tuple[str, ...], protected: tuple[str, ...]) -> WorkspaceScanner:
    """One scanner per workspace and patterns, so its folder listings are reused from command to command."""
    return WorkspaceScanner(Path(root), PathGlobs(sensitive), PathGlobs(protected))


_sources_dir: str | None = None


_SOURCES_PREFIX = "architect-sandbox-"


def _environments_in_private(env: Mapping[str, str]) -> list[str]:
    """The Python environments under `/tmp` or `/run` the command may need, read-only: this interpreter's and
    the virtualenvs whose `bin` is on PATH (a clone in /tmp with its `.venv`). The private folders stay empty
    otherwise; a PATH entry that is not a virtualenv's `bin` brings nothing back."""
    private = tuple(os.path.realpath(folder) + os.sep for folder in _PRIVATE)
    candidates = [sys.prefix, sys.base_prefix]
    for entry in env.get("PATH", "").split(os.pathsep):
        if entry and os.path.basename(entry.rstrip(os.sep)) == "bin":
            candidates.append(os.path.dirname(entry.rstrip(os.sep)))
    found: list[str] = []
    for candidate in candidates:
        real = os.path.realpath(candidate)
        is_venv = os.path.isfile(os.path.join(real, "pyvenv.cfg"))
        if real.startswith(private) and is_venv and real not in found:
            found.append(real)
    return found


def _empty_sources() -> tuple[str, str]:
    """An empty read-only file and folder, bound over what is hidden. Made once per process."""
    global _sources_dir  # noqa: PLW0603 - one private folder per process
    if _sources_dir is None or not os.path.isdir(_sources_dir):
        _remove_orphaned_sources()
        _sources_dir = tempfile.mkdtemp(prefix=f"{_SOURCES_PREFIX}{os.getpid()}-")
        Path(_sources_dir, "empty").touch(mode=0o444)
        os.mkdir(os.path.join(_sources_dir, "empty.d"), mode=0o555)
        atexit.register(_remove_sources, _sources_dir)
    return os.path.join(_sources_dir, "empty"), os.path.join(_sources_dir, "empty.d")


def _remove_orphaned_sources() -> None:
    """Remove the folders of processes that are gone: a killed kernel runs no atexit handler."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(tempfile.gettempdir()):
            pid = entry.name.removeprefix(_SOURCES_PREFIX).split("-")[0]
            if entry.name.startswith(_SOURCES_PREFIX) and pid.isdigit() and not _alive(int(pid)):
                with contextlib.suppress(OSError):
                    if entry.stat(follow_symlinks=False).st_uid == os.getuid() and entry.is_dir():
                        _remove_sources(entry.path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):  # another user's process (or no such pid at all): leave it
        return True
    return True


def _remove_sources(folder: str) -> None:
    with contextlib.suppress(OSError):
        os.chmod(os.path.join(folder, "empty.d"), 0o700)
    shutil.rmtree(folder, ignore_errors=True)


def _visible_hidden(paths: Iterable[str], workspace: str) -> list[str]:
    """The hidden paths bubblewrap must cover: not in a private folder (unless in the workspace), not one
    that holds the workspace (it would hide it), and not one inside another."""
    kept: list[str] = []
    for path in paths:
        inside_workspace = _under(path, workspace)
        if not inside_workspace and any(_under(path, folder) for folder in _PRIVATE):
            continue
        if _under(workspace, path) or any(_under(path, other) for other in kept):
            continue
        kept.append(path)
    return kept


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _uncovered(paths: Iterable[str], folders: Sequence[str]) -> list[str]:
    """`paths` without those that lie inside one of `folders` (a path is not inside itself)."""
    return [p for p in paths if not any(p != f and _under(p, f) for f in folders)]

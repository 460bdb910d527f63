"""The OS sandbox around run_command, with real bubblewrap: every escape the issue lists is tried, from a
command run through the real engine, and must fail inside the sandbox with nothing outside changed.

HOME is a temporary folder under /var/tmp (the sandbox's /tmp is private, so a HOME there would be out of
sight anyway and prove nothing), holding fake credentials; the person's real ~ is never read or written.
"""

from __future__ import annotations

import hashlib
import http.server
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from architect_nb.config import SandboxConfig
from architect_nb.config.schema import AppConfig
from architect_nb.execution.build import build_engine
from architect_nb.execution.confirmation.confirmers import ScriptedConfirmer
from architect_nb.execution.engine import ExecutionEngine
from architect_nb.tools.base import ToolResult
from architect_nb.tools.commands.process import run_process
from architect_nb.tools.commands.sandbox import (
    Sandbox,
    _environments_in_private,
    prepare_sandbox,
    sandbox_summary,
    start_failure,
)
from tests.support.sandbox import require_bwrap

# Slow, left out of `make test-unit`: commands run in real bubblewrap.
pytestmark = pytest.mark.slow

SECRET = "SECRET-VALUE-7f3a9c"
SSH_KEY = "SSH-PRIVATE-KEY-5d1e0b"
AWS_KEY = "AWS-SECRET-KEY-9a8b7c"
NETRC = "NETRC-PASSWORD-4c4c4c"
OUTSIDE = "OUTSIDE-FILE-2b2b2b"
# Not in any sensitive file: the values of those are redacted from every output, sandbox or not.
FRESH = "FRESH-VALUE-0e0e0e"


@pytest.fixture(autouse=True)
def _bwrap() -> None:
    require_bwrap()


@pytest.fixture
def visible_tmp() -> Iterator[Path]:
    """A temporary folder the sandbox can see (read-only): under /var/tmp, not the private /tmp."""
    folder = Path(tempfile.mkdtemp(prefix="architect-sandbox-test-", dir="/var/tmp"))
    yield Path(os.path.realpath(folder))
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def home(visible_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = visible_tmp / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(SSH_KEY + "\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text(f"[default]\naws_secret_access_key = {AWS_KEY}\n")
    (home / ".netrc").write_text(f"machine example.invalid login me password {NETRC}\n")
    (home / ".bashrc").write_text("# the person's own\n")
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def outside(visible_tmp: Path) -> Path:
    folder = visible_tmp / "outside"
    folder.mkdir()
    (folder / "existing.txt").write_text(OUTSIDE + "\n")
    return folder


@pytest.fixture
def project(workspace: Path) -> Path:
    """A workspace with secrets in every shape the guardrails' patterns cover."""
    (workspace / ".env").write_text(f"API_TOKEN={SECRET}\n")
    (workspace / "config").mkdir()
    (workspace / "config" / "server.pem").write_text(f"-----BEGIN PRIVATE KEY-----\n{SECRET}\n")
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "token.txt").write_text(SECRET + "\n")
    os.link(workspace / ".env", workspace / "backup.txt")  # another name for the same file
    (workspace / "data" / "raw").mkdir(parents=True)
    (workspace / "data" / "raw" / "a.csv").write_text("x,y\n1,2\n")
    (workspace / "notes.md").write_text("nothing secret here\n")
    return workspace


def engine_for(workspace: Path, confirm: str = "yolo", **sandbox: Any) -> ExecutionEngine:
    """An engine on `workspace` with the guardrails' patterns; `sandbox` is the `sandbox:` section."""
    config = AppConfig.model_validate(
        {
            "workspace": {"root": str(workspace)},
            "guardrails": {
                "sensitive_files": [".env", "*.pem", "secrets"],
                "protected_files": ["data/raw/*"],
            },
            "sandbox": sandbox,
        }
    )
    return build_engine(config, mode=confirm, confirmer=ScriptedConfirmer(default="y"))


def run(engine: ExecutionEngine, command: str, **args: Any) -> ToolResult:
    return engine.execute_tool_call("run_command", {"command": command, **args})


def snapshot(*folders: Path) -> dict[str, str]:
    """Every file under `folders` with a hash of its bytes, and every folder: to prove nothing changed."""
    seen: dict[str, str] = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            seen[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
    return seen


def shown(result: ToolResult) -> str:
    return f"{result.output}\n{result.error or ''}"


# ---------------------------------------------------------------- writing outside the workspace


def test_the_workspace_is_writable_and_commands_are_marked_sandboxed(project: Path) -> None:
    result = run(engine_for(project), "echo made > made.txt && cat made.txt notes.md")
    assert result.success and "made" in result.output and "nothing secret here" in result.output, result
    assert result.metadata["sandboxed"] is True
    assert (project / "made.txt").read_text() == "made\n"


@pytest.mark.parametrize(
    "command",
    [
        "echo pwned > {outside}/new.txt",
        "echo pwned >> {outside}/existing.txt",
        "rm -f {outside}/existing.txt",
        "mv {outside}/existing.txt {outside}/moved.txt",
        "touch {home}/.bashrc_pwned",
        "echo 'alias ls=rm' >> {home}/.bashrc",
        "mkdir {home}/.config-pwned",
        "cp notes.md /etc/architect-pwned",
    ],
)
def test_writes_outside_the_workspace_fail_and_change_nothing(
    project: Path, home: Path, outside: Path, command: str
) -> None:
    before = snapshot(home, outside, project.parent)
    result = run(engine_for(project), command.format(outside=outside, home=home))
    assert not result.success
    assert "The OS sandbox stopped writing outside the workspace" in (result.error or ""), result
    assert snapshot(home, outside, project.parent) == before
    assert not Path("/etc/architect-pwned").exists()


def test_above_the_workspace_is_read_only(visible_tmp: Path) -> None:
    workspace = visible_tmp / "ws"
    workspace.mkdir()
    result = run(engine_for(workspace), "cd .. && touch pwned")
    assert not result.success and "Read-only file system" in result.output, result
    assert not (visible_tmp / "pwned").exists()


def test_tmp_is_private_and_writable(project: Path) -> None:
    name = f"architect-scratch-{os.getpid()}"
    result = run(engine_for(project), f"echo scratch > /tmp/{name} && cat /tmp/{name} && ls -A /tmp")
    assert result.success and result.output.split("\n")[1] == "scratch", result
    # Only the scratch file, and the folders bubblewrap made to reach a workspace (or this test's virtualenv,
    # in a clone under /tmp) that lies under /tmp.
    reached = [project, *map(Path, _environments_in_private(os.environ))]
    leading = {path.parts[2] for path in reached if path.parts[1] == "tmp"}
    assert set(result.output.split("\n")[2:]) == {name} | leading, result
    assert len(os.listdir("/tmp")) > len(leading) + 1  # the host's /tmp holds more, none of it shown
    assert not Path("/tmp", name).exists()


def test_a_virtualenv_under_tmp_on_path_is_seen_read_only_and_nothing_else_of_tmp(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A clone in /tmp runs its tools from its `.venv` there: the sandbox's private /tmp shows that virtualenv
    (read-only), and a PATH folder that is not a virtualenv's `bin` stays out."""
    scratch = Path(tempfile.mkdtemp(prefix="architect-venv-test-", dir="/tmp"))
    try:
        venv, plain = scratch / "venv", scratch / "plain"
        for folder in (venv / "bin", plain / "bin"):
            folder.mkdir(parents=True)
            tool = folder / f"{folder.parent.name}-tool"
            tool.write_text("#!/bin/sh\necho ran\n")
            tool.chmod(0o755)
        (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
        path = os.pathsep.join([str(venv / "bin"), str(plain / "bin"), os.environ["PATH"]])
        monkeypatch.setenv("PATH", path)
        result = run(engine_for(project), "venv-tool")
        assert result.success and result.output.splitlines()[-1] == "ran", result
        assert not run(engine_for(project), "plain-tool").success
        written = run(engine_for(project), f"touch {venv}/bin/new")
        assert not written.success and not (venv / "bin" / "new").exists(), written
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def test_a_notebook_can_be_executed_in_the_sandbox(project: Path, home: Path) -> None:
    """nbconvert starts a kernel: its connection file goes to the sandbox's /tmp (~/.local/share/jupyter is
    hidden) and it talks to it over the sandbox's own loopback."""
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("print(6 * 7)")]
    nbformat.write(notebook, project / "n.ipynb")
    command = "jupyter nbconvert --to notebook --execute n.ipynb --output out.ipynb"
    result = run(engine_for(project), command, timeout=120)
    assert result.success and result.metadata["sandboxed"] is True, result
    assert "42" in (project / "out.ipynb").read_text()


# ---------------------------------------------------------------- credential folders


@pytest.mark.parametrize(
    "command",
    [
        "cat ~/.ssh/id_ed25519",
        "cat ~/.aws/credentials",
        "cat ~/.netrc",
        "ls -a ~/.ssh ~/.aws; cat ~/.ssh/* ~/.aws/*",
        "grep -r -a -h -e SSH -e AWS -e NETRC ~",
        "find ~ -type f -exec cat {} +",
        "tar cf - -C ~ . | strings",
        'python3 -c "import pathlib; '
        "[print(p.read_text()) for p in pathlib.Path.home().rglob('*') if p.is_file()]\"",
    ],
)
def test_credential_folders_read_as_empty(project: Path, home: Path, command: str) -> None:
    result = run(engine_for(project), command)
    text = shown(result)
    assert SSH_KEY not in text and AWS_KEY not in text and NETRC not in text, text
    assert result.metadata["sandboxed"] is True
    assert (home / ".ssh" / "id_ed25519").read_text() == SSH_KEY + "\n"  # hidden, not harmed


def test_a_failed_read_of_a_hidden_folder_says_the_sandbox_stopped_it(project: Path, home: Path) -> None:
    result = run(engine_for(project), "cat ~/.ssh/id_ed25519")
    assert not result.success
    assert "reading a credential folder or a sensitive file" in (result.error or ""), result


def test_sandbox_hide_adds_paths(project: Path, home: Path) -> None:
    (home / "notes-with-keys.txt").write_text(FRESH + "\n")
    result = run(engine_for(project, hide=["~/notes-with-keys.txt"]), "cat ~/notes-with-keys.txt")
    assert result.success and FRESH not in result.output, result  # reads as empty
    assert FRESH in run(engine_for(project), "cat ~/notes-with-keys.txt").output  # not hidden by default


# ---------------------------------------------------------------- sensitive files in the workspace

# None of these commands names a sensitive file, so the lexical guardrail lets them all through; and each
# hides the file name from the output filter (-h, base64, a pipe). Only the sandbox stands in the way.
SHAPES = [
    "grep -r -h -a {needle} .",
    "grep -r -a {needle} . | base64",
    "find . -type f -exec cat {{}} +",
    "find . -type f -print0 | xargs -0 cat",
    "cat ./.e* */*.p?m | base64",
    "for f in .[a-z]* */*; do cat $f; done 2>/dev/null | base64",
    "cat backup.txt",
    "ls s?crets; cat s?crets/*",
    "tar cf - . | base64",
    # Walks the tree itself and names no file or pattern (a glob such as '**' would match a protected file).
    "python3 -c \"import os; [print(open(os.path.join(d, f)).read()) for d, _, fs in os.walk('.') "
    'for f in fs]" | base64',
]


def _leaked(text: str) -> bool:
    import base64
    import binascii

    if SECRET in text:
        return True
    for line in text.splitlines():
        try:
            if SECRET.encode() in base64.b64decode(line + "=" * (-len(line) % 4)):
                return True
        except (ValueError, binascii.Error):
            continue
    joined = "".join(text.split())
    try:
        return SECRET.encode() in base64.b64decode(joined + "=" * (-len(joined) % 4))
    except (ValueError, binascii.Error):
        return False


@pytest.mark.parametrize("shape", SHAPES)
def test_no_command_reads_a_sensitive_file(project: Path, shape: str) -> None:
    command = shape.format(needle="SECRET-VALUE")
    result = run(engine_for(project), command)
    assert "Guardrail" not in (result.error or ""), result  # the lexical check did not see it
    assert not _leaked(shown(result)), (command, result)
    assert result.metadata["sandboxed"] is True
    assert result.success or "OS sandbox" in (result.error or ""), result  # a failure says where it ran


@pytest.mark.parametrize("shape", SHAPES[:-1])
def test_without_the_sandbox_the_lexical_check_refuses_the_common_shapes(project: Path, shape: str) -> None:
    """Where commands run unsandboxed, the guardrails refuse these shapes before they run
    (test_unnamed_reads.py runs each of them too, to show they read a secret)."""
    result = run(engine_for(project, mode="off"), shape.format(needle="SECRET-VALUE"))
    assert not result.success and "sensitive file" in (result.error or ""), result
    assert not _leaked(shown(result)), result


def test_without_the_sandbox_a_program_that_finds_the_file_itself_leaks(project: Path) -> None:
    """The control: a program that walks the tree itself is beyond a lexical check, and base64 is beyond
    redaction. Only the sandbox stops it."""
    result = run(engine_for(project, mode="off"), SHAPES[-1])
    assert result.metadata["sandboxed"] is False
    assert _leaked(shown(result)), result


def test_sensitive_files_cannot_be_written_removed_or_moved(project: Path) -> None:
    before = snapshot(project)
    engine = engine_for(project)
    for command in [
        "for f in ./.e*; do echo overwritten > $f; done",
        "for f in ./.e*; do rm -f $f; done",
        "for f in ./.e*; do mv $f moved; done",
        "echo overwritten > backup.txt",
        "touch s?crets/new.txt",
        "rm -rf s?crets",
    ]:
        result = run(engine, command)
        assert not result.success, (command, result)
    after = snapshot(project)
    assert after == before
    assert (project / ".env").read_text() == f"API_TOKEN={SECRET}\n"


def test_protected_files_are_read_only(project: Path) -> None:
    engine = engine_for(project)
    assert "1,2" in run(engine, "cat data/raw/a.csv").output
    # Written so that the guardrail leaves them to the sandbox (it names no protected file plainly); only the
    # sandbox stops them. Without it, the guardrail refuses each
    # (tests/unit/execution/test_protected_writes.py).
    for command in [
        "for f in data/raw/*; do echo 3,4 >> $f; done",
        "find data -name '*.csv' -delete",
        "touch data/raw/$(printf new).csv",
    ]:
        result = run(engine, command)
        assert not result.success and "Read-only file system" in result.output, (command, result)
    assert (project / "data" / "raw" / "a.csv").read_text() == "x,y\n1,2\n"
    assert not (project / "data" / "raw" / "new.csv").exists()
    assert run(engine, "touch data/other.csv").success  # next to it is writable


def test_files_created_during_the_command_are_not_masked_but_the_next_command_masks_them(
    project: Path,
) -> None:
    engine = engine_for(project)
    made = run(engine, f"printf {FRESH} > new.pe$(printf m) && cat new.*")  # the documented limit
    assert made.success and FRESH in made.output
    assert FRESH not in run(engine, "cat new.*").output


# ---------------------------------------------------------------- the network


@pytest.fixture
def server() -> Iterator[tuple[int, list[str]]]:
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"REACHED-THE-SERVER")

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1], hits
    httpd.shutdown()
    httpd.server_close()


FETCH = (
    'python3 -c "import urllib.request; '
    "print(urllib.request.urlopen('http://127.0.0.1:{port}/x', timeout=5).read())\""
)


@pytest.mark.parametrize(
    "command",
    [FETCH, "exec 3<>/dev/tcp/127.0.0.1/{port} && printf 'GET /y HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3"],
)
def test_the_network_is_off(project: Path, server: tuple[int, list[str]], command: str) -> None:
    port, hits = server
    result = run(engine_for(project), command.format(port=port))
    assert not result.success and "REACHED-THE-SERVER" not in result.output
    assert "reaching the network (sandbox.network is off)" in (result.error or ""), result
    assert hits == []


def test_network_true_lets_commands_through(project: Path, server: tuple[int, list[str]]) -> None:
    port, hits = server
    result = run(engine_for(project, network=True), FETCH.format(port=port))
    assert result.success and "REACHED-THE-SERVER" in result.output, result
    assert hits == ["/x"]


# ---------------------------------------------------------------- /proc, links, setuid, privileges


def test_proc_shows_only_the_sandbox(project: Path) -> None:
    engine = engine_for(project)
    me = os.getpid()
    listing = run(engine, "ls /proc | grep -E '^[0-9]+$'")
    assert listing.success and len(listing.output.splitlines()) <= 6, listing  # exit code line + a few pids
    for command in [f"cat /proc/{me}/environ", f"ls /proc/{me}/root/", f"cat /proc/{me}/cmdline"]:
        result = run(engine, command)
        assert not result.success and "No such file" in result.output, (command, result)
        assert "It ran in the OS sandbox" in (result.error or ""), result
    assert not run(engine, "echo 1 > /proc/sys/kernel/sysrq").success
    # The sandbox's pid 1 is its own: its root is the sandbox's, so nothing hidden shows through it.
    assert not _leaked(shown(run(engine, "cat /proc/1/root$PWD/secrets/token.txt /proc/self/root$PWD/.e*")))


def test_no_terminal_to_type_into(project: Path) -> None:
    """bubblewrap starts in a session of its own with no controlling terminal, so the sandbox cannot push
    keystrokes into the person's terminal (what --new-session guards against)."""
    for command in ["exec 3<>/dev/tty", "setsid sh -c 'exec 3<>/dev/tty'", "ls /dev/console"]:
        result = run(engine_for(project), command)
        assert not result.success, (command, result)


def test_planted_links_do_not_escape(project: Path, home: Path, outside: Path) -> None:
    (project / "escape").symlink_to(outside)
    (project / "key").symlink_to(home / ".ssh" / "id_ed25519")
    (project / "etc").symlink_to("/etc")
    engine = engine_for(project)
    before = snapshot(outside, home)
    for command in ["echo pwned > escape/new.txt", "echo pwned >> escape/existing.txt", "touch etc/pwned"]:
        result = run(engine, command)
        assert not result.success and "Read-only file system" in result.output, (command, result)
        assert "The OS sandbox stopped writing outside the workspace" in (result.error or ""), result
    assert SSH_KEY not in shown(run(engine, "cat key"))
    made = run(engine, f"ln -s {home} h && cat h/.ssh/id_ed25519; echo x > h/.bashrc")
    assert SSH_KEY not in shown(made) and not made.success
    assert snapshot(outside, home) == before


def test_setuid_programs_gain_nothing(project: Path) -> None:
    program = project / "sgrep"
    shutil.copy2(shutil.which("grep") or "/bin/grep", program)
    if os.geteuid() == 0:
        os.chown(program, 0, 0)
    program.chmod(0o4755)
    command = "./sgrep -E '^(CapEff|NoNewPrivs)' /proc/self/status"
    result = run(engine_for(project), command)
    assert result.success, result
    assert "CapEff:\t0000000000000000" in result.output and "NoNewPrivs:\t1" in result.output, result
    if os.geteuid() == 0:  # the control: outside the sandbox the same program holds privileges
        plain = run(engine_for(project, mode="off"), command)
        assert "CapEff:\t0000000000000000" not in plain.output, plain


@pytest.mark.parametrize(
    "command",
    [
        "mount -t tmpfs none s?crets",
        "umount s?crets",
        "unshare -U -m sh -c 'umount s?crets; cat s?crets/*'",
        "chroot / true",
    ],
)
def test_privileged_operations_fail(project: Path, command: str) -> None:
    result = run(engine_for(project), command)
    assert not result.success and SECRET not in shown(result), result
    error = result.error or ""
    assert "The OS sandbox stopped" in error and "a privileged operation" in error, result


# ---------------------------------------------------------------- when bubblewrap is missing or fails


def test_required_refuses_when_bubblewrap_is_missing(project: Path) -> None:
    result = run(engine_for(project, mode="required", program="/nonexistent/bwrap"), "touch ran.txt")
    assert not result.success and not (project / "ran.txt").exists()
    error = result.error or ""
    assert "sandbox.mode: required" in error and "apt install bubblewrap" in error, error
    assert "exit_code" not in result.metadata


def test_required_refuses_when_bubblewrap_cannot_start(project: Path) -> None:
    broken = shutil.which("false") or "/bin/false"
    result = run(engine_for(project, mode="required", program=broken), "touch ran.txt")
    assert not result.success and not (project / "ran.txt").exists()
    assert "cannot create a sandbox here" in (result.error or ""), result


def test_auto_degrades_with_its_message(project: Path) -> None:
    config = SandboxConfig(mode="auto", program="/nonexistent/bwrap")
    assert sandbox_summary(config).startswith("not available, so commands run without the OS sandbox")
    result = run(engine_for(project, mode="auto", program="/nonexistent/bwrap"), "touch ran.txt")
    assert result.success and (project / "ran.txt").exists()
    assert result.metadata["sandboxed"] is False


def test_a_sandbox_that_cannot_start_is_a_clear_result(project: Path) -> None:
    sandbox = prepare_sandbox(project, SandboxConfig())
    assert isinstance(sandbox, Sandbox)
    argv = [*sandbox.argv[:-1], "--ro-bind", "/nonexistent-source", "/x", "--", "touch", "ran.txt"]
    outcome = run_process(argv, cwd=project, env=os.environ, timeout=10, max_lines=50)
    problem = start_failure(outcome.exit_code, outcome.output)
    assert problem is not None and "nonexistent-source" in problem
    assert not (project / "ran.txt").exists()


def test_a_killed_sandbox_is_a_clear_result_and_leaves_nothing_running(project: Path) -> None:
    engine = engine_for(project)
    results: list[ToolResult] = []
    thread = threading.Thread(target=lambda: results.append(run(engine, "sleep 31.4159", timeout=60)))
    thread.start()
    bwrap = _wait_for(lambda: _outer_bwrap("31.4159"))
    os.kill(bwrap, signal.SIGKILL)  # only bubblewrap itself, not its group
    thread.join(timeout=20)
    assert results and not results[0].success
    assert "The sandbox was stopped by signal 9" in (results[0].error or ""), results[0]
    assert _wait_for(lambda: not _processes_with("31.4159"))


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    status = (entry / "status").read_text()
                    if "\nState:\tZ" not in status:
                        found.append(int(entry.name))
            except OSError:
                continue
    return found


def _outer_bwrap(marker: str) -> int | None:
    """The bubblewrap process our test process started (its parent is us)."""
    for pid in _processes_with(marker):
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat.rsplit(")", 1)[1].split()[1] == str(os.getpid()):
            return pid
    return None


def _wait_for(probe: Any, seconds: float = 10.0) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("timed out waiting")


def test_the_state_folder_with_its_snapshots_is_hidden(
    project: Path, visible_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Undo's snapshots hold the workspace; no sandboxed command may read them (nor the threads there)."""
    import platformdirs

    monkeypatch.setenv("XDG_STATE_HOME", str(visible_tmp / "state"))  # not under the sandbox's private /tmp
    engine = engine_for(project)
    assert run(engine, "echo more >> notes.md").success  # a snapshot before and after
    state = Path(platformdirs.user_state_dir("architect-nb"))
    assert any(state.rglob("*.git")), "the snapshot store is in the state folder"
    listed = run(engine, f"ls -a {state} | wc -l; cat {state}/checkpoints/*/manifest.json 2>&1 | head -c 300")
    assert listed.output.split("\n")[1].strip() == "2", listed  # only . and ..
    assert "steps" not in listed.output


def test_sensitive_files_never_enter_the_snapshots(project: Path) -> None:
    engine = engine_for(project, mode="off")
    assert run(engine, "echo more >> notes.md").success
    [step] = engine.checkpoints.steps(engine.run_id)
    snapshot_files = set(engine.checkpoints.shadow.entries(step.after))
    assert "notes.md" in snapshot_files and "data/raw/a.csv" in snapshot_files
    assert not {".env", "config/server.pem", "secrets/token.txt"} & snapshot_files


def test_a_killed_kernels_sandbox_folder_is_removed_by_the_next_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from architect_nb.tools.commands import sandbox

    gone = subprocess.Popen(["true"])
    gone.wait()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    orphan = tmp_path / f"architect-sandbox-{gone.pid}-abc"
    living = tmp_path / f"architect-sandbox-{os.getppid()}-def"  # pytest's parent: alive
    other = tmp_path / "architect-sandbox-notapid"
    for folder in (orphan, living, other):
        (folder / "empty.d").mkdir(parents=True)
        (folder / "empty").touch(mode=0o444)
        (folder / "empty.d").chmod(0o555)
    monkeypatch.setattr(sandbox, "_sources_dir", None)
    empty_file, empty_dir = sandbox._empty_sources()
    assert not orphan.exists() and living.exists() and other.exists()
    assert Path(empty_file).parent.name.startswith(f"architect-sandbox-{os.getpid()}-")
    assert Path(empty_file).read_bytes() == b"" and not os.listdir(empty_dir)
    sandbox._remove_sources(str(Path(empty_file).parent))
    for folder in (living, other):
        (folder / "empty.d").chmod(0o755)
